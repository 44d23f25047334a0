"""Benchmark: the paper profile's SVM unit of one Caltech-101 split, run by run, in MVL-LS fits.

What is measured
----------------
The workflow runs every method family of a split as one unit; the paper profile's Caltech-101 SVM unit
(config/paper.yaml, ``caltech101_v4`` or ``caltech101_v10``) fits MVL-SVM and MVL-binSVM at l_c in
{1, 5, 10, 15} supervised, at l_c in {1, 5, 10} with u_c = 5 unlabelled per class, and the gamma_B /
gamma_W ablation of both (4 fits each) at l_c in {1, 5}, u_c = 5. With 102 classes and every image's
flipped copy, the largest run has n = l = 3,060 (m = 4 or 10 views).

The data are a format-faithful fixture of the real shapes (``tests/paper_fixtures.write_caltech101``:
102 classes, 15 training images per class plus their flipped copies, 15 test images per class, the ten
kernels of Vedaldi et al. in the authors' MAT layout, one split), written once into ``--fixture-dir`` and
loaded by ``mvl.data.paper.load_caltech101`` as the workflow's ``prepare`` rule does. The script then runs
the unit's tasks as ``mvl.workflow.runner.run_unit`` does (same draws, same estimators from the method
registry, same gammas and graph), timing each run, and, for each distinct training set, one structured
MVL-LS fit (``MVLLeastSquares``, the unit of the cost model): a run's cost in fits is its time over that
fit's. It prints the measured cost per method beside the registry's ``Method.fits`` and the unit's total
beside ``mvl.workflow.runner.unit_cost``.

``--solver smo`` runs the SVMs with the old default solver (the block SMO; ``--solver auto`` is today's
default: ADMM for MVL-SVM, SMO for the binary problems of MVL-binSVM), so that the unit's time before and
after can be measured on the same data. ``--lc`` and ``--methods`` restrict the runs (the old SMO needs long
at l_c = 15: a measurement can be split into parts).

How to run
----------
From the repository root, with the project's virtualenv (first run: ~3 min to write the fixture, 0.5 GB)::

    python benchmarks/bench_svm_family.py --fixture-dir /tmp/caltech-fixture
    python benchmarks/bench_svm_family.py --fixture-dir /tmp/caltech-fixture --solver smo --lc 1 5
    python benchmarks/bench_svm_family.py --fixture-dir /tmp/caltech-fixture --dataset caltech101_v10
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tests"))
from bench_least_squares import blas_info, print_env, write_json  # noqa: E402

import mvl.estimators.svm  # noqa: E402
from mvl import MVLLeastSquares  # noqa: E402
from mvl.workflow.experiments import run_on_draw  # noqa: E402
from mvl.workflow.methods import method  # noqa: E402
from mvl.workflow.runner import draw, views_of  # noqa: E402
from mvl.workflow.settings import _merge, load_study  # noqa: E402


def dataset_settings(name):
    """The :class:`mvl.workflow.settings.DatasetSettings` of ``name`` in the paper profile: config/config.yaml,
    config/mfeat_full.yaml and config/paper.yaml merged in that order (profiles/paper/config.yaml), as the
    workflow loads them."""
    config = {}
    for f in ("config.yaml", "mfeat_full.yaml", "paper.yaml"):
        _merge(config, yaml.safe_load((ROOT / "config" / f).read_text()))
    config["datasets"] = [name]
    return load_study(config)[name]


def prepared_split(fixture_dir, views, split=1):
    """The Caltech-101 fixture of the real shapes (written once) loaded as the ``prepare`` rule loads it."""
    from paper_fixtures import write_caltech101

    from mvl.data.paper import load_caltech101

    root = Path(fixture_dir)
    if not (root / "caltech101" / "cal101-meta" / f"meta-15-{split}.mat").exists():
        print(f"writing the Caltech-101 fixture (102 classes, 15 + 15 flipped training images, 15 test) to {root} ...",
              flush=True)
        t0 = time.perf_counter()
        write_caltech101(root, n_classes=102, n_orig=15, n_test=15, splits=(split,), seed=0)
        print(f"  written in {time.perf_counter() - t0:.0f} s", flush=True)
    data = load_caltech101(split=split, views=views, root=root / "caltech101")
    from mvl.workflow.prepared import load_prepared, save_prepared

    with tempfile.TemporaryDirectory() as tmp:  # as the unit reads it back
        save_prepared(Path(tmp) / "part.npz", data)
        return load_prepared(Path(tmp) / "part.npz")


def use_solver(solver):
    """Make ``solver`` the SVMs' default (the workflow builds them with the default solver)."""
    init = mvl.estimators.svm._SVMBase.__init__
    names = init.__code__.co_varnames[1:init.__code__.co_argcount]
    defaults = list(init.__defaults__)
    defaults[names.index("solver") - (len(names) - len(defaults))] = solver
    init.__defaults__ = tuple(defaults)


