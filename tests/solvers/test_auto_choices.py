"""solver="auto" over a grid of regimes against a recorded table, ``auto_choices.csv``: for each kernel, size,
memory budget, measured graph regime and kNN graph, the solver chosen and the warning raised. The table was written
by the hand-written rule of :func:`mvl.solvers.choose_solver` (``python tests/solvers/test_auto_choices.py`` with
that code first on the path writes it), so the declarations of the registered solvers must reproduce it."""

from __future__ import annotations

import csv
import itertools
import warnings
from pathlib import Path

TABLE = Path(__file__).with_name("auto_choices.csv")
FIELDS = ("kernel", "n", "m", "l", "max_memory", "regime", "graph", "solver", "warning", "regime_called")


def grid():
    """The regimes: (kernel, n, m, l, max_memory, regime, graph); regime "lazy-x" is a callable returning x."""
    kernels = ("rbf", "precomputed")
    ns = (50, 5000, 5001, 8000, 20000, 20001, 100_000, 1_000_000)
    ms = (1, 3)
    ls = (10, 2000)
    budgets = (1e6, 4e9, 1e13)
    regimes = (None, 0.999, 1.0, 2e3, "lazy-0.5", "lazy-5e5")
    graphs = (None, (10, 2), (50, 2), (10, 1))
    for kernel, n, m, l, mem, regime, graph in itertools.product(kernels, ns, ms, ls, budgets, regimes, graphs):
        if l < n:
            yield kernel, n, m, l, mem, regime, graph


def choose(choose_solver, kernel, n, m, l, mem, regime, graph):
    """(solver chosen, the warnings (category: message) joined by " | ", whether a lazy regime was measured)."""
    called = []
    arg = regime
    if isinstance(regime, str):
        value = float(regime.split("-", 1)[1])

        def arg():
            called.append(1)
            return value

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        chosen = choose_solver("auto", kernel, n, m, l, mem, regime=arg, graph=graph)
    return chosen, " | ".join(f"{type(w.message).__name__}: {w.message}" for w in caught), bool(called)


def key(kernel, n, m, l, mem, regime, graph):
    return (kernel, str(n), str(m), str(l), repr(mem), repr(regime), repr(graph))


def test_auto_reproduces_the_recorded_choices():
    from mvl.solvers import choose_solver

    with TABLE.open() as fh:
        expected = {tuple(r[f] for f in FIELDS[:7]): (r["solver"], r["warning"], r["regime_called"] == "True")
                    for r in csv.DictReader(fh)}
    cases = list(grid())
    assert len(expected) == len(cases) > 1000
    wrong = [(c, expected[key(*c)], got) for c in cases
             if (got := choose(choose_solver, *c)) != expected[key(*c)]]
    assert not wrong, f"{len(wrong)} of {len(cases)} differ, e.g. {wrong[:3]}"
    assert {v[0] for v in expected.values()} == {"structured", "vecchia_direct", "cg", "nystrom"}


if __name__ == "__main__":
    from mvl.solvers import choose_solver

    with TABLE.open("w", newline="") as fh:
        out = csv.writer(fh, lineterminator="\n")
        out.writerow(FIELDS)
        for case in grid():
            out.writerow(key(*case) + tuple(str(x) for x in choose(choose_solver, *case)))


def test_the_fallback_warning_points_at_the_estimators_caller():
    import inspect

    import pytest

    from mvl.solvers import choose_solver
    from mvl.solvers.auto import GraphRegimeFallbackWarning

    def estimator():  # choose_solver's caller (the estimator's fit); the warning names the line that called it
        return choose_solver("auto", "rbf", 8000, 2, 2000, 1e6, regime=2e3, graph=(10, 2))

    with pytest.warns(GraphRegimeFallbackWarning, match="falling back to \"cg\"") as rec:
        line = inspect.currentframe().f_lineno + 1
        assert estimator() == "cg"
    assert rec[0].filename == __file__ and rec[0].lineno == line


def test_the_loss_and_incomplete_views_filter_the_candidates():
    import pytest

    from mvl.solvers import choose_solver

    # the graph regime at 8,000 points: "vecchia_direct", which needs complete views and the squared loss
    assert choose_solver("auto", "rbf", 8000, 2, 20, 1e13, regime=2e3, graph=(10, 2)) == "vecchia_direct"
    assert choose_solver("auto", "rbf", 8000, 2, 20, 1e13, regime=2e3, graph=(10, 2), missing=True) == "cg"
    # the few-label term: "structured" within its range, the sparse "vecchia" beyond and on incomplete views
    assert choose_solver("auto", "rbf", 5000, 2, 20, 1e13, loss="poisson") == "structured"
    assert choose_solver("auto", "rbf", 8000, 2, 20, 1e13, regime=2e3, graph=(10, 2), loss="poisson") == "vecchia"
    assert choose_solver("auto", "rbf", 50, 2, 20, 1e13, loss="poisson", missing=True) == "vecchia"
    assert choose_solver("auto", "precomputed", 8000, 2, 20, 1e13, loss="squared+poisson") == "structured"
    with pytest.raises(ValueError, match="no registered solver accepts.*loss='poisson'"):
        choose_solver("auto", "precomputed", 50, 2, 20, 1e13, loss="poisson", missing=True)
