"""Linear views on scales far apart (1e6 / 1 / 1e-6): MVL-LS warns (IllConditionedWarning) naming the views and
the fix, standardised features, which give the fit of the unscaled data (the reference: the fit on the unscaled
features)."""

from __future__ import annotations

import re
import warnings

import numpy as np
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from mvl import MVLLeastSquares
from mvl.exceptions import IllConditionedWarning

CENTRES = np.random.default_rng(11).normal(size=(3, 12)) * 1.2
SCALE = np.r_[np.full(5, 1e6), np.ones(4), np.full(3, 1e-6)]


def blobs(n, seed):
    g = np.random.default_rng(seed)
    y = np.arange(n) % 3
    g.shuffle(y)
    return CENTRES[y] + g.normal(size=(n, 12)), y


def test_linear_views_on_scales_far_apart_warn_naming_the_views_and_the_fix():
    X, y = blobs(150, 1)
    ys = np.where(np.arange(150) < 30, y, -1)
    with warnings.catch_warnings(record=True) as caught:  # the solve's own inaccuracy warnings follow
        warnings.simplefilter("always")
        MVLLeastSquares(views=[5, 4, 3], kernel="linear").fit(X * SCALE, ys)
    first = caught[0]
    assert first.category is IllConditionedWarning
    assert re.search(r'kernel="linear" views on scales .* in view 0, .* in view 2.*StandardScaler', str(first.message))
    with warnings.catch_warnings():
        warnings.simplefilter("error", IllConditionedWarning)
        ref = make_pipeline(StandardScaler(), MVLLeastSquares(views=[5, 4, 3], kernel="linear")).fit(X, ys)
        fixed = make_pipeline(StandardScaler(), MVLLeastSquares(views=[5, 4, 3], kernel="linear")).fit(X * SCALE, ys)
    Xt, _ = blobs(200, 2)
    np.testing.assert_array_equal(fixed.predict(Xt * SCALE), ref.predict(Xt))
