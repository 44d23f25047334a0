"""Structural validation of downloaded files (mvl.data.formats): distance matrices, data splits, kernels and
metadata are checked before any loader trusts them; a bad file is a DataIntegrityError naming its problem.

Fixtures are generated in the exact formats of the real files (tests/paper_fixtures.py).
"""

from __future__ import annotations

import numpy as np
import paper_fixtures as pf
import pytest

from mvl.data import download as dl
from mvl.data import formats


def _dist(n=34, seed=0):
    X = np.random.default_rng(seed).uniform(size=(n, 6))
    D = pf.chi2_dist(X)
    D = 0.5 * (D + D.T)
    np.fill_diagonal(D, 0)
    return D


@pytest.mark.parametrize("mutate, message", [
    (lambda D: D, None),
    (lambda D: D + np.triu(np.full_like(D, 0.5), 1), "not symmetric"),
    (lambda D: D - 10.0 * (D > 0), "negative"),
    (lambda D: D + np.eye(len(D)), "non-zero diagonal"),
    (lambda D: D[:, :-1], "square"),
    (lambda D: _dist(35), "multiple of 17"),
    (lambda D: D.astype(np.float32), "float64"),
    (lambda D: np.where(np.eye(len(D)) > 0, D, np.nan), "NaN"),
])
def test_distance_validator(tmp_path, mutate, message):
    D = _dist()
    path = tmp_path / "d.mat"
    pf.savemat(path, {"D_hog": mutate(D.copy()), "D_hsv": D})
    check = formats.validate_distance_matrices(("D_hog", "D_hsv"))
    if message is None:
        check(path)
    else:
        with pytest.raises(dl.DataIntegrityError, match=message):
            check(path)


def test_distance_validator_missing_variable_mismatched_shapes_and_garbage(tmp_path):
    check = formats.validate_distance_matrices(("D_hog", "D_hsv"))
    pf.savemat(tmp_path / "a.mat", {"D_hog": _dist()})
    with pytest.raises(dl.DataIntegrityError, match=r"missing variables \['D_hsv'\]"):
        check(tmp_path / "a.mat")
    pf.savemat(tmp_path / "b.mat", {"D_hog": _dist(34), "D_hsv": _dist(51)})
    with pytest.raises(dl.DataIntegrityError, match="different shapes"):
        check(tmp_path / "b.mat")
    (tmp_path / "c.mat").write_bytes(b"<html>404 not found</html>")
    with pytest.raises(dl.DataIntegrityError, match="not a readable MATLAB"):
        check(tmp_path / "c.mat")


def test_datasplits_and_caltech_validators(tmp_path):
    fs = pf.write_flowers17(tmp_path / "f", n_per_class=4)
    formats.validate_flowers17_datasplits(fs.root / "flowers17" / "datasplits.mat")
    bad = {k: v for s in (1, 2, 3) for k, v in ((f"trn{s}", [1, 2]), (f"val{s}", [2]), (f"tst{s}", [3]))}
    pf.write_datasplits_mat(tmp_path / "bad.mat", bad)
    with pytest.raises(dl.DataIntegrityError, match="overlap"):
        formats.validate_flowers17_datasplits(tmp_path / "bad.mat")
    pf.savemat(tmp_path / "k.mat", {"matrix": np.array([[1.0, 0.2], [0.5, 1.0]])})
    with pytest.raises(dl.DataIntegrityError, match="not symmetric"):
        formats.validate_caltech101_train_kernel(tmp_path / "k.mat")
    pf.savemat(tmp_path / "k2.mat", {"K": np.eye(2)})
    with pytest.raises(dl.DataIntegrityError, match="no variable 'matrix'"):
        formats.validate_caltech101_test_kernel(tmp_path / "k2.mat")
    pf.savemat(tmp_path / "m.mat", {"trainImageClasses": np.ones((1, 3)), "testImageClasses": np.ones((1, 2))})
    with pytest.raises(dl.DataIntegrityError, match="trainImageNames"):
        formats.validate_caltech101_meta(tmp_path / "m.mat")
