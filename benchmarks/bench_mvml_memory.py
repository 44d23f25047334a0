"""Memory of an MVML fit: peak resident memory of the process and size of the pickled model.

MVML (``mvl.MVML()`` with its defaults: the learned "full" metric, no Nystrom approximation) is fitted on
n samples of the embedded UCI Multiple Features data (six views, feature input, ``kernel="rbf"``; 10
classes, one-vs-all) in a fresh child process per n, which prints its own peak RSS (VmHWM of
/proc/self/status: interpreter, numpy, the data and the fit) and the size of ``pickle.dumps(model)``, beside
the size of the training input X. The child also prints the fit time (only comparable within one run).

    python benchmarks/bench_mvml_memory.py                 # n = 300 and 1000
    python benchmarks/bench_mvml_memory.py --n 1000
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys


def child(n):
    import pickle
    import time

    import numpy as np

    from mvl import MVML
    from mvl.data.embedded import load_mfeat

    ds = load_mfeat()
    rng = np.random.default_rng(0)
    idx = np.sort(rng.permutation(len(ds.y))[:n])
    X = np.hstack(ds.views)[idx]
    y = ds.y[idx]
    t0 = time.perf_counter()
    model = MVML(views=[v.shape[1] for v in ds.views]).fit(X, y)
    seconds = time.perf_counter() - t0
    size = len(pickle.dumps(model))
    with open("/proc/self/status") as fh:
        hwm = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:")) * 1024
    print(json.dumps(dict(n=n, peak_rss=hwm, pickle_bytes=size, X_bytes=int(X.nbytes), fit_seconds=seconds)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, nargs="+", default=[300, 1000], help="training sizes (default 300 1000)")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    print(f"{'n':>6} {'peak RSS':>10} {'pickle':>10} {'X':>9} {'pickle/X':>9} {'fit':>7}")
    for n in args.n:
        out = subprocess.run([sys.executable, __file__, "--child", str(n)], capture_output=True, text=True,
                             check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{n:>6} {r['peak_rss'] / 1e6:>8.0f} MB {r['pickle_bytes'] / 1e6:>7.1f} MB {r['X_bytes'] / 1e6:>6.1f} MB "
              f"{r['pickle_bytes'] / r['X_bytes']:>9.1f} {r['fit_seconds']:>6.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
