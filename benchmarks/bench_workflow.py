"""The main job end to end: a profile of the workflow from an empty results folder, timed.

    python benchmarks/bench_workflow.py                    # profiles/default, 2 cores
    python benchmarks/bench_workflow.py --profile ci \
        --config "data={mirror: $PWD/../shared/data, offline: true}"

Copies the workflow (workflow/, config/, profiles/) into a temporary folder, so that
nothing from an earlier run is reused (a data mirror must then be given as an absolute path), runs
``snakemake --profile profiles/<profile> --cores N`` there and prints: the number of jobs (and per rule),
the wall time, the CPU time of all jobs (user + system of the process tree), and the share of that CPU
spent starting job processes. The start-up cost of one job is measured in the same run: the median CPU
time of a Python process that only imports what a job imports (numpy, scipy, pandas, matplotlib,
mvl.workflow.runner), over a few repetitions; start-up share = jobs x that / CPU of the run. The per-unit
times of rule ``run`` come from the units' logs. JSON goes to
results/benchmarks/workflow_<profile>.json (or --json).
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mvl.workflow.snakemake_log import job_stats

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "results" / "benchmarks"
SNAKEMAKE = Path(sys.executable).with_name("snakemake")


def startup_cpu(repeats=5):
    """Median CPU seconds of a Python process that only imports what a job imports."""
    code = "import numpy, scipy.linalg, pandas, matplotlib, threadpoolctl, mvl.workflow.runner"
    times = []
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, "-c", code], check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        times.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return statistics.median(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="default")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--config", nargs="*", default=[], help="extra --config values for snakemake")
    ap.add_argument("--keep", action="store_true", help="keep the temporary workflow folder (prints its path)")
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    exe = str(SNAKEMAKE) if SNAKEMAKE.exists() else shutil.which("snakemake")
    start = startup_cpu()
    wf = Path(tempfile.mkdtemp(prefix="mvl-bench-wf-"))
    for item in ("workflow", "config", "profiles"):
        src = ROOT / item
        (shutil.copytree if src.is_dir() else shutil.copy)(src, wf / item)
    cmd = [exe, "--profile", f"profiles/{a.profile}", "--cores", str(a.cores)]
    if a.config:
        cmd += ["--config", *a.config]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=wf, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    out = proc.stdout + proc.stderr
    if proc.returncode != 0:
        print(out[-4000:])
        raise SystemExit(f"snakemake failed (exit {proc.returncode}); workflow copy kept in {wf}")
    stats = job_stats(out)
    jobs = stats.get("total", sum(v for k, v in stats.items()))
    units = {}
    for log in sorted(wf.glob("results/*/logs/run_*.log")):
        m = re.search(r"rows in ([\d.]+) s", log.read_text())
        if m:
            units[f"{log.parent.parent.name}/{log.stem[4:]}"] = float(m.group(1))
    share = jobs * start / cpu if cpu > 0 else float("nan")
    result = dict(profile=a.profile, cores=a.cores, jobs=jobs, jobs_by_rule=stats, wall_seconds=round(wall, 1),
                  cpu_seconds=round(cpu, 1), startup_cpu_per_job=round(start, 3),
                  startup_share=round(share, 4), unit_seconds=units)
    print(f"profile {a.profile}, {a.cores} cores: {jobs} jobs "
          f"({', '.join(f'{k} {v}' for k, v in stats.items() if k != 'total')})")
    print(f"wall {wall:.1f} s ({wall / 60:.1f} min), CPU of all jobs {cpu:.1f} s")
    print(f"process start-up: {start:.2f} s CPU per job x {jobs} jobs = {jobs * start:.1f} s, "
          f"{100 * share:.1f} % of the CPU")
    if units:
        top = sorted(units.items(), key=lambda kv: -kv[1])[:5]
        print(f"units (rule run): {len(units)}, {sum(units.values()):.1f} s in all; largest: "
              + ", ".join(f"{k} {v:.1f} s" for k, v in top))
    path = Path(a.json) if a.json else OUT / f"workflow_{a.profile}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2))
    if a.keep:
        print(f"workflow copy: {wf}")
    else:
        shutil.rmtree(wf, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
