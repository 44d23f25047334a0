"""The registry of MVL-LS solvers: each solver once, under its name, with its declarations checked at registration
(:func:`register`); the estimators' ``solver`` options, the problem builder's checks and ``solver="auto"``
(:func:`choose`) read from it."""

from __future__ import annotations

from .problem import REGISTRY, Solver, missing_declarations

__all__ = ["REGISTRY", "register", "unregister", "get_solver", "solver_names", "choose"]


def register(solver):
    """Add ``solver`` (a :class:`mvl.solvers.problem.Solver` instance) under its name; returns it. Raises TypeError
    naming each required declaration it does not make (:func:`mvl.solvers.problem.missing_declarations`), and
    ValueError when the name is taken by another solver."""
    if not isinstance(solver, Solver):
        raise TypeError(f"a solver is an instance of mvl.solvers.problem.Solver, got {type(solver).__name__}")
    missing = missing_declarations(solver)
    if missing:
        raise TypeError(f"{type(solver).__name__} cannot be registered: it does not declare "
                        f"{', '.join(missing)} (mvl.solvers.problem says what each declaration means)")
    old = REGISTRY.get(solver.name)
    if old is not None and old is not solver:
        raise ValueError(f"a solver is already registered as {solver.name!r} ({old!r}); unregister it first")
    REGISTRY[solver.name] = solver
    return solver


def unregister(name):
    """Remove the solver registered as ``name``; returns it."""
    try:
        return REGISTRY.pop(name)
    except KeyError:
        raise ValueError(f"unknown solver {name!r}; one of {sorted(REGISTRY)}") from None


def get_solver(name):
    """The solver object registered as ``name`` (``"auto"`` is resolved first, by :func:`choose`)."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown solver {name!r}; one of {sorted(REGISTRY)}") from None


def solver_names(**needs):
    """The names of the solvers whose declarations match ``needs`` (e.g. ``optc=True``)."""
    return {name for name, s in REGISTRY.items() if all(getattr(s, k) == v for k, v in needs.items())}


def choose(spec):
    """The :class:`mvl.solvers.auto.Plan` (loss and solver) for a :class:`mvl.solvers.problem.FitSpec`."""
    from .auto import plan

    return plan(spec)
