"""A researcher's own data through config alone (the ``files`` source, mvl.data.files): the loader against the
arrays it was given, its errors, and the README's example run end to end by the workflow."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT, copy_workflow, run_snakemake

from mvl.data.errors import DataIntegrityError
from mvl.data.files import load_files


@pytest.fixture()
def arrays():
    rng = np.random.default_rng(0)
    y = np.repeat(["cat", "dog", "eel"], 6)
    return rng.normal(size=(18, 4)), rng.normal(size=(18, 3)), y


def test_views_and_labels_are_read_as_written(arrays, tmp_path):
    """.npy, .csv (with and without a header) and labels as strings: the loader gives back the arrays."""
    A, B, y = arrays
    np.save(tmp_path / "a.npy", A)
    pd.DataFrame(B, columns=["x", "y", "z"]).to_csv(tmp_path / "b.csv", index=False)
    np.savetxt(tmp_path / "b_plain.csv", B, delimiter=",")
    pd.Series(y, name="animal").to_csv(tmp_path / "labels.csv", index=False)
    ds = load_files({"a": "a.npy", "b": "b.csv", "c": "b_plain.csv"}, "labels.csv", base_dir=tmp_path)
    assert ds.view_names == ("a", "b", "c") and ds.view_kinds == ("features",) * 3
    np.testing.assert_array_equal(ds.views[0], A)
    np.testing.assert_allclose(ds.views[1], B, rtol=1e-15)
    np.testing.assert_allclose(ds.views[2], B, rtol=1e-15)
    assert list(ds.y) == [0] * 6 + [1] * 6 + [2] * 6 and "cat, dog, eel" in ds.description


def test_parquet_view(arrays, tmp_path):
    pytest.importorskip("pyarrow", reason="Parquet files need pyarrow (in the test extra)")
    A, _, y = arrays
    pd.DataFrame(A, columns=list("abcd")).to_parquet(tmp_path / "a.parquet")
    np.save(tmp_path / "y.npy", np.arange(18) % 3)
    ds = load_files({"a": "a.parquet"}, "y.npy", base_dir=tmp_path)
    np.testing.assert_array_equal(ds.views[0], A)


def test_precomputed_kernels(arrays, tmp_path):
    A, _, y = arrays
    np.save(tmp_path / "k.npy", A @ A.T)
    np.save(tmp_path / "y.npy", np.arange(18) % 3)
    ds = load_files({"k": "k.npy"}, "y.npy", kernels=True, base_dir=tmp_path)
    assert ds.view_kinds == ("kernel",)
    np.testing.assert_array_equal(ds.views[0], A @ A.T)


@pytest.mark.parametrize("case, message", [
    ("rows", r"view a \(.*a.npy\): 17 rows, but the labels have 18"),
    ("nan", r"view a \(.*a.npy\): 2 NaN or inf values, rows 3, 7 \(0-based\)"),
    ("shape", r"view a \(.*a.npy\): expected a 2-D array \(samples x features\), got shape \(18, 2, 2\)"),
    ("kernel", r"view a \(.*a.npy\): a precomputed kernel must be \(18, 18\) \(samples x samples\), got \(18, 4\)"),
    ("label", r"labels .*y.csv: 1 missing \(NaN or empty\) labels, rows 5 \(0-based\)"),
    ("suffix", r"a.txt: unknown file type '.txt'; use one of .npy, .csv, .parquet"),
    ("text", r"view a \(.*a.csv\): holds values that are not numbers"),
])
def test_bad_files_are_named_with_their_problem(arrays, tmp_path, case, message):
    A, _, y = arrays
    views, kernels = {"a": "a.npy"}, case == "kernel"
    pd.Series(y, name="label").to_csv(tmp_path / "y.csv", index=False)
    if case == "rows":
        A = A[:-1]
    if case == "nan":
        A = A.copy()
        A[3, 1] = A[7, 0] = np.nan
    if case == "shape":
        A = A[:, :4].reshape(18, 2, 2)
    if case == "label":
        (tmp_path / "y.csv").write_text("label\n" + "\n".join("" if i == 5 else v for i, v in enumerate(y)) + "\n")
    if case == "suffix":
        views = {"a": "a.txt"}
        (tmp_path / "a.txt").write_text("1")
    if case == "text":
        views = {"a": "a.csv"}
        pd.DataFrame({"x": ["1"] * 17 + ["one"]}).to_csv(tmp_path / "a.csv", index=False)
    np.save(tmp_path / "a.npy", A)
    with pytest.raises(DataIntegrityError, match=message):
        load_files(views, "y.csv", kernels=kernels, base_dir=tmp_path)


def _readme_example():
    """The user guide's example (docs/guide/own_data.md): the Python block that writes the data, the config block,
    the command."""
    text = (ROOT / "docs" / "guide" / "own_data.md").read_text()
    section = re.split(r"\n##+ ", text.split("## Through the workflow", 1)[1], maxsplit=1)[0]
    python = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    config = re.search(r"```yaml\n# config/my_data.yaml\n(.*?)```", section, re.S).group(1)
    command = re.search(r"```bash\n(snakemake .*?)\n```", section, re.S).group(1)
    return python, config, command


@pytest.mark.slow
def test_readme_example_runs_end_to_end(tmp_path):
    """The user guide's own-data example, as written: data files, config, one command; the report and summary of
    the researcher's data set come out, and a bad file stops the run before any job with the file's name."""
    python, config, command = _readme_example()
    wf = copy_workflow(tmp_path / "wf")
    subprocess.run([sys.executable, "-c", python], cwd=wf, check=True)
    (wf / "config" / "my_data.yaml").write_text(config)
    args = command.split()[1:]
    proc = run_snakemake(*args, cwd=wf, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    summary = pd.read_csv(wf / "results" / "my_data" / "summary.csv")
    assert set(summary["dataset"]) == {"my_data"} and summary["mean"].between(0.3, 1).all()
    assert {"mvl_ls", "mvl_ls_cv", "mvl_svm", "svc_sum"} <= set(summary["method"])
    report = (wf / "results" / "my_data" / "report.html").read_text()
    assert "my_data" in report and "<table" in report
    # a view with a NaN: the run stops before any job and names the file and the row
    kar = pd.read_csv(wf / "my_data" / "kar.csv")
    kar.iloc[4, 2] = np.nan
    kar.to_csv(wf / "my_data" / "kar.csv", index=False)
    proc = run_snakemake(*args, cwd=wf, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "No job was started" in out and "kar.csv" in out and "rows 4" in out, out[-2000:]
