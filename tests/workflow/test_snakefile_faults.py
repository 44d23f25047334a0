"""The workflow under faults: interrupts (SIGINT, SIGKILL), determinism, corrupted outputs, malformed configs.

Workflow runs use a copy of the workflow in a temporary folder and a tiny config (the CI profile with one
split, l_c = 1, two views, a small grid and a 3-iteration optC: dataset, three units (families ls, optc,
comparison), collect and aggregate, ~20 s on 2 cores) and stop at summary.csv (the report notebook is not part
of what is checked here). Timing columns (fit_seconds, grid_seconds) are measured wall-clock times, the only
legitimately non-deterministic values: tables are compared byte for byte where they have none (summary.csv,
dataset.npz) and without those columns elsewhere (results.csv, the units' run CSVs).
"""

import base64
import csv
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import copy_workflow, snakemake_exe

RES = Path("results") / "mfeat"
TARGET = str(RES / "summary.csv")
TIMING = ("fit_seconds", "grid_seconds")
TINY = """\
# test_snakefile_faults.py: one split, l_c = 1, two views; 6 jobs up to summary.csv
seeds: [0]
labels_per_class: [1]
unlabelled_per_class: [5]
grid_labels_per_class: 1
grid: {A: [1.0e-6, 1.0e-5], B: [0.0, 1.0e-6], W: [0.0]}
ablation: {labels_per_class: [], unlabelled_per_class: []}
optc: {labels_per_class: [1], iterations: [3], n_restarts: 2}
dataset_settings:
  mfeat:
    views: [fou, fac]
    methods: {supervised: [mvl_ls, svc_sum, single_views], semi: [mvl_ls, mvl_ls_cv]}
"""


def _copy_workflow(dest):
    copy_workflow(dest)
    (dest / "config" / "faults.yaml").write_text(TINY)
    return dest


def _cmd(*extra, configfiles=("config/ci.yaml", "config/faults.yaml")):
    # --configfile takes several files: keep it last
    return [snakemake_exe(), *extra, "--profile", "profiles/ci", "--configfile", *configfiles]


def _snakemake(wf, *extra, timeout=300, **kw):
    return subprocess.run(_cmd(*extra, **kw), cwd=wf, capture_output=True, text=True, timeout=timeout,
                          check=False)


def _run(wf, *extra):
    """Run the tiny workflow to summary.csv; fail with the end of its output unless it succeeds."""
    proc = _snakemake(wf, TARGET, *extra)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    return proc


def _outputs(wf):
    """Every output of a step (the files that carry a checksum sidecar), relative to the workflow folder."""
    return sorted(str(p.relative_to(wf))[: -len(".sha256")] for p in (wf / RES).rglob("*.sha256")
                  if not p.name.startswith("."))


