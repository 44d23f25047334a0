"""The solver registry (mvl.solvers): each solver lives once, under its name, declares what it needs, and the
estimators' ``solver`` parameters come from it."""

from __future__ import annotations

import pytest

from mvl import MVLLeastSquares, MVLLeastSquaresOptC
import mvl.solvers as mvl_solvers
from mvl.solvers import SOLVERS, Solver, get_solver, solver_names


def test_every_solver_is_registered_once_under_its_name():
    assert set(SOLVERS) == {"structured", "dense", "cg", "nystrom", "graph", "vecchia_direct", "vecchia"}
    for name, solver in SOLVERS.items():
        assert isinstance(solver, Solver) and solver.name == name and get_solver(name) is solver


def test_unknown_names_are_refused_with_the_registered_ones():
    with pytest.raises(ValueError, match="unknown solver 'qr'.*'cg'"):
        get_solver("qr")


def test_the_declarations_state_what_each_solver_needs():
    assert solver_names(operator=True) == {"cg", "nystrom", "graph", "vecchia_direct", "vecchia"}
    assert solver_names(exact=False) == {"nystrom", "vecchia_direct", "vecchia"}
    assert solver_names(missing_views=False) == {"graph", "vecchia_direct"}
    assert solver_names(nystrom_basis=True) == {"cg", "nystrom"}
    assert solver_names(keeps_kernels=False) == {"nystrom", "vecchia_direct", "vecchia"}
    assert SOLVERS["dense"].memory_bytes(10, 2, 3) > SOLVERS["structured"].memory_bytes(10, 2, 3) > 0
    assert all(SOLVERS[n].memory_bytes(10, 2, 3) is None for n in solver_names(operator=True) - {"vecchia"})
    assert SOLVERS["vecchia"].memory_bytes(10, 2, 3) > 0  # sparse factors, O(n (k + q)) per view


def test_the_estimators_solver_options_are_the_registry_names():
    ls = MVLLeastSquares._parameter_constraints["solver"][0].options
    optc = MVLLeastSquaresOptC._parameter_constraints["solver"][0].options
    assert ls == set(SOLVERS) | {"auto"}
    assert optc == solver_names(optc=True) | {"auto"} and "dense" not in optc




class _HalfDeclared(Solver):
    """A solver that declares a name and losses but neither auto_rank nor auto_accepts."""

    name = "half"
    losses = ("squared",)


def test_a_half_declared_solver_is_refused_naming_what_is_missing():
    with pytest.raises(TypeError, match=r"auto_rank \(missing\), auto_accepts \(missing\)"):
        mvl_solvers.register(_HalfDeclared())
    assert "half" not in SOLVERS


def test_a_solver_without_memory_bytes_is_refused_at_registration():
    class NoMemory:
        name = "nomemory"
        losses = ("squared",)
        missing_views = True
        sparse_graph = False
        auto_rank = None

        def auto_accepts(self, regime):
            return False

    with pytest.raises(TypeError, match=r"memory_bytes \(missing\)"):
        mvl_solvers.register(NoMemory())
    assert "nomemory" not in SOLVERS


def test_ill_typed_declarations_are_named():
    bad = _HalfDeclared()
    bad.losses = ("hinge",)
    bad.auto_rank = "first"
    bad.auto_accepts = lambda regime: True
    with pytest.raises(TypeError, match=r"losses \(a non-empty tuple.*auto_rank \(an int"):
        mvl_solvers.register(bad)


def test_register_and_unregister_round_trip():
    ok = _HalfDeclared()
    ok.auto_rank = None
    ok.auto_accepts = lambda regime: False
    try:
        assert mvl_solvers.register(ok) is ok and get_solver("half") is ok and "half" in solver_names(losses=ok.losses)
        with pytest.raises(ValueError, match="already registered"):
            mvl_solvers.register(ok)
    finally:
        assert mvl_solvers.unregister("half") is ok
    assert "half" not in SOLVERS
    with pytest.raises(ValueError, match="unknown solver 'half'"):
        mvl_solvers.unregister("half")


def test_every_registered_solver_declares_its_losses_and_a_rank():
    losses = {n: s.losses for n, s in SOLVERS.items()}
    assert losses == {**{n: ("squared",) for n in SOLVERS if n != "vecchia"}, "vecchia": ("poisson", "squared+poisson")}
    ranks = {n: s.auto_rank for n, s in SOLVERS.items()}
    assert ranks == {"structured": 0, "vecchia_direct": 1, "cg": 2, "nystrom": 3, "dense": None, "graph": None,
                     "vecchia": None}


def test_the_guides_toy_solver_is_chosen_by_auto_and_fits_as_dense(capsys):
    import re
    from pathlib import Path

    guide = Path(__file__).resolve().parents[2] / "docs" / "guide" / "extending.md"
    section = guide.read_text().split("## Adding a solver", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    namespace = {}
    exec(compile(block, str(guide), "exec"), namespace)
    name, gap = capsys.readouterr().out.split()
    assert name == "toy_dense" and namespace["auto"].solver_ == "toy_dense"
    assert namespace["dense"].solver_ == "dense" and float(gap) == 0.0  # the same dense solve, bit for bit
    assert "toy_dense" not in SOLVERS  # unregistered by the block
    half = namespace["ToyDense"]()
    del type(half).auto_rank
    with pytest.raises(TypeError, match=r"auto_rank \(missing\)"):
        mvl_solvers.register(half)
