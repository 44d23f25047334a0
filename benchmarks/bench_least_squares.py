"""Benchmark: structured vs dense MVL-LS solvers (``mvl.estimators.least_squares``).

What is measured
----------------
For each problem size (n training points, m views, P classes, l labelled) the
script builds random multi-view kernels that look like real ones -- one
Gaussian kernel exp(-||x - x'||^2 / (2 s^2)) per view, computed on random
class-clustered points with a view-specific dimension and bandwidth, so every
K^p is PSD with unit diagonal and positive entries (the normalized graph
Laplacian uses K^p itself as graph weights). The l labelled samples are
interleaved at random among the n, every class is labelled, c is random with
at least one negative entry, and all gammas are > 0 (paper-like values:
gamma_A = 1e-5, gamma_B = 1e-6, gamma_W = 1e-6). The seed is fixed.

The normalized Laplacians are computed once per problem, outside the timed
region; both solvers get the same inputs. Only the solver call is timed
(``time.perf_counter``): best of ``--repeats`` runs for
``solve_structured`` and of ``--dense-repeats`` runs for ``solve_dense``
(default 1, the dense solver is slow). The script prints, per size:

* the time ratio t_dense / t_structured, measured in the same run, against the
  target of the project's issue (>= 15, >= 25, >= 6 for the three sizes);
* the max relative difference max|a - b| / max|b| (b = dense) of the decision
  values on the training points, sum_p c_p K^p A_p, and of the coefficients
  A (m, n, P); target <= 1e-8.

It then runs ``solve_structured`` alone at (n = 2040, m = 10, P = 102,
l = 1530), where the dense system is far too big, in a fresh child process
(this script re-invoked with an internal flag) and prints its time and the
whole child process's peak resident memory (the child's own VmHWM on Linux,
with its ru_maxrss as a cross-check; it includes the Python interpreter,
numpy/scipy, the input kernels and Laplacians), target < 3 GB, together with
the size of the input kernels alone and the memory the dense system would
need. This run goes first, while the parent process is still small, because
on Linux a vfork/exec child's ru_maxrss inherits the parent's high-water mark.

A missed target is printed as MISSED; the exit code is 0 regardless (it is
non-zero only if the script itself fails).

BLAS threads are not changed: whatever the environment gives (printed at the
start, via threadpoolctl when installed) is used by both solvers and by the
child process, which inherits the environment. With pip wheels numpy and
scipy each bundle their own OpenBLAS with its own thread pool. Timings are
wall-clock and very sensitive to other processes on the machine (with 2
cores, one busy foreign process can slow the structured solver several
times): the CPU time used by other processes during the timed calls is
measured from /proc/stat and printed as ``bg_load`` (in cores), with a
warning above 0.25.

How to run
----------
From the repository root, with the project's virtualenv::

    python benchmarks/bench_least_squares.py              # full run, several minutes
    python benchmarks/bench_least_squares.py --quick      # smoke run, small sizes, < 20 s
    python benchmarks/bench_least_squares.py --sizes A C  # only some sizes
    python benchmarks/bench_least_squares.py --sizes 500:3:10:400 large
    python benchmarks/bench_least_squares.py --json results.json

Size names: ``A`` = (765, 7, 17, 680), ``B`` = (1020, 10, 102, 765),
``C`` = (2040, 4, 102, 1530) (structured vs dense) and ``large`` =
(2040, 10, 102, 1530) (structured alone, in a child process). A custom size
``n:m:P:l`` runs structured vs dense with no ratio target.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy
import scipy.linalg  # noqa: F401  (load scipy's BLAS so threadpoolctl reports it)

from mvl import MVLLeastSquares
from mvl.graph import view_laplacians
from mvl.labels import encode_targets
from mvl.solvers.dense import solve_dense
from mvl.solvers.structured import solve_structured

GAMMA_A = 1e-5
GAMMA_B = 1e-6
GAMMA_W = 1e-6
SEED = 20160101
DIFF_TARGET = 1e-8
MEM_TARGET_BYTES = 3 * 1024**3  # "under 3 GB", taken as 3 GiB
BG_LOAD_WARN = 0.25  # cores used by other processes during timing above which a warning is printed

# name: ((n, m, P, l), ratio target or None)
COMPARE_SIZES = {
    "A": ((765, 7, 17, 680), 15.0),
    "B": ((1020, 10, 102, 765), 25.0),
    "C": ((2040, 4, 102, 1530), 6.0),
}
LARGE_SIZE = (2040, 10, 102, 1530)
# --quick: same shapes of problem, much smaller; no ratio targets (the ratio is
# not meaningful at these sizes), the difference target still applies.
QUICK_COMPARE_SIZES = {
    "qA": ((190, 7, 17, 170), None),
    "qB": ((255, 10, 26, 190), None),
    "qC": ((510, 4, 26, 380), None),
}
QUICK_LARGE_SIZE = (510, 10, 26, 380)

# N x N arrays (N = n m) held by solve_dense: G, Mop, Lbig and B = Mop @ G
# (read off src/mvl/least_squares.py). Its measured peak RSS increase is about
# 6 of them (kron() and solve() temporaries): 6.0-6.1 x at sizes A, B, C on
# numpy 2.4 / scipy 1.17; each run prints the measured multiple again. Used
# for the estimate at the large size only.
DENSE_NN_ARRAYS_PERSISTENT = 4
DENSE_NN_ARRAYS_PEAK = 6


# ---------------------------------------------------------------- utilities


def fmt_bytes(nbytes):
    if nbytes >= 1024**3:
        return f"{nbytes / 1024**3:.2f} GiB"
    return f"{nbytes / 1024**2:.0f} MiB"


def fmt_load(x):
    return "?" if x is None else f"{x:.2f}"


def size_str(size):
    n, m, P, l = size
    return f"n={n}, m={m}, P={P}, l={l}"


def maxrss_bytes(who):
    """Peak resident set size of this process (``who='self'``) or its waited-for children."""
    import resource

    ru = resource.getrusage(resource.RUSAGE_SELF if who == "self" else resource.RUSAGE_CHILDREN)
    # Linux reports kilobytes, macOS bytes.
    return ru.ru_maxrss if sys.platform == "darwin" else ru.ru_maxrss * 1024


def _proc_status_bytes(key):
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def reset_peak_rss():
    """Reset this process's VmHWM to the current RSS (Linux >= 4.0); False if not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def current_rss_bytes():
    """Current resident set size (Linux /proc), or None if unavailable."""
    return _proc_status_bytes("VmRSS")


