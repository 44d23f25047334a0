"""Wall clock per phase of the first fit (MVLLeastSquares(views=sizes), package defaults) on multi-view MNIST.

Each phase's function is wrapped by a timer; the data standardisation is outside. Usage::

    PYTHONPATH=src python benchmarks/profile_first_fit.py [labels per class, default 1]

One process, one run: under machine load the seconds are upper bounds (the 1-min load average is printed).
"""

from __future__ import annotations

import collections
import functools
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

SECONDS = collections.defaultdict(float)


def _wrap(owner, name, label):
    """Time every call of owner.name under ``label`` (nothing if the attribute does not exist)."""
    f = getattr(owner, name, None)
    if f is None:
        return

    @functools.wraps(f)
    def timed(*args, **kwargs):
        t = time.perf_counter()
        try:
            return f(*args, **kwargs)
        finally:
            SECONDS[label] += time.perf_counter() - t

    setattr(owner, name, timed)


def main(labels=1):
    import mvl.estimators.fit_route as fr
    import mvl.estimators.inputs as inp
    import mvl.estimators.poisson_fit as pf
    import mvl.solvers.poisson as po
    import mvl.solvers.rules as ru
    from bench_first_fit import _data
    from mvl import MVLLeastSquares

    for cls in MVLLeastSquares.__mro__:
        if "_fit_kernels" in cls.__dict__:
            _wrap(cls, "_fit_kernels", "kernels (distances, bandwidths, exp, checks)")
            break
    _wrap(inp, "squared_distances", "  of which squared distances")
    _wrap(inp, "_rbf_bandwidth", "  of which bandwidth rule")
    _wrap(inp, "check_multiview_kernels", "  of which kernel checks")
    _wrap(fr, "_source_graph", "graph (GraphSpace, 10-NN search, weights, L)")
    _wrap(pf, "poisson_gammas", "gamma rule")
    _wrap(po.PoissonOperator, "__init__", "solve: L K products and m LU factorisations")
    _wrap(po, "_sparse_dense_product", "  of which L K products")
    _wrap(po.PoissonOperator, "solve", "solve: triangular solves")
    _wrap(po, "residual", "residual check")
    _wrap(po, "fit_decision", "fit_decision")
    _wrap(ru, "present_view_induction", "  induction rule (in predict)")
    views, ytr, y = _data("mvmnist", 5000, labels, 0)
    X = np.hstack(views)
    unl = ytr < 0
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    est = MVLLeastSquares(views=[v.shape[1] for v in views]).fit(X, ytr)
    t1 = time.perf_counter()
    pred = est.predict(X)
    t2 = time.perf_counter()
    SECONDS["predict of the training points"] = t2 - t1
    print(f"labels/class {labels}  load {load:.1f}  accuracy {100 * np.mean(pred[unl] == y[unl]):.2f}  "
          f"fit {t1 - t0:.2f} s  fit+predict {t2 - t0:.2f} s")
    top = 0.0
    for label, s in SECONDS.items():
        print(f"  {label:55s} {s:6.2f}")
        if not label.startswith("  ") and label != "predict of the training points":
            top += s
    print(f"  {'rest of fit (validation, labels, K A products, ...)':55s} {t1 - t0 - top:6.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
