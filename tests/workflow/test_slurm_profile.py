"""The SLURM profile: the CI workflow through a real single-node SLURM on localhost.

tests/slurm_local.py starts munged, slurmctld and slurmd (Debian's slurm-wlm and munge) in a private
directory, and the CI profile's workflow (reduced: one split, l_c = 1) runs through
``snakemake --profile profiles/slurm`` in a copy of the workflow: every job is an sbatch job. Where SLURM
cannot run (packages missing, not root, a daemon refusing to start), the test says exactly why (printed
and as a warning in the pytest summary) and checks the profile with a dry run instead; it never skips.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

import pytest
import slurm_local
from conftest import ROOT, copy_workflow, job_stats, snakemake_exe

RESOURCES_INCLUDE = 'include: "workflow/rules/resources.smk"'
# the CI profile's config, reduced to one split at l_c = 1 (optC: 5 iterations) and one co-regularization split
# on the synthetic two-lines data (g50c's file comes from the shared data folder, not available here)
SMALL = """seeds: [0]
labels_per_class: [1]
optc: {labels_per_class: [1], iterations: [5]}
coreg: {datasets: [lines], seeds: [0]}
"""
RUN_TIMEOUT = 1200


def _workflow_copy(dest):
    copy_workflow(dest)
    (dest / "small.yaml").write_text(SMALL)


def _env(extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env.update({"MPLBACKEND": "Agg", **(extra or {})})
    return env


def _snakemake(cwd, *args, env=None, timeout=300):
    """Run snakemake in its own process group; on timeout SIGTERM it (it cancels its SLURM jobs), then SIGKILL."""
    proc = subprocess.Popen([snakemake_exe(), *args], cwd=cwd, env=env or _env(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        out = ""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                out, _ = proc.communicate(timeout=30)
                break
            except subprocess.TimeoutExpired:
                continue
        pytest.fail(f"snakemake {' '.join(args)} timed out after {timeout} s:\n{(out or '')[-4000:]}")
    return proc.returncode, out


def _job_counts(out):
    """The first "Job stats" table of a Snakemake run or dry run: {rule: count}, without the total."""
    return {k: v for k, v in job_stats(out).items() if k != "total"}


def _planned(out, rule):
    """(threads, mem_mb, runtime) of every planned job of ``rule`` in a dry run's output."""
    found = []
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", out):
        if re.match(rf"\s*(?:local)?rule {rule}:", block):
            res = re.search(r"resources: (.*)", block)
            items = dict(kv.split("=", 1) for kv in res.group(1).split(", ")) if res else {}
            threads = re.search(r"threads: (\d+)", block)
            found.append((int(threads.group(1)) if threads else 1, items.get("mem_mb"), items.get("runtime")))
    return found


def _check_dry_run(wf):
    """The SLURM profile plans the same jobs as the CI profile, with SLURM resources for each."""
    rc, ci = _snakemake(wf, "--profile", "profiles/ci", "-n")
    assert rc == 0, ci[-4000:]
    rc, out = _snakemake(wf, "--profile", "profiles/slurm", "--configfile", "config/ci.yaml", "-n")
    assert rc == 0, out[-4000:]
    assert "Using profiles profiles/slurm" in out, out[-2000:]
    counts = _job_counts(out)
    assert counts == _job_counts(ci), (counts, _job_counts(ci))
    assert counts["run"] > 0 and counts["report"] == 1, counts
    runs = _planned(out, "run")
    assert len(runs) == counts["run"], runs[:5]
    # threads of run = cpus_per_task (profile's set-threads); runtime and memory for every job
    assert all(threads == 2 and mem and runtime for threads, mem, runtime in runs), runs[:5]
    assert all(threads == 1 for threads, _, _ in _planned(out, "dataset")), _planned(out, "dataset")[:3]
    if RESOURCES_INCLUDE in (wf / "Snakefile").read_text():
        # estimated from n and m (CI size: under 1 GB), not the profile's 2048 MB fallback
        for rule in ("run", "dataset"):
            jobs = _planned(out, rule)
            assert jobs and all(int(mem) < 2048 for _, mem, _ in jobs), (rule, jobs[:3])
    return counts


def test_slurm_profile_dry_run(tmp_path):
    """Fast check: the profile parses (executor plugin installed) and plans every job of the CI workflow."""
    _workflow_copy(tmp_path)
    _check_dry_run(tmp_path)


def test_resources_included():
    """The Snakefile includes the resource functions before the rule files, and every rule that does work writes
    its own mem_mb and runtime in its `resources:` (nothing patches rules after their definition)."""
    text = (ROOT / "Snakefile").read_text()
    assert RESOURCES_INCLUDE in text, f"Snakefile should have the line {RESOURCES_INCLUDE!r}"
    rule_files = re.findall(r'^include: "workflow/rules/\w+\.smk"', text, flags=re.M)
    assert rule_files.index(RESOURCES_INCLUDE) < rule_files.index('include: "workflow/rules/experiments.smk"')
    sources = [text] + [p.read_text() for p in sorted((ROOT / "workflow" / "rules").glob("*.smk"))]
    assert not any("apply_rule_resources" in t or "get_rule(" in t for t in sources)
    blocks = {}
    for t in sources:
        for part in re.split(r"^(?=rule \w+:)", t, flags=re.M)[1:]:
            blocks[re.match(r"rule (\w+):", part).group(1)] = part
    sized = set(blocks) - {"all", "index", "notebook_html"}  # the last two: the profile's fallbacks
    assert {"dataset", "prepare", "run", "collect", "aggregate", "report", "coreg_run"} <= sized
    for name in sorted(sized):
        res = re.search(r"\n    resources:\n((?:        .*\n)+)", blocks[name])
        assert res and "mem_mb=" in res.group(1) and "runtime=" in res.group(1), name