def peak_rss_bytes():
    """Peak resident set size of this process image (Linux VmHWM), else ru_maxrss.

    VmHWM belongs to the current address space only. ru_maxrss can be
    inflated in a child: on Linux, when the child is started with vfork/exec
    (what subprocess does), the parent's high-water mark at spawn time is
    carried into the child's ru_maxrss. Both are reported; see run_large.
    """
    hwm = _proc_status_bytes("VmHWM")
    return hwm if hwm is not None else maxrss_bytes("self")


def available_memory_bytes():
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def dense_memory_bytes(n, m):
    per = (n * m) ** 2 * 8
    return per, DENSE_NN_ARRAYS_PERSISTENT * per, DENSE_NN_ARRAYS_PEAK * per


def blas_info():
    """Short description of the BLAS libraries numpy/scipy use, and the core count."""
    info = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "cpu_count": os.cpu_count(),
        "cpu_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "machine": platform.machine(),
    }
    try:
        from threadpoolctl import threadpool_info

        info["blas"] = [
            {k: d.get(k) for k in ("user_api", "internal_api", "prefix", "version", "num_threads",
                                   "threading_layer", "architecture")}
            for d in threadpool_info()
        ]
    except ImportError:
        try:
            cfg = np.show_config(mode="dicts")["Build Dependencies"]
            info["blas"] = [{"numpy_build_blas": cfg["blas"].get("name"),
                             "version": cfg["blas"].get("version"),
                             "num_threads": "unknown (threadpoolctl not installed)"}]
        except Exception:  # pragma: no cover - very old numpy
            info["blas"] = [{"numpy_build_blas": "unknown"}]
    info["thread_env"] = {k: v for k, v in os.environ.items()
                          if k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                   "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
                                   "OPENBLAS_THREAD_TIMEOUT", "GOTO_THREAD_TIMEOUT")}
    return info


