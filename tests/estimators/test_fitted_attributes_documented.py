"""Every public fitted attribute an estimator sets is listed in its docstring's Attributes section.

Each estimator is fitted on tiny problems that reach its different fit paths (feature views, precomputed kernels,
a DataFrame, views missing for some samples, the few-label term, a Nystrom solve); the names in ``vars(est)`` that
end in ``_`` and do not start with ``_`` must each be an entry of the Attributes section (numpydoc: ``name : type``
or ``name1, name2 : type`` at the section's indentation).
"""

import inspect
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import mvl

SIZES = [3, 3]


def documented_attributes(cls):
    """The entry names of the Attributes section of ``cls``'s docstring (shared placeholders filled in)."""
    doc = inspect.cleandoc(cls.__doc__ or "")
    found = re.search(r"^Attributes\n-+\n(.*?)(?=^\S[^\n]*\n-{3,}\n|\Z)", doc, re.S | re.M)
    assert found, f"{cls.__name__} has no Attributes section"
    names = set()
    for line in found.group(1).splitlines():
        if line and not line[0].isspace():
            names.update(name.strip() for name in line.split(" : ")[0].split(","))
    return names


def _problem():
    rng = np.random.default_rng(0)
    n, P = 42, 3
    y = np.arange(n) % P
    X = rng.normal(size=(n, sum(SIZES)))
    X[:, :3] += y[:, None]
    y_semi = y.copy()
    y_semi[rng.random(n) < 0.4] = -1
    for c in range(P):
        y_semi[np.flatnonzero(y == c)[:3]] = c
    missing = X.copy()
    missing[:5, 3:] = np.nan  # the second view missing for five samples
    return X, y_semi, missing


def _inputs(cls):
    """(X, y, keyword arguments) of the fits that reach the estimator's fit paths."""
    X, y, missing = _problem()
    kernels = np.stack([np.exp(-((X[:, None, :3] - X[None, :, :3]) ** 2).sum(-1) / 6),
                        np.exp(-((X[:, None, 3:] - X[None, :, 3:]) ** 2).sum(-1) / 6)], axis=-1)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    fits = [(X, y, dict(views=SIZES)), (frame, y, dict(views=SIZES)), (kernels, y, dict(kernel="precomputed"))]
    if getattr(cls, "_missing_views", False):
        fits.append((missing, y, dict(views=SIZES)))
    if cls is mvl.MVLLeastSquares:
        fits += [(X, y, dict(views=SIZES, loss="poisson")),
                 (X, y, dict(views=SIZES, loss="squared", solver="nystrom", n_components=10)),
                 (X, y, dict(views=SIZES, loss="squared", solver="cg"))]
    if cls is mvl.MVLLeastSquaresCV:
        fits = [(X_, y_, {**kw, "cv": 2}) for X_, y_, kw in fits]
    if cls is mvl.MVLLeastSquaresOptC:  # few restarts and alternations: the attributes, not the optimum
        fits = [(X_, y_, {**kw, "n_restarts": 2, "n_iter": 3}) for X_, y_, kw in fits]
        fits.append((X, y, dict(views=SIZES, n_restarts=2, n_iter=3, validation_fraction=0.2)))
    return fits


ESTIMATORS = [mvl.MVLLeastSquares, mvl.MVLLeastSquaresOptC, mvl.MVLLeastSquaresCV, mvl.MVLSVM, mvl.MVLBinarySVM,
              mvl.MVML, mvl.KernelMultiViewPerceptron, mvl.OrthogonalMultiViewPerceptron]


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_every_fitted_attribute_is_in_the_docstring(cls):
    listed = documented_attributes(cls)
    seen = set()
    for X, y, kw in _inputs(cls):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # what the fits warn about is tested elsewhere
            est = cls(**kw).fit(X, y)
        seen |= {name for name in vars(est) if name.endswith("_") and not name.startswith("_")}
    assert {"classes_", "n_views_", "fit_seconds_" if cls is not mvl.MVLLeastSquaresCV else "best_params_"} <= seen
    assert sorted(seen - listed) == [], f"{cls.__name__}: fitted but not in its Attributes section"


def test_a_view_missing_everywhere_shows_in_dropped_views():
    X, y, _ = _problem()
    X = X.copy()
    X[:, 3:] = np.nan
    with pytest.warns(mvl.exceptions.MissingViewWarning, match="view 1"):
        est = mvl.MVLLeastSquares(views=SIZES).fit(X, y)
    assert est.dropped_views_ == (1,) and est.n_views_ == 1
    assert "dropped_views_" in documented_attributes(mvl.MVLLeastSquares)


def test_the_parser_reads_numpydoc_entries():
    class Example:
        """Summary.

        Attributes
        ----------
        a_ : int
            Text.
        b_, c_ : float
        d_
            Without a type.

        See Also
        --------
        e_ : not an attribute
        """

    assert documented_attributes(Example) == {"a_", "b_", "c_", "d_"}