def _start_cluster(cluster_dir):
    """Start the local cluster; return (cluster, None) or (None, the reason it cannot run here)."""
    reasons = slurm_local.missing_requirements()
    if reasons:
        return None, "; ".join(reasons)
    cluster = slurm_local.LocalSlurm(cluster_dir)
    try:
        cluster.start()
    except slurm_local.SlurmUnavailable as err:
        cluster.stop()
        return None, f"the local SLURM daemons did not come up: {err}"
    except BaseException:
        cluster.stop()
        raise
    return cluster, None


@pytest.mark.slow
def test_slurm_profile_runs_ci_workflow(tmp_path):
    wf = tmp_path / "wf"
    wf.mkdir()
    _workflow_copy(wf)
    # a short path: munge's unix socket lives there (108-byte limit)
    cluster_dir = tempfile.mkdtemp(prefix="mvl-slurm-")
    started = time.monotonic()
    cluster, reason = _start_cluster(cluster_dir)
    if cluster is None:
        shutil.rmtree(cluster_dir, ignore_errors=True)
        message = f"real SLURM run impossible on this machine: {reason}. Tested the SLURM profile with --dry-run only."
        print(message)
        warnings.warn(message, stacklevel=1)
        _check_dry_run(wf)
        return
    daemons = dict(cluster.procs)
    try:
        rc, out = _snakemake(
            wf, "--profile", "profiles/slurm", "--configfile", "config/ci.yaml", "small.yaml",
            # no accounting database on the test cluster: squeue answers (MinJobAge = 600 s keeps finished jobs)
            "--slurm-status-command", "squeue", "--slurm-init-seconds-before-status-checks", "2",
            "--slurm-keep-successful-logs", "--latency-wait", "10",
            # one CPU per job on this small node, so that two jobs run at once (the profile asks 2 for these)
            "--set-threads", "run=1",
            env=_env(cluster.env), timeout=RUN_TIMEOUT,
        )
        elapsed = time.monotonic() - started
        jobcomp = Path(cluster_dir) / "log" / "jobcomp.log"
        jobcomp = jobcomp.read_text() if jobcomp.exists() else ""
        assert rc == 0, f"{out[-6000:]}\n--- slurmctld\n{cluster.tail('slurmctld')}\n--- jobcomp\n{jobcomp[-2000:]}"
        print(f"CI workflow (one split, l_c = 1) through the local SLURM in {elapsed:.0f} s")

        # every job but the input-only target `all` went through sbatch ...
        counts = _job_counts(out)
        n_jobs = sum(counts.values()) - counts.get("all", 0)
        submitted = {int(job): (slurm_id, rule) for job, slurm_id, rule in re.findall(
            r"Job (\d+) has been submitted with SLURM jobid (\d+) \(log: \S*/rule_(\w+)/", out)}
        assert n_jobs > 10 and len(submitted) == n_jobs, (n_jobs, len(submitted), out[-3000:])
        # ... and ran on our node under this run's job name, and completed (slurmctld's job completion log)
        run_id = re.search(r"SLURM run ID: (\S+)", out).group(1)
        records = {re.search(r"JobId=(\d+)", line).group(1): line
                   for line in jobcomp.splitlines() if f"Name={run_id} " in line}
        assert set(records) == {slurm_id for slurm_id, _ in submitted.values()}, jobcomp[-3000:]
        assert all("JobState=COMPLETED" in r and "NodeList=" in r for r in records.values()), jobcomp[-3000:]
        # the plugin's per-job logs, one folder per rule
        logs = wf / ".snakemake" / "slurm_logs"
        for rule in set(counts) - {"all"}:
            assert list((logs / f"rule_{rule}").rglob("*.log")), f"no SLURM log for rule {rule} under {logs}"
        # SLURM allocated what Snakemake asked: 1 CPU (threads) and each job's mem_mb, which resources.smk
        # estimates from n and m (CI size: under 2 GB for split, kernel and run)
        planned = {int(job): int(mem) for job, mem in re.findall(r"jobid: (\d+)\n(?:\s+\w+: .*\n)*?\s+resources: "
                                                                  r".*?mem_mb=(\d+)", out)}
        for job, (slurm_id, rule) in submitted.items():
            cpu, mem, unit = re.search(r"Tres=cpu=(\d+),mem=(\d+)([MG])", records[slurm_id]).groups()
            assert cpu == "1", (rule, records[slurm_id])
            assert int(mem) * (1024 if unit == "G" else 1) == planned[job], (rule, planned.get(job), records[slurm_id])
            if RESOURCES_INCLUDE in (wf / "Snakefile").read_text() and rule in ("split", "kernel", "run"):
                assert planned[job] < 2048, (rule, planned[job])

        summary = wf / "results" / "mfeat" / "summary.csv"
        assert summary.exists(), out[-3000:]
        rows = summary.read_text().splitlines()
        methods = {row.split(",")[1] for row in rows[1:]}
        assert {"mvl_ls", "mvl_ls_cv", "mvl_ls_ablation", "svc_sum", "mvl_ls_optc5"} <= methods, rows
        assert (wf / "results" / "mfeat" / "report.ipynb").exists()
    finally:
        cluster.stop()
        shutil.rmtree(cluster_dir, ignore_errors=True)
    leftover = [name for name, proc in daemons.items() if proc.poll() is None]
    assert not leftover, f"daemons still running: {leftover}"