def print_env(info):
    print(f"python {info['python']}, numpy {info['numpy']}, scipy {info['scipy']}, "
          f"{info['machine']}, cores: os.cpu_count()={info['cpu_count']}, "
          f"affinity={info['cpu_affinity']}")
    for d in info["blas"]:
        print("  BLAS: " + ", ".join(f"{k}={v}" for k, v in d.items() if v is not None))
    print(f"  thread env vars: {info['thread_env'] or 'none set'} (left unchanged)")


# ---------------------------------------------------------------- problems


def make_problem(n, m, P, l, seed=SEED):
    """Random multi-view problem: Gaussian kernels (m, n, n), labelled indices, Y_L, c."""
    if not (1 <= P <= l <= n):
        raise ValueError(f"need 1 <= P <= l <= n, got n={n}, P={P}, l={l}")
    from scipy.spatial.distance import cdist

    rng = np.random.default_rng([seed, n, m, P, l])
    # labelled samples interleaved at random among the n; every class labelled
    labelled = np.sort(rng.choice(n, size=l, replace=False))
    y = rng.integers(P, size=n)
    y[labelled] = rng.permutation(np.arange(l) % P)
    K = np.empty((m, n, n))
    for p in range(m):
        d = int(rng.integers(4, 41))  # view-specific feature dimension
        means = rng.normal(scale=rng.uniform(0.5, 2.0), size=(P, d))
        X = means[y] + rng.normal(size=(n, d))
        D2 = cdist(X, X, "sqeuclidean")
        s2 = np.median(D2[np.triu_indices(n, 1)]) * rng.uniform(0.25, 2.0)  # bandwidth s^2
        np.exp(D2 / (-2.0 * s2), out=K[p])
        K[p] = 0.5 * (K[p] + K[p].T)  # exactly symmetric (solve_structured relies on it)
        np.fill_diagonal(K[p], 1.0)
        del D2, X
    c = rng.uniform(-1.0, 1.0, size=m)
    c[rng.integers(m)] = -rng.uniform(0.2, 1.0)  # at least one negative entry
    Y_L = encode_targets(y[labelled], P)
    return K, labelled, Y_L, c


def decision_values(K, A, c):
    """Combined outputs on the training points, sum_p c_p K^p A_p, shape (n, P)."""
    out = np.zeros((K.shape[1], A.shape[2]))
    for p in range(K.shape[0]):
        out += c[p] * (K[p] @ A[p])
    return out


