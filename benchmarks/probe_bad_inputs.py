"""Probe every cell of the estimators' input contract (``tests/estimators/contract_cases.py``: estimator x solver x
complete / incomplete views x bad-input class), each in its own process with a timeout, and print one table row per
cell: its expected outcome and what happened -- clear error, specific warning, correct, or SILENT WRONG, SILENT (a
plausible answer where a warning or error is expected), UNCLEAR ERROR / UNCLEAR WARNING (raised, but the message does
not name the cause and the fix), TRACEBACK (another exception type), HANG (timeout), CRASH (the process died).

    python benchmarks/probe_bad_inputs.py                     # every cell
    python benchmarks/probe_bad_inputs.py --only cg --jobs 2  # cells whose id contains "cg", two at a time
    python benchmarks/probe_bad_inputs.py --csv probe.csv     # the table as CSV too

Exit status 1 if any cell misses its expected outcome. The same cells run in-process in
``tests/estimators/test_contract.py``, where those not fixed yet are strict xfails.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

CASES_DIR = Path(__file__).resolve().parents[1] / "tests" / "estimators"
sys.path.insert(0, str(CASES_DIR))

import contract_cases  # noqa: E402 -- from the tests folder, the single definition of the cells

OK = ("clear error", "specific warning", "correct")


def run_one(cell_id):
    """Run one cell in this process and print its result as JSON (the child's side)."""
    cell = next(c for c in contract_cases.cells() if c.id == cell_id)
    result = contract_cases.run(cell)
    print(json.dumps({"outcome": result.outcome, "detail": result.detail}))


def probe(cell, timeout):
    """Run ``cell`` in a child process; (outcome, detail, seconds)."""
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, __file__, "--one", cell.id], check=False, capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "HANG", f"no answer within {timeout:g} s", time.perf_counter() - t0
    seconds = time.perf_counter() - t0
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        return "CRASH", f"exit status {proc.returncode}: {proc.stderr.strip()[-300:]}", seconds
    out = json.loads(lines[-1])
    return out["outcome"], out["detail"], seconds


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--only", default="", help="run the cells whose id contains this text")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per cell (default 120)")
    ap.add_argument("--jobs", type=int, default=1, help="cells run at the same time (default 1)")
    ap.add_argument("--csv", help="also write the table to this CSV file")
    args = ap.parse_args(argv)
    if args.one:
        run_one(args.one)
        return 0
    cells = [c for c in contract_cases.cells() if args.only in c.id]
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(lambda c: probe(c, args.timeout), cells))
    rows = []
    width = max((len(c.id) for c in cells), default=10)
    print(f"{'case':{width}}  {'expected':16}  {'outcome':16}  {'s':>5}  detail")
    for cell, (outcome, detail, seconds) in zip(cells, results, strict=True):
        exp = contract_cases.expected(cell)
        want = {"error": "clear error", "warning": "specific warning", "correct": "correct"}[exp.kind]
        print(f"{cell.id:{width}}  {want:16}  {outcome:16}  {seconds:5.1f}  {detail[:160]}")
        rows.append({"case": cell.id, "estimator": cell.estimator, "solver": cell.solver or "", "views": cell.views,
                     "input": cell.case, "expected": want, "outcome": outcome, "seconds": round(seconds, 2),
                     "detail": detail})
    counts = {}
    for r in rows:
        counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
    print("\n" + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())) + f" ({len(rows)} cells)")
    if args.csv:
        with open(args.csv, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]) if rows else ["case"])
            writer.writeheader()
            writer.writerows(rows)
    return int(any(r["outcome"] not in OK for r in rows))


if __name__ == "__main__":
    sys.exit(main())
