"""The errors of the data layer (:mod:`mvl.data`): missing, corrupted and undownloadable files.

Raised by :mod:`mvl.data.download` (availability, checksums, downloads), :mod:`mvl.data.formats` (structural checks)
and the loaders of :mod:`mvl.data.paper`; the message is meant for the user as is.
Implements no paper section (infrastructure).
"""

from __future__ import annotations


class DataError(Exception):
    """Base class of the data errors; the message is meant for the user as is (no stack trace needed)."""


class DataUnavailableError(DataError, FileNotFoundError):
    """Files are missing and cannot be downloaded (offline, or no mirror/cache copy)."""


class DataIntegrityError(DataError, ValueError):
    """A file failed its checksum or structural validation."""


class DataDownloadError(DataError, OSError):
    """A download failed (HTTP error, connection dropped, timeout) after all retries."""