def rel_diff(a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def _cpu_snapshot():
    """(wall, all-CPU busy seconds from /proc/stat, this process's + children's CPU seconds)."""
    try:
        with open("/proc/stat") as fh:
            f = [int(v) for v in fh.readline().split()[1:]]
        busy = (sum(f[:8]) - f[3] - f[4]) / os.sysconf("SC_CLK_TCK")  # all but idle, iowait
    except (OSError, ValueError, IndexError):
        busy = None
    t = os.times()
    return time.perf_counter(), busy, t.user + t.system + t.children_user + t.children_system


def background_load(start, end):
    """Average number of cores used by *other* processes between two snapshots (None if unknown)."""
    if start[1] is None or end[1] is None or end[0] <= start[0]:
        return None
    return max(0.0, ((end[1] - start[1]) - (end[2] - start[2])) / (end[0] - start[0]))


def timed(fn, args, repeats):
    """Best-of timing of fn(*args); returns (last output, times, background load in cores)."""
    times = []
    out = None
    busy_other = wall = 0.0
    known = True
    for _ in range(repeats):
        out = None
        gc.collect()
        s0 = _cpu_snapshot()
        t0 = time.perf_counter()
        out = fn(*args)
        times.append(time.perf_counter() - t0)
        s1 = _cpu_snapshot()
        bg = background_load(s0, s1)
        if bg is None:
            known = False
        else:
            busy_other += bg * (s1[0] - s0[0])
            wall += s1[0] - s0[0]
    return out, times, (busy_other / wall if known and wall > 0 else None)


# ---------------------------------------------------------------- runs


def _timed_solver(label, solver, args, repeats, row):
    """Best-of timing of one solver; records times, background load and peak-RSS increase in ``row``."""
    can_reset = reset_peak_rss()
    base = current_rss_bytes()
    A, times, bg = timed(solver, args, repeats)
    if can_reset and base is not None:
        row[f"{label}_peak_rss_increase_bytes"] = peak_rss_bytes() - base
    row[f"t_{label}_all"] = times
    row[f"background_load_{label}"] = bg
    row[f"t_{label}"] = min(times)
    return A, times, bg


def run_compare(name, size, target, repeats, dense_repeats):
    n, m, P, l = size
    per, _, peak = dense_memory_bytes(n, m)
    print(f"\n[{name}] {size_str(size)}: building kernels and Laplacians (untimed) ...", flush=True)
    K, labelled, Y_L, c = make_problem(n, m, P, l)
    L = view_laplacians(K, normalized=True)
    args = (K, labelled, Y_L, c, GAMMA_A, GAMMA_B, GAMMA_W, L)
    row = {"name": name, "n": n, "m": m, "P": P, "l": l, "ratio_target": target,
           "c": c.tolist(), "dense_bytes_per_NxN": per, "dense_bytes_estimated_peak": peak}

    A_s, t_s, bg_s = _timed_solver("structured", solve_structured, args, repeats, row)
    print(f"  structured: best {min(t_s):.3f} s of {repeats} ({', '.join(f'{t:.3f}' for t in t_s)})"
          f"; other processes used {fmt_load(bg_s)} cores meanwhile", flush=True)

    # the estimator's whole fit on the same problem (sample-first kernels, built untimed): input checks,
    # Laplacians (the paper's dense graph, power 1, as above) and the structured solve
    X = np.ascontiguousarray(np.moveaxis(K, 0, -1))
    y = np.full(n, -1)
    y[labelled] = np.argmax(Y_L, axis=1)
    est = MVLLeastSquares(kernel="precomputed", solver="structured", gamma_A=GAMMA_A, gamma_B=GAMMA_B,
                          gamma_W=GAMMA_W, c=c, laplacian="normalized", n_neighbors=None, laplacian_power=1)
    fitted, t_f, bg_f = _timed_solver("fit", est.fit, (X, y), repeats, row)
    row["reldiff_fit_coef"] = rel_diff(fitted.coef_, A_s)
    print(f"  fit:        best {min(t_f):.3f} s of {repeats} ({', '.join(f'{t:.3f}' for t in t_f)})"
          f"; other processes used {fmt_load(bg_f)} cores meanwhile; max|coef_ - structured| / max = "
          f"{row['reldiff_fit_coef']:.1e}", flush=True)
    del X, fitted, est

    avail = available_memory_bytes()
    if avail is not None and peak > 0.9 * avail:
        print(f"  dense: SKIPPED, needs ~{fmt_bytes(peak)}, only {fmt_bytes(avail)} available")
        row.update(t_dense=None, ratio=None, ratio_fit=None, reldiff_decision=None, reldiff_coef=None,
                   ratio_ok=None, diff_ok=None, status="SKIPPED")
        return row
    print(f"  dense: N = nm = {n * m}, {fmt_bytes(per)} per N x N matrix, "
          f"~{fmt_bytes(peak)} at peak ...", flush=True)
    A_d, t_d, bg_d = _timed_solver("dense", solve_dense, args, dense_repeats, row)
    print(f"  dense:      best {min(t_d):.3f} s of {dense_repeats}; other processes used "
          f"{fmt_load(bg_d)} cores meanwhile", flush=True)
    if "dense_peak_rss_increase_bytes" in row and "structured_peak_rss_increase_bytes" in row:
        print(f"  peak RSS increase during the solver calls: structured "
              f"{fmt_bytes(row['structured_peak_rss_increase_bytes'])}, dense "
              f"{fmt_bytes(row['dense_peak_rss_increase_bytes'])} "
              f"(= {row['dense_peak_rss_increase_bytes'] / per:.1f} N x N matrices)", flush=True)

    row["ratio"] = row["t_dense"] / row["t_structured"]
    row["ratio_fit"] = row["t_dense"] / row["t_fit"]
    row["reldiff_coef"] = rel_diff(A_s, A_d)
    row["reldiff_decision"] = rel_diff(decision_values(K, A_s, c), decision_values(K, A_d, c))
    row["ratio_ok"] = None if target is None else bool(row["ratio"] >= target)
    row["diff_ok"] = bool(max(row["reldiff_coef"], row["reldiff_decision"]) <= DIFF_TARGET)
    row["status"] = "PASS" if (row["ratio_ok"] is not False and row["diff_ok"]) else "MISSED"
    del A_s, A_d, K, L, args
    gc.collect()
    return row


def child_large(size, repeats):
    """Body of the child process: build the problem, time solve_structured, report peak RSS."""
    n, m, P, l = size
    rss0 = current_rss_bytes()
    K, labelled, Y_L, c = make_problem(n, m, P, l)
    L = view_laplacians(K, normalized=True)
    gc.collect()
    rss_inputs = current_rss_bytes()
    peak_before_solve = peak_rss_bytes()
    A, times, bg = timed(solve_structured, (K, labelled, Y_L, c, GAMMA_A, GAMMA_B, GAMMA_W, L), repeats)
    finite = bool(np.all(np.isfinite(A)))
    res = {
        "n": n, "m": m, "P": P, "l": l,
        "t_structured_all": times, "t_structured": min(times), "background_load": bg,
        "peak_rss_bytes": peak_rss_bytes(),
        "ru_maxrss_bytes": maxrss_bytes("self"),
        "maxrss_before_solve_bytes": peak_before_solve,
        "rss_after_imports_bytes": rss0,
        "rss_with_inputs_bytes": rss_inputs,
        "kernels_bytes": K.nbytes, "laplacians_bytes": L.nbytes,
        "coef_bytes": A.nbytes, "coef_finite": finite,
        "blas": blas_info()["blas"],
    }
    print("CHILD_RESULT " + json.dumps(res), flush=True)


def run_large(size, repeats):
    n, m, P, l = size
    print(f"\n[large] {size_str(size)}: structured solver alone, in a fresh child process ...",
          flush=True)
    cmd = [sys.executable, os.path.abspath(__file__), "--_child-large",
           ":".join(map(str, size)), "--repeats", str(repeats)]
    parent_peak = peak_rss_bytes()
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise RuntimeError(f"child process failed with exit code {proc.returncode}")
    line = [s for s in proc.stdout.splitlines() if s.startswith("CHILD_RESULT ")][-1]
    res = json.loads(line[len("CHILD_RESULT "):])
    res["ru_maxrss_children_bytes"] = maxrss_bytes("children")
    res["parent_peak_rss_at_spawn_bytes"] = parent_peak
    per, persistent, peak = dense_memory_bytes(n, m)
    res.update(dense_bytes_per_NxN=per, dense_bytes_persistent=persistent,
               dense_bytes_estimated_peak=peak, mem_target_bytes=MEM_TARGET_BYTES)
    res["mem_ok"] = bool(res["peak_rss_bytes"] < MEM_TARGET_BYTES)
    res["status"] = "PASS" if res["mem_ok"] and res["coef_finite"] else "MISSED"
    return res


# ---------------------------------------------------------------- output


def print_table(rows):
    w = max([5] + [len(r["name"]) for r in rows])
    head = (f"{'size':>{w}} {'n':>5} {'m':>3} {'P':>4} {'l':>5} {'t_dense[s]':>10} {'t_struct[s]':>11} "
            f"{'ratio':>7} {'t_fit[s]':>8} {'fit_ratio':>9} {'target':>7} {'ratio?':>6} {'rdiff_dec':>9} "
            f"{'rdiff_coef':>10} "
            f"{'diff?':>5} {'status':>7} {'bg_load':>7}")
    print("\n" + head)
    print("-" * len(head))
    for r in rows:
        tgt = "-" if r["ratio_target"] is None else f">={r['ratio_target']:g}"
        if r["t_dense"] is None:
            print(f"{r['name']:>{w}} {r['n']:>5} {r['m']:>3} {r['P']:>4} {r['l']:>5} {'skipped':>10} "
                  f"{r['t_structured']:>11.3f} {'-':>7} {r['t_fit']:>8.3f} {'-':>9} {tgt:>7} {'-':>6} {'-':>9} "
                  f"{'-':>10} {'-':>5} "
                  f"{r['status']:>7} {fmt_load(r['background_load_structured']):>7}")
            continue
        rok = "-" if r["ratio_ok"] is None else ("PASS" if r["ratio_ok"] else "FAIL")
        dok = "PASS" if r["diff_ok"] else "FAIL"
        print(f"{r['name']:>{w}} {r['n']:>5} {r['m']:>3} {r['P']:>4} {r['l']:>5} {r['t_dense']:>10.3f} "
              f"{r['t_structured']:>11.3f} {r['ratio']:>7.1f} {r['t_fit']:>8.3f} {r['ratio_fit']:>9.1f} "
              f"{tgt:>7} {rok:>6} "
              f"{r['reldiff_decision']:>9.1e} {r['reldiff_coef']:>10.1e} {dok:>5} {r['status']:>7} "
              f"{fmt_load(bg_max(r)):>7}")
    print(f"(ratio = t_dense / t_structured, same run; t_fit = MVLLeastSquares(kernel='precomputed', "
          f"solver='structured').fit on the same problem, fit_ratio = t_dense / t_fit; "
          f"rdiff = max|structured - dense| / max|dense| "
          f"of decision values on the training points and of the coefficients; diff target "
          f"<= {DIFF_TARGET:g}; bg_load = cores used by other processes during the timed calls, max "
          f"of structured and dense)")


def bg_max(r):
    vals = [r.get("background_load_structured"), r.get("background_load_fit"), r.get("background_load_dense")]
    vals = [v for v in vals if v is not None]
    return max(vals) if vals else None


def print_large(res):
    print(f"\nstructured alone, {size_str((res['n'], res['m'], res['P'], res['l']))}: "
          f"time {res['t_structured']:.3f} s (best of {len(res['t_structured_all'])}: "
          f"{', '.join(f'{t:.3f}' for t in res['t_structured_all'])}); other processes used "
          f"{fmt_load(res['background_load'])} cores meanwhile")
    print(f"  PEAK MEMORY (whole child process, peak RSS = VmHWM): {fmt_bytes(res['peak_rss_bytes'])} "
          f"(target < {fmt_bytes(MEM_TARGET_BYTES)}) -> {'PASS' if res['mem_ok'] else 'MISSED'}")
    print(f"  cross-check: child's own ru_maxrss {fmt_bytes(res['ru_maxrss_bytes'])}, parent's "
          f"RUSAGE_CHILDREN ru_maxrss {fmt_bytes(res['ru_maxrss_children_bytes'])} (can include the "
          f"parent's peak at spawn, {fmt_bytes(res['parent_peak_rss_at_spawn_bytes'])}, hence the "
          f"large run goes first)")
    print(f"  for context: input kernels K {fmt_bytes(res['kernels_bytes'])}, Laplacians L "
          f"{fmt_bytes(res['laplacians_bytes'])}; RSS after imports "
          f"{fmt_bytes(res['rss_after_imports_bytes'] or 0)}, with inputs built "
          f"{fmt_bytes(res['rss_with_inputs_bytes'] or 0)}, peak before the solver "
          f"{fmt_bytes(res['maxrss_before_solve_bytes'])}")
    print(f"  dense system would need: N = nm = {res['n'] * res['m']}, (nm)^2 * 8 B = "
          f"{fmt_bytes(res['dense_bytes_per_NxN'])} per N x N matrix; solve_dense holds "
          f"{DENSE_NN_ARRAYS_PERSISTENT} of them (G, Mop, Lbig, B) = "
          f"{fmt_bytes(res['dense_bytes_persistent'])}; its measured peak is ~{DENSE_NN_ARRAYS_PEAK} "
          f"of them: ~{fmt_bytes(res['dense_bytes_estimated_peak'])}")
    if not res["coef_finite"]:
        print("  WARNING: the structured solver returned non-finite coefficients")


def write_json(path, payload):
    path = os.path.abspath(path)
    d = os.path.dirname(path)
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".bench_", suffix=".json.tmp", dir=d)
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(payload, fh, indent=2)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