def _state(wf):
    """Every file under results/ except logs: (mtime_ns, sha256) by relative path."""
    out = {}
    for p in (wf / RES).rglob("*"):
        if p.is_file() and "logs" not in p.relative_to(wf / RES).parts:
            out[str(p.relative_to(wf))] = (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
    return out


def _without_timing(path):
    """A CSV as rows of strings without the timing columns, or a JSON object without grid_seconds."""
    if path.suffix == ".json":
        obj = json.loads(path.read_text())
        return {k: v for k, v in obj.items() if k not in TIMING}
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    keep = [i for i, name in enumerate(rows[0]) if name not in TIMING]
    return [[row[i] for i in keep] for row in rows]


def _assert_same_results(wf, ref):
    """Outputs of ``wf`` equal those of the reference run: byte for byte, timing columns aside."""
    assert _outputs(wf) == _outputs(ref)
    assert (wf / TARGET).read_bytes() == (ref / TARGET).read_bytes()
    for rel in _outputs(ref):
        a, b = wf / rel, ref / rel
        if a.read_bytes() != b.read_bytes():
            # only files with measured times may differ, and only in those
            assert a.suffix == ".csv" and ("runs" in a.parts or a.name == "results.csv"), rel
            assert _without_timing(a) == _without_timing(b), rel


def _executed(stdout_stderr):
    """Outputs of the jobs a Snakemake run executed, from its job log lines (`output: a, b`)."""
    return {p.strip() for line in stdout_stderr.splitlines() if line.strip().startswith("output:")
            for p in line.split(":", 1)[1].split(",")}


def _incomplete(wf):
    """Outputs Snakemake marked as incomplete (jobs running when it stopped): .snakemake/incomplete/<b64 path>."""
    folder = wf / ".snakemake" / "incomplete"
    # long ids are split into folders of 255 characters
    ids = ["".join(p.relative_to(folder).parts) for p in folder.rglob("*") if p.is_file()] if folder.is_dir() else []
    return {base64.urlsafe_b64decode(i.encode()).decode() for i in ids}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """One uninterrupted run of the tiny config."""
    wf = _copy_workflow(tmp_path_factory.mktemp("reference"))
    _run(wf)
    return wf


def _interrupt(wf, sig, when):
    """Start the workflow in its own process group, wait until ``when(wf)``, send ``sig`` to the whole group."""
    log = open(wf / "interrupted.log", "w")
    # a shell that starts the tests in the background ignores SIGINT, and an ignored SIGINT is inherited (Python then
    # never raises KeyboardInterrupt); a caught one is reset to the default by exec: catch it while starting the child
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen(_cmd(TARGET), cwd=wf, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    finally:
        signal.signal(signal.SIGINT, previous)
    try:
        deadline = time.monotonic() + 240
        while not when(wf):
            assert proc.poll() is None, "the workflow ended before the interrupt:\n" + \
                (wf / "interrupted.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "the workflow did not reach the interrupt point"
            time.sleep(0.02)
        os.killpg(proc.pid, sig)
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()
    assert proc.returncode != 0
    return (wf / "interrupted.log").read_text()


def _check_resume(wf, reference, rerun):
    """After the interrupt: the rerun recomputed exactly the missing and incomplete outputs, left every
    finished one as it was (mtime and content), never met a corrupted file, and ended with the reference
    tables."""
    before, incomplete = rerun["before"], rerun["incomplete"]
    finished = {rel for rel in before if rel in set(_outputs(reference)) and rel not in incomplete}
    executed = _executed(rerun["log"])
    assert "corrupted" not in rerun["log"]
    assert finished, "the interrupt came before any output was finished"
    assert executed, "the interrupt came after the last job"
    assert executed == set(_outputs(reference)) - finished
    after = _state(wf)
    for rel in finished:
        assert after[rel] == before[rel], f"{rel} was finished before the interrupt but was rewritten"
    _assert_same_results(wf, reference)
    assert not (wf / ".snakemake" / "incomplete").is_dir() or not _incomplete(wf)


def _has(pattern):
    return lambda wf: any(p for p in (wf / RES).glob(pattern))


@pytest.mark.slow
def test_sigint_then_rerun_resumes(reference, tmp_path):
    """Ctrl-C (SIGINT to the process group) once the first unit (rule run) has finished; a plain rerun completes."""
    wf = _copy_workflow(tmp_path)
    _interrupt(wf, signal.SIGINT, _has("runs/*/seed0.csv.sha256"))
    assert not (wf / TARGET).exists()
    assert not (wf / ".snakemake" / "locks").is_dir() or not any((wf / ".snakemake" / "locks").iterdir())
    before, incomplete = _state(wf), _incomplete(wf)
    proc = _run(wf)
    _check_resume(wf, reference, dict(before=before, incomplete=incomplete, log=proc.stdout + proc.stderr))


@pytest.mark.slow
def test_sigkill_then_unlock_and_rerun_resumes(reference, tmp_path):
    """SIGKILL of Snakemake and all its jobs while the units run: the rerun is refused until
    `snakemake --unlock`, then completes, recomputing only what was missing or incomplete."""
    wf = _copy_workflow(tmp_path)
    _interrupt(wf, signal.SIGKILL, _has("logs/run_*_seed0.log"))
    before, incomplete = _state(wf), _incomplete(wf)
    locked = _snakemake(wf, TARGET)
    assert locked.returncode != 0 and "--unlock" in locked.stdout + locked.stderr
    assert _state(wf) == before  # a refused run touches nothing
    unlock = _snakemake(wf, "--unlock")
    assert unlock.returncode == 0, unlock.stderr[-3000:]
    proc = _run(wf)
    _check_resume(wf, reference, dict(before=before, incomplete=incomplete, log=proc.stdout + proc.stderr))


@pytest.mark.slow
def test_same_config_twice_gives_identical_tables(reference, tmp_path):
    """Determinism: a second run in a fresh folder gives byte-identical summary.csv and dataset.npz, and
    results.csv and the units' run CSVs identical except for the measured times."""
    wf = _copy_workflow(tmp_path)
    _run(wf)
    _assert_same_results(wf, reference)
    for rel in _outputs(reference):
        if rel.endswith(".npz"):
            assert (wf / rel).read_bytes() == (reference / rel).read_bytes(), rel


def _corrupt(path, how):
    """Corrupt ``path`` in place and give it back its mtime (bit rot, not an edit: Snakemake alone would
    see nothing)."""
    st = path.stat()
    data = bytearray(path.read_bytes())
    if how == "flip":
        data[len(data) // 2] ^= 0xFF
    elif how == "truncate":
        data = data[: len(data) // 2]
    elif how == "digit":  # the first decimal of the first "0.x" number of the first data row, e.g. an accuracy
        lines = data.decode().splitlines(keepends=True)
        m = re.search(r"0\.(\d)", lines[1])
        lines[1] = lines[1][: m.start(1)] + str((int(m.group(1)) + 1) % 10) + lines[1][m.end(1) :]
        data = "".join(lines).encode()
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.read_bytes() != b"" and hashlib.sha256(path.read_bytes()).hexdigest() not in \
        path.with_name(path.name + ".sha256").read_text()


def _corrupted_run(reference, tmp_path, damage):
    wf = tmp_path / "wf"
    shutil.copytree(reference, wf, symlinks=True)  # copy2: mtimes kept, so everything is up to date
    for rel, how in damage.items():
        _corrupt(wf / RES / rel, how)
    before = _state(wf)
    proc = _run(wf)
    err = proc.stderr
    reported = sorted(line.split(": ", 1)[1] for line in err.splitlines() if line.startswith("corrupted, will be"))
    assert reported == sorted(str(RES / rel) for rel in damage), err[-3000:]
    _assert_same_results(wf, reference)
    return wf, before, _executed(proc.stdout + proc.stderr)


@pytest.mark.slow
def test_corrupted_result_csv_is_detected_and_recomputed(reference, tmp_path):
    """A changed digit in a run CSV and in summary.csv (mtimes restored): both are reported, deleted and
    recomputed with what depends on them; nothing else is touched."""
    run_csv = "runs/ls/seed0.csv"
    wf, before, executed = _corrupted_run(reference, tmp_path, {run_csv: "digit", "summary.csv": "digit"})
    assert executed == {str(RES / run_csv), str(RES / "results.csv"), str(RES / "summary.csv")}
    after = _state(wf)
    for rel, st in before.items():
        if rel not in executed and not rel.endswith(".sha256"):
            assert after[rel] == st, rel


@pytest.mark.slow
def test_corrupted_dataset_is_detected_and_recomputed(reference, tmp_path):
    """Flipped bytes in the dataset npz and a truncated unit CSV (mtimes restored): both are reported,
    recomputed (the dataset byte-identical), and every job downstream reruns."""
    wf, before, executed = _corrupted_run(reference, tmp_path, {"dataset.npz": "flip",
                                                                "runs/optc/seed0.csv": "truncate"})
    assert executed == set(_outputs(reference))
    assert (wf / RES / "dataset.npz").read_bytes() == (reference / RES / "dataset.npz").read_bytes()


@pytest.mark.slow
def test_truncated_figure_is_recomputed_and_a_killed_reports_temporaries_removed(reference, tmp_path):
    """The report's figures and notebook carry checksum sidecars like the tables: a truncated figure (mtime
    restored: Snakemake alone says "Nothing to be done") is reported and deleted with the notebook (whose sidecar
    records the figures), and the report rerun, so the figure decodes again; the 0-byte temporaries a SIGKILLed
    report left beside its notebook and a figure are removed."""
    from mvl.workflow.index import undecodable
    from mvl.workflow.io import verify_file

    wf = tmp_path / "wf"
    shutil.copytree(reference, wf, symlinks=True)
    report = str(RES / "report.ipynb")
    proc = _snakemake(wf, report)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    figure = wf / RES / "figures" / "accuracy_vs_labels.png"
    assert verify_file(wf / report) is True and verify_file(figure) is True
    _corrupt(figure, "truncate")
    assert undecodable(figure) is not None
    stale = [wf / RES / ".report.ipynb.k1ll3d.ipynb", wf / RES / "figures" / ".comparison.png.k1ll3d.png"]
    for p in stale:
        p.write_bytes(b"")
    proc = _snakemake(wf, report)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    assert f"corrupted, will be recomputed: {RES / 'figures' / 'accuracy_vs_labels.png'}" in proc.stderr
    assert f"downstream of a corrupted file, will be recomputed: {report}" in proc.stderr  # the notebook's sidecar
    assert report in _executed(proc.stdout + proc.stderr)
    assert undecodable(figure) is None and verify_file(figure) is True
    assert not any(p.exists() for p in stale)
    again = _snakemake(wf, report)
    assert "Nothing to be done" in again.stdout + again.stderr


@pytest.mark.slow
def test_dry_run_and_lint_delete_nothing(reference, tmp_path):
    """A corrupted output is listed by a dry run (-n) and left in place, and --lint does not even look: only a
    real run deletes and recomputes it."""
    wf = tmp_path / "wf"
    shutil.copytree(reference, wf, symlinks=True)
    path = wf / RES / "runs" / "ls" / "seed0.csv"
    _corrupt(path, "digit")
    damaged = path.read_bytes()
    proc = _snakemake(wf, "-n", TARGET)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"corrupted: {RES / 'runs' / 'ls' / 'seed0.csv'}" in proc.stderr and "dry run" in proc.stderr
    assert path.read_bytes() == damaged and path.with_name("seed0.csv.sha256").exists()
    proc = subprocess.run([snakemake_exe(), "--lint", "--configfile", "config/ci.yaml"], cwd=wf, capture_output=True,
                          text=True, timeout=120, check=False)
    assert "corrupted" not in proc.stderr and path.read_bytes() == damaged
    _run(wf)
    assert path.read_bytes() != damaged


@pytest.mark.slow
def test_changing_one_familys_settings_reruns_only_its_units(reference, tmp_path):
    """Rule run receives only its family's settings (mvl.workflow.settings.Unit): a new optC setting plans the
    optC unit and what is computed from it, nothing of the other families."""
    wf = tmp_path / "wf"
    shutil.copytree(reference, wf, symlinks=True)
    (wf / "config" / "optc.yaml").write_text("optc: {labels_per_class: [1], iterations: [3], n_restarts: 3}\n")
    proc = _snakemake(wf, "-n", TARGET, configfiles=("config/ci.yaml", "config/faults.yaml", "config/optc.yaml"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    planned = _executed(proc.stdout + proc.stderr)
    assert planned == {str(RES / "runs" / "optc" / "seed0.csv"), str(RES / "results.csv"), str(RES / "summary.csv")}
    assert "params changed" in proc.stdout.lower() or "params" in proc.stdout


# ------------------------------------------------------------------------------------------ malformed config

BAD_CONFIGS = {
    # a wrong type under dataset_settings.<name>.kernel
    "nested_type": ("dataset_settings:\n  mfeat:\n    kernel: {type: gaussian, standardize: 'yes'}\n",
                    ["'yes' is not of type 'boolean'", "['dataset_settings']['mfeat']['kernel']['standardize']"]),
    # a misspelt key under dataset_settings.<name>.kernel
    "nested_unknown": ("dataset_settings:\n  mfeat:\n    kernel: {type: gaussian, bandwith: 2.0}\n",
                       ["'bandwith' was unexpected", "['dataset_settings']['mfeat']['kernel']"]),
    # an unknown top-level key (a typo of n_val_per_class)
    "top_unknown": ("n_val_per_clas: 5\n", ["Additional properties are not allowed ('n_val_per_clas' was unexpected)"]),
    # a value out of range in a nested section
    "nested_range": ("optc: {n_restarts: 0}\n", ["0 is less than the minimum of 1", "['optc']['n_restarts']"]),
    # a dataset listed without settings
    "dataset_unknown": ("datasets: [mfeat, mfaet]\n", ["'mfaet' is listed in `datasets` but has no entry"]),
    # a method the registry does not know, and an unknown data source (checked by mvl.workflow.settings)
    "method_unknown": ("methods: {supervised: [mvl_ls, mvl_lss], semi: []}\n",
                       ["dataset_settings.mfeat.methods.supervised: unknown method 'mvl_lss'"]),
    "source_unknown": ("dataset_settings:\n  mfeat:\n    source: mfaet\n",
                       ["dataset_settings.mfeat.source: unknown data source 'mfaet'"]),
}


@pytest.fixture(scope="module")
def workflow_copy(tmp_path_factory):
    return _copy_workflow(tmp_path_factory.mktemp("config"))


@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
def test_malformed_config_names_the_offending_key(case, workflow_copy):
    text, expected = BAD_CONFIGS[case]
    (workflow_copy / "config" / f"bad_{case}.yaml").write_text(text)
    proc = _snakemake(workflow_copy, "-n", configfiles=("config/ci.yaml", f"config/bad_{case}.yaml"), timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    for needle in expected:
        assert needle in out, out[-3000:]
    assert not (workflow_copy / "results").exists()
