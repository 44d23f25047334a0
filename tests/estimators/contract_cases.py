"""The shared contract of the estimators on bad and edge inputs, as data: every estimator x every solver x complete /
incomplete views x each input class, with its expected outcome (a ValueError whose message names the cause and the
fix, a specific warning, or a correct answer). Read by ``test_contract.py`` (pytest) and
``benchmarks/probe_bad_inputs.py`` (each cell in its own process, with a timeout).

Public API only: ``import mvl`` and the estimators' parameters; warnings are matched by their class name, so that
the modules may move.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass

import numpy as np

import mvl

N_PER_CLASS, N_TEST_PER_CLASS, LABELLED_PER_CLASS, P = 15, 10, 4, 3
VIEWS = [3, 2]  # feature columns of the two views
ACCURACY = 0.6  # "above chance" (chance: 1/3) on the tiny test set

CONTRACT_EXCLUDED = {"vecchia_direct"}
"""Registered MVL-LS solvers outside the matrix: "vecchia_direct" approximates the kernels by Vecchia's sparse
precision and predicts by kriging (no precomputed kernels, not the structured solver's predictions); its own tests
are tests/solvers/test_vecchia_direct.py."""


def estimators():
    """estimator -> (solvers, solvers that take incomplete views, semi-supervised (-1 marks unlabelled)); the MVL-LS
    solvers read from the registry now (mvl.solvers.SOLVERS and the declarations ``missing_views``, ``optc``), so
    that a solver registered later inherits every cell."""
    from mvl.solvers import SOLVERS
    from mvl.solvers.problem import takes_missing_views

    ls = tuple(name for name, s in SOLVERS.items() if name not in CONTRACT_EXCLUDED and "squared" in s.losses)
    optc = tuple(name for name in ls if SOLVERS[name].optc)
    return {
        "MVLLeastSquares": (ls, tuple(name for name in ls if takes_missing_views(SOLVERS[name])), True),
        "MVLLeastSquaresCV": ((None,), (None,), True),
        # optC on incomplete views: the structured alternation only (its dense-input solver)
        "MVLLeastSquaresOptC": (optc, tuple(name for name in optc if takes_missing_views(SOLVERS[name])
                                            and not SOLVERS[name].operator), True),
        "MVLSVM": (("admm", "smo", "lbfgsb", "apg"), ("admm", "smo", "lbfgsb", "apg"), True),
        "MVLBinarySVM": (("admm", "smo", "lbfgsb", "apg"), ("admm", "smo", "lbfgsb", "apg"), True),
        "MVML": ((None,), (), False),
        "KernelMultiViewPerceptron": ((None,), (), False),
        "OrthogonalMultiViewPerceptron": ((None,), (), False),
    }


def iterative():
    """The solvers whose cells include a conjugate-gradient breakdown: the exact operator solvers."""
    from mvl.solvers import SOLVERS

    return {name for name, s in SOLVERS.items() if s.operator and s.exact}


@dataclass(frozen=True)
class Expect:
    """``kind``: "error" (ValueError matching ``pattern``), "warning" (a warning of class ``category`` matching
    ``pattern``; the fit completes) or "correct" (test accuracy above chance, or the reference's predictions)."""

    kind: str
    pattern: str = ""
    category: str = ""


@dataclass(frozen=True)
class Cell:
    estimator: str
    solver: str | None
    views: str  # "complete" or "incomplete"
    case: str

    @property
    def id(self):
        return f"{self.estimator}-{self.solver or 'default'}-{self.views}-{self.case}"


# ------------------------------------------------------------------ data


def blobs(seed=0, n_per_class=N_PER_CLASS):
    """Three classes, two feature views (3 and 2 columns), each view informative on its own."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(P), n_per_class)
    c0 = np.array([[0, 0, 0], [3, 0, 0], [0, 3, 0]], float)
    c1 = np.array([[0, 0], [3, 0], [0, 3]], float)
    X = np.hstack([c0[y] + 0.7 * rng.normal(size=(y.size, 3)), c1[y] + 0.7 * rng.normal(size=(y.size, 2))])
    return X, y


def problem(views="complete", seed=0):
    """(X_train, y_train with -1 for the unlabelled, y_train_full, X_test, y_test); incomplete: a fifth of the
    samples miss view 0, another fifth view 1 (NaN rows), in training and test."""
    X, y = blobs(seed)
    Xt, yt = blobs(seed + 1, N_TEST_PER_CLASS)
    y_semi = y.copy()
    y_semi[np.arange(y.size) % N_PER_CLASS >= LABELLED_PER_CLASS] = -1
    if views == "incomplete":
        for A in (X, Xt):
            i = np.arange(A.shape[0])
            A[i % 5 == 1, :3] = np.nan  # labelled samples (i % 15 < 4) keep both views at i = 0, 2, 3
            A[i % 5 == 4, 3:] = np.nan
    return X, y_semi, y, Xt, yt


def rbf_grams(A, B, scale=2.0):
    """Per-view Gaussian Gram matrices, sample-first (len(A), len(B), 2)."""
    out = []
    for cols in (slice(0, 3), slice(3, 5)):
        d = ((A[:, None, cols] - B[None, :, cols]) ** 2).sum(-1)
        out.append(np.exp(-d / (2 * scale**2)))
    return np.stack(out, axis=-1)


# ------------------------------------------------------------------ estimators


def make(estimator, solver, **params):
    """The estimator with small settings (tiny problems, fast), ``params`` on top."""
    cls = getattr(mvl, estimator)
    base = {"views": VIEWS}
    if params.get("kernel") == "precomputed":
        base = {}
    if estimator == "MVLLeastSquares":
        base.update(solver=solver, n_components=20, max_iter=60, random_state=0)
    elif estimator == "MVLLeastSquaresCV":
        base.update(gammas_A=(1e-5, 1e-3), gammas_W=(0.0, 1e-2), graphs=((5, 1),), cv=3)
        k = params.pop("n_neighbors", None)
        if k is not None:
            base["graphs"] = ((k, 1),)
        if "gamma_B" in params:
            base["gammas_B"] = (params.pop("gamma_B"),)
    elif estimator == "MVLLeastSquaresOptC":
        base.update(solver=solver, n_restarts=1, n_iter=2, n_components=20, cg_max_iter=60, random_state=0)
    elif estimator in ("MVLSVM", "MVLBinarySVM"):
        base.update(solver=solver, random_state=0)
    else:
        base.update(random_state=0)
    base.update(params)
    return cls(**base)


# ------------------------------------------------------------------ cases
# case -> (expected outcome, applies(cell) -> bool); the builder below makes its inputs.

RANGE = r"(?=.*(rescale|scale|StandardScaler|bandwidth))"

CASES = {
    "valid": Expect("correct"),
    "string_marker_minus1": Expect("correct"),  # '-1' in a string array is the unlabelled marker, as -1 is
    "string_marker_none": Expect("warning", r"(?i)'(N|No|Non|None)'.*unlabelled.*(None|object)",
                                 "UnlabelledMarkerWarning"),
    "string_marker_empty": Expect("warning", r"(?i)''.*unlabelled", "UnlabelledMarkerWarning"),
    "degenerate_kernel": Expect("warning", r"(?i)view", "DegenerateKernelWarning"),
    "unseen_view_gamma_B0": Expect("warning", r"(?i)view 1.*labelled.*gamma_B", "RegularizationWarning"),
    "indefinite_kernel": Expect("warning", r"(?i)eigenvalue", "IndefiniteKernelWarning"),
    "n_neighbors_ge_n": Expect("warning", r"n_neighbors.*\d+.*(samples|n =)", "RegularizationWarning"),
    "view_in_one_sample": Expect("error", r"(?i)view 0.*(one|1) sample"),
    "rank_deficient_linear": Expect("correct"),  # equal predictions to the structured solver, no warning
    "indefinite_breakdown": Expect("warning", r"(?i)breakdown|indefinite", "ConvergenceWarning"),
    "partial_nan": Expect("error", r"(?i)(?=.*NaN)(?=.*view 0)(?=.*sample.*\b7\b)"),
    "inf": Expect("error", r"(?i)(?=.*\binf)(?=.*view 0)(?=.*sample.*\b7\b)"),
    "overflowing_distance": Expect("error", r"(?i)view 0.*overflow" + RANGE),
    "missing_views_unsupported": Expect("error", r"(?i)missing view.*(MVLLeastSquares|MVLSVM)"),
    "non_square_kernel": Expect("error", r"(?i)(square|shape)"),
    "non_symmetric_kernel": Expect("error", r"(?i)symmetric"),
    "mismatched_views": Expect("error", r"(?i)view"),
    "label_outside_n_classes": Expect("error", r"(?i)n_classes|0\.\.2"),
    "class_without_label": Expect("error", r"(?i)class.*(no labelled|not labelled|labelled sample)"),
    "attributes": Expect("correct"),  # solver_, n_iter_, residual_ (true residual), converged_
    # a fit on complete views predicts test points that miss a view (from the views they have)
    "missing_view_at_predict": Expect("correct"),
    # a direct solve whose system is too ill-conditioned for float64: not converged, the parameter named
    # (or, where the solver's residual meets tol, converged_ and a correct answer)
    "ill_conditioned_direct": Expect("warning", r"residual .* > tol.*decrease gamma_B \(now 3e\+06\)",
                                     "ConvergenceWarning"),
    # pandas' nullable Float64 with pd.NA for the missing views: read as NaN, loss="auto" included
    "nullable_frame": Expect("correct"),
}


def applies(cell):
    """Whether the cell is part of the matrix."""
    solvers, missing_ok, semi = estimators()[cell.estimator]
    e, s, inc, case = cell.estimator, cell.solver, cell.views == "incomplete", cell.case
    has_graph = e not in ("MVML", "KernelMultiViewPerceptron", "OrthogonalMultiViewPerceptron")
    if case == "missing_views_unsupported":
        return inc and not semi
    if inc and s not in missing_ok:
        return case == "valid" and semi  # the documented limitation: a clear error naming complete views
    if inc and not semi:
        return False
    if inc and case in ("string_marker_none", "string_marker_empty", "mismatched_views", "label_outside_n_classes",
                        "class_without_label"):
        return False  # not about views: the complete layout covers them
    if case == "indefinite_breakdown":
        return s in iterative() and not inc
    if case.startswith("string_marker"):
        return semi
    if case in ("class_without_label", "label_outside_n_classes"):
        return semi and e != "MVLLeastSquaresCV"  # the estimators with n_classes
    if case in ("unseen_view_gamma_B0", "view_in_one_sample"):
        return inc and semi
    if case == "n_neighbors_ge_n":
        return has_graph
    if case == "rank_deficient_linear":
        return e == "MVLLeastSquares" and not inc
    if case in ("indefinite_kernel", "non_square_kernel", "non_symmetric_kernel"):
        return not inc
    if case == "missing_view_at_predict":
        return e == "MVLLeastSquares" and not inc
    if case == "ill_conditioned_direct":
        from mvl.solvers import SOLVERS

        return e == "MVLLeastSquares" and not inc and SOLVERS[s].direct
    if case == "nullable_frame":
        return e == "MVLLeastSquares" and inc
    if case == "attributes":
        return e in ("MVLLeastSquares", "MVLLeastSquaresOptC", "MVLSVM", "MVLBinarySVM") and not inc
    return True


def cells():
    out = []
    for e, (solvers, _, _) in estimators().items():
        for s in solvers:
            for views in ("complete", "incomplete"):
                for case in CASES:
                    c = Cell(e, s, views, case)
                    if applies(c):
                        out.append(c)
    return out


def expected(cell):
    _, missing_ok, _ = estimators()[cell.estimator]
    if cell.views == "incomplete" and cell.solver not in missing_ok and cell.case == "valid":
        return Expect("error", r"(?i)complete views")
    return CASES[cell.case]


def build(cell):
    """(estimator, X, y, X_test, y_test, reference predictions or None) of the cell."""
    X, y_semi, y_full, Xt, yt = problem(cell.views)
    semi = estimators()[cell.estimator][2]
    y = y_semi if semi else y_full
    params, ref = {}, None
    case = cell.case
    if case.startswith("string_marker"):
        names = np.array(["ant", "bee", "cat"])
        y = names[y_full].copy()  # fixed-width strings '<U3'
        y[y_semi == -1] = {"string_marker_minus1": -1, "string_marker_none": None, "string_marker_empty": ""}[case]
        yt = names[yt]
    elif case == "degenerate_kernel":
        params["bandwidth"] = 1e-12
    elif case == "unseen_view_gamma_B0":
        (X0, _), (Xt0, _) = blobs(0), blobs(1, N_TEST_PER_CLASS)
        labelled, half = y_semi != -1, np.arange(Xt.shape[0]) % 2 == 0
        X[labelled, :3], X[labelled, 3:] = X0[labelled, :3], np.nan  # the labelled samples have view 0 only
        Xt[half, :3], Xt[half, 3:] = np.nan, Xt0[half, 3:]  # judged on the test points that have view 1 only
        Xt, yt = Xt[half], yt[half]
        params["gamma_B"] = 0.0
    elif case in ("indefinite_kernel", "indefinite_breakdown", "non_square_kernel", "non_symmetric_kernel"):
        K, Kt = rbf_grams(X, X), rbf_grams(Xt, X)
        if case in ("indefinite_kernel", "indefinite_breakdown"):
            K[..., 0] -= 2.0 * np.eye(K.shape[0])
        elif case == "non_square_kernel":
            K = K[:, :-1]
        else:
            K[0, 1, 0] += 0.5
        X, Xt, params["kernel"] = K, Kt, "precomputed"
    elif case == "n_neighbors_ge_n":
        params["n_neighbors"] = X.shape[0] + 5
    elif case == "view_in_one_sample":
        X0 = blobs(0)[0]
        X[:, :3], X[1:, :3], X[:, 3:] = X0[:, :3], np.nan, X0[:, 3:]  # view 0 only in sample 0
    elif case == "rank_deficient_linear":
        params.update(kernel="linear", gamma_W=0.0)
        ref = make("MVLLeastSquares", "structured", **params).fit(X, y).predict(Xt)
    elif case == "partial_nan":
        X[7, 1] = np.nan
        X[7, [0, 2]] = 1.0
    elif case == "inf":
        X[7, 1] = np.inf
        X[7, [0, 2]] = 1.0
    elif case == "overflowing_distance":
        X[:, :3] *= 1e160
    elif case == "mismatched_views":
        params["views"] = [3, 3]
    elif case == "missing_view_at_predict":
        i = np.arange(Xt.shape[0])
        Xt[i % 3 == 1, :3] = np.nan
        Xt[i % 3 == 2, 3:] = np.nan
    elif case == "ill_conditioned_direct":
        params["gamma_B"] = 3e6
    elif case == "nullable_frame":
        import pandas as pd

        X, Xt = (pd.DataFrame(A, columns=[f"f{j}" for j in range(A.shape[1])]).astype("Float64") for A in (X, Xt))
        for A in (X, Xt):
            A[A.isna()] = pd.NA
    elif case == "label_outside_n_classes":
        y = y.copy()
        y[0] = 5
        params["n_classes"] = P
    elif case == "class_without_label":
        y = y.copy()
        y[y == 2] = -1
        params["n_classes"] = P
    est = make(cell.estimator, cell.solver, **params)
    return est, X, y, Xt, yt, ref


# ------------------------------------------------------------------ running and judging


@dataclass
class Result:
    outcome: str  # "clear error", "specific warning", "correct", "SILENT WRONG", "SILENT", "UNCLEAR ERROR",
    #               "UNCLEAR WARNING", "TRACEBACK"
    detail: str = ""

    @property
    def ok(self):
        return self.outcome in ("clear error", "specific warning", "correct")


def _attributes_problem(est, cell):
    want = cell.solver
    problems = []
    if getattr(est, "solver_", None) != want:
        problems.append(f"solver_ = {getattr(est, 'solver_', 'missing')!r}, expected {want!r}")
    # one value, or one per binary problem (MVLBinarySVM)
    n_iter = np.asarray(getattr(est, "n_iter_", None))
    if not (n_iter.dtype.kind in "iu" and n_iter.size and np.all(n_iter >= 1)):
        problems.append(f"n_iter_ = {getattr(est, 'n_iter_', None)!r}, expected an int >= 1")
    res = np.asarray(getattr(est, "residual_", None))
    if not (res.dtype.kind == "f" and res.size and np.all(np.isfinite(res)) and np.all(res >= 0)):
        problems.append(f"residual_ = {getattr(est, 'residual_', None)!r}, expected the final relative residual "
                        "of the system solved (a float >= 0)")
    conv = np.asarray(getattr(est, "converged_", None))
    if not (conv.dtype == bool and conv.size and np.all(conv)):
        problems.append(f"converged_ = {getattr(est, 'converged_', 'missing')!r}, expected True")
    return "; ".join(problems)


def run(cell):
    """Fit (and predict) the cell and judge the outcome against :func:`expected`."""
    exp = expected(cell)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            est, X, y, Xt, yt, ref = build(cell)
            est.fit(X, y)
            pred = est.predict(Xt)
        except ValueError as exc:
            msg = f"{type(exc).__name__}: {exc}"
            if type(exc).__module__.startswith(("numpy", "scipy")):  # e.g. LinAlgError from inside a solver
                return Result("TRACEBACK", msg)
            if exp.kind == "error" and re.search(exp.pattern, str(exc), re.S):
                return Result("clear error", msg)
            return Result("UNCLEAR ERROR", msg)
        except Exception as exc:  # noqa: BLE001 -- the probe's point: any other exception is a raw traceback
            return Result("TRACEBACK", f"{type(exc).__name__}: {exc}")
    names = [(w.category.__name__, str(w.message)) for w in caught]
    if exp.kind == "warning":
        hit = [m for c, m in names if c == exp.category and re.search(exp.pattern, m, re.S)]
        if hit:
            return Result("specific warning", f"{exp.category}: {hit[0]}")
    acc = float(np.mean(np.asarray(pred) == np.asarray(yt)))
    if cell.case == "ill_conditioned_direct" and est.residual_ <= est.tol and est.converged_ and acc > ACCURACY:
        return Result("correct", f"residual {est.residual_:.1e} <= tol, accuracy {acc:.2f}")
    if exp.kind == "correct":
        if cell.case == "attributes":
            problem_ = _attributes_problem(est, cell)
            return Result("SILENT WRONG" if problem_ else "correct", problem_ or f"accuracy {acc:.2f}")
        if ref is not None:
            if not np.array_equal(pred, ref):
                return Result("SILENT WRONG", f"predictions differ from the structured solver's at "
                                              f"{int(np.sum(pred != ref))} of {len(ref)} points")
            conv = [m for c, m in names if c == "ConvergenceWarning"]
            if conv:
                return Result("UNCLEAR WARNING", f"correct predictions, but ConvergenceWarning: {conv[0]}")
            return Result("correct", "equal predictions to the structured solver")
        if acc > ACCURACY:
            return Result("correct", f"accuracy {acc:.2f}")
    seen = "; ".join(f"{c}: {m[:120]}" for c, m in names[:3]) or "no warning"
    if acc <= ACCURACY:
        return Result("SILENT WRONG" if not names else "UNCLEAR WARNING", f"accuracy {acc:.2f}; {seen}")
    return Result("SILENT", f"accuracy {acc:.2f}; {seen}")