# ---------------------------------------------------------------- main


def parse_size(s):
    try:
        size = tuple(int(v) for v in s.split(":"))
    except ValueError:
        size = ()
    if len(size) != 4 or min(size) < 1:
        raise argparse.ArgumentTypeError(f"size must be a name or n:m:P:l, got {s!r}")
    return size


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="small sizes for a smoke run (< 20 s); no ratio targets")
    ap.add_argument("--sizes", nargs="+", metavar="SIZE",
                    help="sizes to run: A B C large (full), qA qB qC large (--quick), or n:m:P:l "
                         "(structured vs dense, no target). Default: all")
    ap.add_argument("--repeats", type=int, default=3, help="structured runs, best taken (default 3)")
    ap.add_argument("--dense-repeats", type=int, default=1, help="dense runs, best taken (default 1)")
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON (atomically)")
    ap.add_argument("--_child-large", dest="child_large", type=parse_size, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.child_large is not None:
        child_large(args.child_large, args.repeats)
        return 0

    compare_sizes = QUICK_COMPARE_SIZES if args.quick else COMPARE_SIZES
    large_size = QUICK_LARGE_SIZE if args.quick else LARGE_SIZE
    names = args.sizes or [*compare_sizes, "large"]
    plan = []
    for s in names:
        if s == "large":
            plan.append(("large", large_size, None))
        elif s in compare_sizes:
            plan.append((s, *compare_sizes[s]))
        elif s in COMPARE_SIZES or s in QUICK_COMPARE_SIZES:
            plan.append((s, *(COMPARE_SIZES | QUICK_COMPARE_SIZES)[s]))
        else:
            try:
                plan.append((s, parse_size(s), None))
            except argparse.ArgumentTypeError as e:
                ap.error(str(e))

    info = blas_info()
    print("MVL-LS benchmark: solve_structured vs solve_dense"
          + (" (--quick)" if args.quick else ""))
    print_env(info)
    print(f"gamma_A={GAMMA_A:g}, gamma_B={GAMMA_B:g}, gamma_W={GAMMA_W:g}, normalized Laplacian, "
          f"seed={SEED}; structured best of {args.repeats}, dense best of {args.dense_repeats}")

    t_start = time.perf_counter()
    rows, large = [], None
    # The structured-alone child runs first, while this process is still small:
    # its ru_maxrss can inherit this process's peak RSS (see peak_rss_bytes).
    for name, size, target in sorted(plan, key=lambda t: t[0] != "large"):
        if name == "large":
            large = run_large(size, args.repeats)
        else:
            rows.append(run_compare(name, size, target, args.repeats, args.dense_repeats))

    print("\n" + "=" * 30 + " RESULTS " + "=" * 30)
    if rows:
        print_table(rows)
    if large is not None:
        print_large(large)
    loads = [bg_max(r) for r in rows] + ([large["background_load"]] if large else [])
    loads = [v for v in loads if v is not None]
    if loads and max(loads) > BG_LOAD_WARN:
        print(f"\nWARNING: other processes used up to {max(loads):.2f} of the {os.cpu_count()} cores "
              f"during the timed calls: timings and ratios are unreliable; rerun on an idle machine.")
    missed = [r["name"] for r in rows if r["status"] == "MISSED"]
    if large is not None and large["status"] == "MISSED":
        missed.append("large")
    print()
    if missed:
        print(f"MISSED: targets missed for {', '.join(missed)} (see table above)")
    else:
        print("all targets met" if (rows or large) else "nothing run")
    print(f"total wall time {time.perf_counter() - t_start:.1f} s")

    if args.json:
        write_json(args.json, {
            "benchmark": "bench_least_squares",
            "quick": args.quick,
            "gammas": {"gamma_A": GAMMA_A, "gamma_B": GAMMA_B, "gamma_W": GAMMA_W},
            "seed": SEED, "repeats": args.repeats, "dense_repeats": args.dense_repeats,
            "diff_target": DIFF_TARGET, "environment": info,
            "compare": rows, "large": large, "missed": missed,
        })
        print(f"results written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
