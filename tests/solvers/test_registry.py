"""The solver registry (mvl.solvers): each solver lives once, under its name, declares what it carries, is refused
at registration when a declaration is missing, and the estimators' ``solver`` options, their checks and
``solver="auto"`` read from it. The user guide's "Adding a solver" runs here as written."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from mvl import MVLLeastSquares, MVLLeastSquaresOptC
from mvl.solvers import SOLVERS, FitSpec, Solver, SolverResult, get_solver, register, solver_names, unregister
from mvl.solvers.problem import REQUIRED, missing_declarations

ROOT = Path(__file__).resolve().parents[2]


def test_every_solver_is_registered_once_under_its_name():
    assert set(SOLVERS) == {"structured", "dense", "cg", "nystrom", "graph", "vecchia_direct"}
    for name, solver in SOLVERS.items():
        assert isinstance(solver, Solver) and solver.name == name and get_solver(name) is solver
        assert missing_declarations(solver) == []


def test_unknown_names_are_refused_with_the_registered_ones():
    with pytest.raises(ValueError, match="unknown solver 'qr'.*'cg'"):
        get_solver("qr")


def test_the_declarations_state_what_each_solver_needs():
    assert solver_names(operator=True) == {"cg", "nystrom", "graph", "vecchia_direct"}
    assert solver_names(inputs="dense") == {"structured", "dense"}
    assert solver_names(exact=False) == {"nystrom", "vecchia_direct"}
    assert solver_names(missing_views=False) == {"graph", "vecchia_direct"}
    assert solver_names(nystrom_basis=True) == {"cg", "nystrom"}
    assert solver_names(keeps_kernels=False) == {"nystrom", "vecchia_direct"}
    assert solver_names(auto_rank=None) == {"dense", "graph"}
    assert {n for n, s in SOLVERS.items() if "poisson" in s.losses} == {"structured", "dense"}
    spec = FitSpec(n=10, m=2, l=3)
    # (3m + 1) n^2 + (l + n)^2 float64s for "structured", 4 (nm)^2 for "dense", written out
    assert SOLVERS["structured"].memory_bytes(spec) == 8 * (7 * 100 + 13**2)
    assert SOLVERS["dense"].memory_bytes(spec) == 8 * 4 * 20**2
    assert all(SOLVERS[n].memory_bytes(spec) is None for n in solver_names(operator=True))


def test_the_estimators_solver_options_are_the_registry_names():
    ls = MVLLeastSquares._parameter_constraints["solver"][0].options
    optc = MVLLeastSquaresOptC._parameter_constraints["solver"][0].options
    assert ls == set(SOLVERS) | {"auto"}
    assert optc == solver_names(optc=True) | {"auto"} and "dense" not in optc


class _Full(Solver):
    name = "full"
    losses = ("squared",)
    missing_views = False
    sparse_graph = False
    optc = False
    inputs = "dense"
    auto_rank = None

    def memory_bytes(self, spec):
        return None

    def auto_accepts(self, spec):
        return False


@pytest.mark.parametrize("missing", REQUIRED)
def test_a_solver_without_a_required_declaration_is_refused_naming_it(missing):
    attrs = {k: v for k, v in vars(_Full).items() if k != missing and not k.startswith("__")}
    Half = type("Half", (Solver,), attrs)
    with pytest.raises(TypeError, match=rf"Half cannot be registered: it does not declare {missing}\b"):
        register(Half())
    assert "full" not in SOLVERS


def test_wrong_declarations_and_taken_names_are_refused():
    bad = type("Bad", (_Full,), {"losses": ("huber",), "inputs": "sparse"})
    with pytest.raises(TypeError, match="does not declare losses, inputs"):
        register(bad())
    with pytest.raises(TypeError, match="instance of mvl.solvers.problem.Solver"):
        register(object())
    with pytest.raises(ValueError, match="already registered as 'cg'"):
        register(type("Other", (_Full,), {"name": "cg"})())
    with pytest.raises(ValueError, match="unknown solver 'none'"):
        unregister("none")


def test_a_solver_without_memory_bytes_is_refused_not_a_crash_at_fit():
    NoMemory = type("NoMemory", (Solver,), {k: v for k, v in vars(_Full).items()
                                           if k != "memory_bytes" and not k.startswith("__")})
    with pytest.raises(TypeError, match="NoMemory cannot be registered: it does not declare memory_bytes"):
        register(NoMemory())


def _guide_code():
    text = (ROOT / "docs" / "guide" / "extending.md").read_text()
    section = text.split("## Adding a solver", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1
    return blocks[0]


@pytest.fixture
def guide_solver():
    namespace = {}
    exec(compile(_guide_code(), "extending.md", "exec"), namespace)  # registers "textbook"
    try:
        yield namespace
    finally:
        unregister("textbook")


def _blobs(seed=0, n_per_class=20):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(3), n_per_class)
    X = np.hstack([rng.normal(size=(y.size, 3)) + 2.0 * y[:, None], rng.normal(size=(y.size, 2)) + y[:, None]])
    return X, y


def test_the_guide_s_solver_is_chosen_by_auto_meets_the_contract_and_fits(guide_solver):
    sys.path.insert(0, str(ROOT / "tests" / "estimators"))
    try:
        import contract_cases
    finally:
        sys.path.pop(0)
    assert "textbook" in SOLVERS and "textbook" in MVLLeastSquares._parameter_constraints["solver"][0].options
    X, y = _blobs()
    Xt, yt = _blobs(1)
    ys = y.copy()
    ys[np.arange(y.size) % 20 >= 8] = -1  # 8 labels per class: the squared loss
    est = MVLLeastSquares(views=[3, 2]).fit(X, ys)
    assert est.solver_ == "textbook" and est.loss_ == "squared"
    ref = MVLLeastSquares(views=[3, 2], solver="structured").fit(X, ys)  # Theorem 10 view by view
    np.testing.assert_allclose(est.decision_function(Xt), ref.decision_function(Xt), rtol=1e-8, atol=1e-10)
    assert est.score(Xt, yt) > 0.8 and est.residual_ < 1e-8 and est.converged_
    # beyond its auto_accepts (n <= 500) "auto" keeps today's choice
    big = FitSpec(n=600, m=2, l=30, max_memory=1e12)
    from mvl.solvers import choose

    assert choose(big).solver == "structured"
    # "auto" with few labels tries the Poisson-type term first: the guide's solver does not carry it
    few = y.copy()
    few[np.arange(y.size) % 20 >= 2] = -1
    assert MVLLeastSquares(views=[3, 2]).fit(X, few).solver_ == "structured"
    with pytest.raises(ValueError, match=r'loss="poisson" is solved by solver .*not solver="textbook"'):
        MVLLeastSquares(views=[3, 2], solver="textbook", loss="poisson").fit(X, few)
    cells = [c for c in contract_cases.cells() if c.solver == "textbook"]
    assert {c.estimator for c in cells} == {"MVLLeastSquares"} and len(cells) >= 15
    assert any(c.views == "incomplete" for c in cells)  # the documented limitation: an error naming complete views
    failed = [(c.id, r.outcome, r.detail) for c in cells if not (r := contract_cases.run(c)).ok]
    assert failed == []


def test_no_estimator_branches_on_a_solver_s_name_or_reads_an_info_dict():
    pattern = re.compile(r"""\b(solver_?|name|\.name)\s*(==|!=)\s*["']|(?<!for )\b(solver_?|name)\s+(not\s+)?in\s*"""
                         r"""[\(\[\{]|\binfo\[|\.info\b|POISSON_SOLVERS""")
    hits = [f"{p.name}:{i}: {line.strip()}" for p in sorted((ROOT / "src" / "mvl" / "estimators").glob("*.py"))
            for i, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert hits == []
    # the pattern finds what it looks for
    assert pattern.search('nodes = f() if name == "vecchia_direct" else None')
    assert pattern.search('if est.solver in ("structured", "dense"):')
    assert pattern.search("if est.solver in POISSON_SOLVERS:")
    assert pattern.search('rows = (result.info or {}).get("prediction_kernels")')
    assert not pattern.search('for name in ("gamma_A", "gamma_B"):')


def test_a_typed_result_carries_what_the_info_dict_did():
    result = SolverResult(np.zeros((1, 2, 2)))
    assert result.gamma_A is None and result.rule is None and result.breakdown is None and result.details is None
