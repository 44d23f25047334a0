"""The ``files`` source (mvl.data.files) on malformed files: each file is written in a temporary folder, and each
error is a DataIntegrityError whose message names the file, the row or line concerned and what to change."""

from __future__ import annotations

import numpy as np
import pytest

from mvl.data.errors import DataError, DataIntegrityError
from mvl.data.files import load_files

N = 18


@pytest.fixture()
def folder(tmp_path):
    """A valid data set (a.csv, b.npy, y.npy: three classes of six) to spoil one file of."""
    rng = np.random.default_rng(0)
    np.savetxt(tmp_path / "a.csv", rng.normal(size=(N, 3)), delimiter=",", fmt="%.6f")
    np.save(tmp_path / "b.npy", rng.normal(size=(N, 2)))
    np.save(tmp_path / "y.npy", np.repeat([0, 1, 2], 6))
    return tmp_path


def _lines(path):
    return path.read_text().splitlines()


def _write_lines(path, lines):
    path.write_text("\n".join(lines) + "\n")


def _error(folder, views=None, labels="y.npy"):
    with pytest.raises(DataIntegrityError) as info:
        load_files(views or {"a": "a.csv", "b": "b.npy"}, labels, base_dir=folder)
    assert isinstance(info.value, DataError)  # what the workflow's up-front check catches
    return str(info.value)


def test_the_valid_folder_loads(folder):
    ds = load_files({"a": "a.csv", "b": "b.npy"}, "y.npy", base_dir=folder)
    assert ds.views[0].shape == (N, 3) and list(ds.y) == [0] * 6 + [1] * 6 + [2] * 6


@pytest.mark.parametrize("name", ["a.csv", "b.npy"])
def test_empty_view_file(folder, name):
    (folder / name).write_bytes(b"")
    msg = _error(folder)
    assert name in msg and "the file is empty" in msg and ("one line per sample" in msg or "np.save" in msg)


def test_empty_labels_file(folder):
    (folder / "y.csv").write_bytes(b"")
    msg = _error(folder, labels="y.csv")
    assert msg.startswith("labels ") and "y.csv" in msg and "the file is empty" in msg


def test_row_with_an_extra_field(folder):
    lines = _lines(folder / "a.csv")
    lines[6] += ",1.5"
    _write_lines(folder / "a.csv", lines)
    msg = _error(folder)
    assert msg.startswith("view a (") and "a.csv" in msg
    assert "line 7 (1-based) has 4 values, line 1 has 3" in msg and "remove the extra value" in msg


def test_row_with_a_missing_field(folder):
    lines = _lines(folder / "a.csv")
    lines[4] = ",".join(lines[4].split(",")[:2])
    _write_lines(folder / "a.csv", lines)
    msg = _error(folder)
    assert "a.csv" in msg and "rows 4 (0-based)" in msg and "line 5 (1-based) has 2 values, line 1 has 3" in msg
    assert "fill the missing one" in msg


def test_decimal_comma_with_semicolons(folder):
    X = np.random.default_rng(1).normal(size=(N, 3))
    _write_lines(folder / "a.csv", [";".join(f"{v:.4f}".replace(".", ",") for v in row) for row in X])
    msg = _error(folder)
    assert "a.csv" in msg and "not numbers" in msg and "rows 0, 1" in msg
    assert "decimal commas" in msg and "decimal point" in msg


def test_decimal_comma_quoted(folder):
    X = np.random.default_rng(1).normal(size=(N, 2))
    _write_lines(folder / "a.csv", [",".join(f'"{v:.4f}"'.replace(".", ",") for v in row) for row in X])
    msg = _error(folder)
    assert "a.csv" in msg and "rows 0, 1" in msg and "has a decimal comma" in msg and "decimal point" in msg


def test_a_word_among_numbers_names_its_row_and_value(folder):
    lines = _lines(folder / "a.csv")
    lines[9] = "1.0,n/a?,2.0"
    _write_lines(folder / "a.csv", lines)
    msg = _error(folder)
    assert "a.csv" in msg and "rows 9 (0-based)" in msg and "'n/a?' in column 1" in msg and "replace them" in msg


def test_object_dtype_labels(folder):
    np.save(folder / "y.npy", np.array(["cat", "dog", "eel"] * 6, dtype=object), allow_pickle=True)
    msg = _error(folder)
    assert "y.npy" in msg and "object array" in msg and "dtype=str" in msg


def test_object_dtype_view(folder):
    np.save(folder / "b.npy", np.ones((N, 2), dtype=object), allow_pickle=True)
    msg = _error(folder)
    assert msg.startswith("view b (") and "b.npy" in msg and "object array" in msg


def test_truncated_npy(folder):
    raw = (folder / "b.npy").read_bytes()
    (folder / "b.npy").write_bytes(raw[: len(raw) // 2])
    msg = _error(folder)
    assert "b.npy" in msg and "np.save" in msg


def test_not_utf8_csv(folder):
    (folder / "a.csv").write_bytes("x\xe9,y\n".encode("latin-1") + b"1,2\n" * N)
    msg = _error(folder)
    assert "a.csv" in msg and "UTF-8" in msg


def test_minus_one_label_is_not_read_as_a_class(folder):
    """-1 is the estimators' unlabelled marker; the files source needs every sample's class: an error."""
    y = np.repeat([0, 1, 2], 6)
    y[[4, 11]] = -1
    np.save(folder / "y.npy", y)
    msg = _error(folder)
    assert "y.npy" in msg and "label -1 in rows 4, 11 (0-based)" in msg and "'unlabelled'" in msg
    assert "give these samples their class" in msg


def test_minus_one_label_as_text(folder):
    (folder / "y.csv").write_text("label\n" + "\n".join(["cat", "dog", "-1"] * 6) + "\n")
    msg = _error(folder, labels="y.csv")
    assert "y.csv" in msg and "label -1 in rows 2, 5" in msg


def test_plus_minus_one_labels_are_two_classes(folder):
    """The binary +-1 convention: labels exactly -1 and 1 are two classes (encoded 0 and 1)."""
    np.save(folder / "y.npy", np.repeat([-1, 1], 9))
    ds = load_files({"a": "a.csv"}, "y.npy", base_dir=folder)
    assert list(ds.y) == [0] * 9 + [1] * 9 and "(-1, 1)" in ds.description


def test_one_sample_class_names_the_label(folder):
    (folder / "y.csv").write_text("label\n" + "\n".join(["cat"] * 9 + ["dog"] * 8 + ["eel"]) + "\n")
    msg = _error(folder, labels="y.csv")
    assert "y.csv" in msg and "class 'eel' has 1 sample(s), rows 17 (0-based)" in msg
    assert "add samples of it, or remove its rows" in msg


def test_single_class_names_the_label(folder):
    np.save(folder / "y.npy", np.full(N, 7))
    msg = _error(folder)
    assert "y.npy" in msg and "every sample has the label 7" in msg and "at least two classes" in msg


def test_min_per_class_follows_the_protocol(folder):
    """A protocol that needs more samples per class than a class has fails at loading, with the label."""
    np.save(folder / "y.npy", np.array(["a"] * 12 + ["b"] * 6))
    msg = str(pytest.raises(DataIntegrityError, load_files, {"a": "a.csv"}, "y.npy", base_dir=folder,
                            min_per_class=8).value)
    assert "class 'b' has 6 sample(s), rows 12, 13, 14, 15, 16 and 1 more (0-based)" in msg and "at least 8" in msg


def test_complex_view(folder):
    np.save(folder / "b.npy", np.ones((N, 2), dtype=complex))
    msg = _error(folder)
    assert "b.npy" in msg and "complex" in msg