def ls_fit_seconds(d, run, repeats=2):
    """One structured MVL-LS fit on the draw's training set (the cost model's unit: the paper's dense graph, the
    configured gammas), best of ``repeats``."""
    g = run.gammas
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        MVLLeastSquares(gamma_A=g.A, gamma_B=g.B, gamma_W=g.W, kernel="precomputed",
                        n_neighbors=None).fit(d.K_tr, d.y_train)
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fixture-dir", required=True, help="folder for the Caltech-101 fixture (written if absent)")
    ap.add_argument("--dataset", default="caltech101_v4", choices=["caltech101_v4", "caltech101_v10"])
    ap.add_argument("--solver", default="auto", choices=["auto", "smo", "admm", "lbfgsb"],
                    help="the SVMs' solver (auto: today's default; smo: the old default)")
    ap.add_argument("--lc", nargs="+", type=int, help="only the runs with these l_c")
    ap.add_argument("--methods", nargs="+", help="only these methods (e.g. mvl_svm mvl_svm_ablation)")
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON (atomically)")
    args = ap.parse_args(argv)

    settings = dataset_settings(args.dataset)
    unit = settings.unit("svm")
    run, data_spec = unit.run, unit.data
    views = list(data_spec.views)
    tasks = list(unit.tasks)
    # 15 original training images per class: runs with more labelled images per class cannot be drawn (the
    # top-level `comparison` section, l_c in {5, 10, 20, 40}, is inherited by every dataset of the profile)
    skipped = [t for t in tasks if t[0] + t[1] > 15]
    tasks = [t for t in tasks if t not in skipped and (args.lc is None or t[0] in args.lc)
             and (args.methods is None or t[2] in args.methods)]
    use_solver(args.solver)
    info = blas_info()
    print(f"SVM unit of {args.dataset}, split 1 (fixture of the real shapes), solver {args.solver!r}: "
          f"{len(tasks)} runs")
    print_env(info)
    if skipped:
        print(f"skipped (more than the 15 training images per class): {skipped}")
    source = prepared_split(args.fixture_dir, views)
    seed = 1
    ls_seconds = {}
    rows = []
    t_unit = time.perf_counter()
    for lc, uc, name in tasks:
        m = method(name)
        d = draw(source, seed, lc, uc, data_spec, views_of(m, views), m.needs_validation)
        n, nl = d.K_tr.shape[0], int(d.n_labelled)
        if (lc, uc) not in ls_seconds:
            ls_seconds[lc, uc] = ls_fit_seconds(d, run)
        t0 = time.perf_counter()
        out = run_on_draw(name, d, lc, uc, run, d.view_names, dataset=args.dataset, seed=seed)
        t = time.perf_counter() - t0
        fits = t / ls_seconds[lc, uc]
        rows.append(dict(method=name, l_c=lc, u_c=uc, n=n, l=nl, seconds=t, ls_fit_seconds=ls_seconds[lc, uc],
                         cost_in_fits=fits, registry_fits=m.fits, accuracy=[r["accuracy"] for r in out]))
        print(f"  {name:<20} l_c={lc:>2} u_c={uc} (n={n:>4}, l={nl:>4}): {t:8.2f} s = {fits:6.1f} MVL-LS fits "
              f"(registry {m.fits:g}); accuracy {', '.join(format(r['accuracy'], '.3f') for r in out)}", flush=True)
    total = time.perf_counter() - t_unit
    ls_total = sum(ls_seconds.values())
    print(f"\nruns: {sum(r['seconds'] for r in rows):.1f} s; with the MVL-LS reference fits: {total:.1f} s "
          f"(of which {ls_total:.1f} s reference fits)")
    print("per method: measured cost in MVL-LS fits of the same size (median over its runs) vs the registry")
    for name in dict.fromkeys(r["method"] for r in rows):
        mine = [r for r in rows if r["method"] == name]
        cost = np.median([r["cost_in_fits"] for r in mine])
        print(f"  {name:<20} {cost:6.1f} (registry {mine[0]['registry_fits']:g}; "
              f"{sum(r['seconds'] for r in mine):.1f} s over {len(mine)} runs)")
    sizes = {(r["l_c"], r["u_c"]): r["n"] for r in rows}
    if args.lc is None and args.methods is None:
        # DatasetSettings.unit_cost over the drawable runs: the registry's fits at each run's relative size
        big = max(sizes, key=sizes.get)
        est = sum(method(name).fits * (sizes[lc, uc] / sizes[big]) ** 3 for lc, uc, name in tasks)
        print(f"unit_cost estimate: {est:.1f} fits at the largest size (n = {sizes[big]}) = "
              f"{est * ls_seconds[big]:.1f} s with the measured MVL-LS fit of {ls_seconds[big]:.2f} s; measured "
              f"{sum(r['seconds'] for r in rows):.1f} s")
    if args.json:
        write_json(args.json, {"benchmark": "bench_svm_family", "dataset": args.dataset, "solver": args.solver,
                               "environment": info, "rows": rows, "total_seconds": total})
        print(f"results written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
