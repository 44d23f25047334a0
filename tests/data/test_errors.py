"""The data layer's errors (mvl.data.errors): one base class, each also the built-in error it is a kind of."""

from __future__ import annotations

from mvl.data import errors


def test_every_data_error_is_a_data_error_and_its_builtin_kind():
    assert issubclass(errors.DataUnavailableError, errors.DataError)
    assert issubclass(errors.DataUnavailableError, FileNotFoundError)
    assert issubclass(errors.DataIntegrityError, errors.DataError)
    assert issubclass(errors.DataIntegrityError, ValueError)
    assert issubclass(errors.DataDownloadError, errors.DataError)
    assert issubclass(errors.DataDownloadError, OSError)
