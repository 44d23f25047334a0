"""The registry of MVL-LS solvers: :func:`~mvl.solvers.registry.register` checks a solver's declarations
before it is listed in :data:`~mvl.solvers.registry.SOLVERS`, so that a half-declared solver is refused at
registration rather than failing inside a fit."""

from __future__ import annotations

__all__ = ["LOSSES", "REQUIRED", "SOLVERS", "register", "unregister", "get_solver", "solver_names"]

LOSSES = ("squared", "poisson", "squared+poisson")
"""The losses a solver may declare in its ``losses`` tuple."""

REQUIRED = ("name", "losses", "missing_views", "sparse_graph", "memory_bytes", "auto_rank", "auto_accepts")
"""The declarations :func:`register` requires of every solver."""

SOLVERS = {}
"""Every registered MVL-LS solver by name."""


def _problems(solver):
    """What is missing or wrong in ``solver``'s declarations (empty: it may be registered)."""
    out = [f"{k} (missing)" for k in REQUIRED if not hasattr(solver, k)]
    if hasattr(solver, "name") and not (isinstance(solver.name, str) and solver.name):
        out.append(f"name (a non-empty str, got {solver.name!r})")
    if hasattr(solver, "losses"):
        losses = solver.losses
        if not (isinstance(losses, tuple) and losses and all(x in LOSSES for x in losses)):
            out.append(f"losses (a non-empty tuple of {LOSSES}, got {losses!r})")
    for k in ("missing_views", "sparse_graph"):
        if hasattr(solver, k) and not isinstance(getattr(solver, k), bool):
            out.append(f"{k} (a bool, got {getattr(solver, k)!r})")
    for k in ("memory_bytes", "auto_accepts"):
        if hasattr(solver, k) and not callable(getattr(solver, k)):
            out.append(f"{k} (a method)")
    if hasattr(solver, "auto_rank"):
        rank = solver.auto_rank
        if not (rank is None or (isinstance(rank, int) and not isinstance(rank, bool))):
            out.append(f"auto_rank (an int, or None: never chosen by solver='auto'; got {rank!r})")
    return out


def register(solver):
    """List ``solver`` in :data:`SOLVERS` under its ``name`` and return it. It must declare ``name`` (str),
    ``losses`` (a tuple of :data:`LOSSES`), ``missing_views`` and ``sparse_graph`` (bool), ``memory_bytes(n, m, l)``
    (peak bytes of a direct solve, None when it holds no n x n array), ``auto_rank`` (int: solver="auto" tries the
    solvers by increasing rank; None: never chosen by "auto") and ``auto_accepts(regime)`` (bool: whether "auto"
    takes it on the :class:`mvl.solvers.auto.Regime` of a fit). TypeError naming each missing or ill-typed
    declaration; ValueError if the name is taken."""
    problems = _problems(solver)
    if problems:
        raise TypeError(f"cannot register solver {solver!r}: it must declare {', '.join(problems)}")
    if solver.name in SOLVERS or solver.name == "auto":
        raise ValueError(f"a solver named {solver.name!r} is already registered; unregister it first")
    SOLVERS[solver.name] = solver
    return solver


def unregister(name):
    """Remove the solver registered as ``name`` and return it (ValueError if there is none)."""
    get_solver(name)
    return SOLVERS.pop(name)


def get_solver(name):
    """The solver object registered as ``name`` (``"auto"`` is resolved first, by :func:`choose_solver`)."""
    try:
        return SOLVERS[name]
    except KeyError:
        raise ValueError(f"unknown solver {name!r}; one of {sorted(SOLVERS)}") from None


def solver_names(**needs):
    """The names of the solvers whose declarations match ``needs`` (e.g. ``optc=True``)."""
    return {name for name, s in SOLVERS.items() if all(getattr(s, k, None) == v for k, v in needs.items())}
