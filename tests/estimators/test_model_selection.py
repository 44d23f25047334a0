"""MVLLeastSquaresCV and SemiSupervisedCV against scikit-learn's GridSearchCV over MVLLeastSquares.

The reference folds are built here from StratifiedKFold over the labelled samples, with every unlabelled sample
added to every training fold by hand; GridSearchCV then fits MVLLeastSquares (Theorem 10, LU of each view's
system) at every grid point of every fold, while MVLLeastSquaresCV evaluates the grid through the shared
eigendecompositions of mvl.solvers.grid. Same folds and grid: the same scores, the same selection, the same refit."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, StratifiedKFold, StratifiedShuffleSplit
from sklearn.preprocessing import StandardScaler

from mvl import MVLLeastSquares, MVLLeastSquaresCV, SemiSupervisedCV
from mvl.data.embedded import load_mfeat
from mvl.kernels import multiview_kernels

GRID = dict(gammas_A=(1e-5, 1e-3), gammas_B=(0.0, 1e-6), gammas_W=(0.0, 1e-2), graphs=((5, 2), (None, 1)))


@pytest.fixture(scope="module")
def semi():
    """150 mfeat digits (15 per class) in three views, standardised; 4 labelled per class, the rest -1."""
    ds = load_mfeat(["fou", "kar", "mor"])
    rng = np.random.default_rng(5)
    keep = np.sort(np.concatenate([rng.permutation(np.flatnonzero(ds.y == k))[:15] for k in range(10)]))
    X = StandardScaler().fit_transform(np.hstack(ds.views)[keep])
    y = ds.y[keep].copy()
    hidden = np.concatenate([rng.permutation(np.flatnonzero(y == k))[4:] for k in range(10)])
    y[hidden] = -1
    return X, y


def _reference_folds(y, labelled_cv):
    """(train, test) pairs: labelled_cv splits the labelled samples (in their order), every unlabelled sample
    joins every training fold."""
    lab, unl = np.flatnonzero(y != -1), np.flatnonzero(y == -1)
    return [(np.sort(np.concatenate([lab[tr], unl])), lab[te])
            for tr, te in labelled_cv.split(np.zeros(lab.size), y[lab])]


def _grid_search(est, params, X, y, folds):
    """GridSearchCV over exactly the points of ``params`` (in that order, so ties break the same way)."""
    grid = [{k: [v] for k, v in p.items()} for p in params]
    return GridSearchCV(est, grid, cv=folds).fit(X, y)


@pytest.mark.parametrize("form", ["precomputed", "rbf"])
def test_same_selection_as_grid_search(semi, form):
    X, y = semi
    if form == "precomputed":
        X, _ = multiview_kernels([X[:, :76], X[:, 76:140], X[:, 140:]], standardize_features=False)
        kw = dict(kernel="precomputed")
    else:
        kw = dict(kernel="rbf", views=[76, 64, 6])
    labelled_cv = StratifiedKFold(3, shuffle=True, random_state=0)
    cv = MVLLeastSquaresCV(**GRID, cv=labelled_cv, **kw).fit(X, y)
    assert len(cv.cv_results_["params"]) == 2 * 2 * 2 * 2 and cv.n_splits_ == 3
    search = _grid_search(MVLLeastSquares(**kw), cv.cv_results_["params"], X, y, _reference_folds(y, labelled_cv))
    for f in range(3):
        np.testing.assert_allclose(cv.cv_results_[f"split{f}_test_score"], search.cv_results_[f"split{f}_test_score"],
                                   atol=1e-12)
    np.testing.assert_allclose(cv.cv_results_["mean_test_score"], search.cv_results_["mean_test_score"], atol=1e-12)
    np.testing.assert_array_equal(cv.cv_results_["rank_test_score"], search.cv_results_["rank_test_score"])
    assert cv.best_params_ == search.best_params_ and cv.best_index_ == search.best_index_
    assert cv.best_score_ == pytest.approx(search.best_score_, abs=1e-12)
    # the refit on all the data is MVLLeastSquares at the best point
    np.testing.assert_allclose(cv.decision_function(X), search.decision_function(X), rtol=1e-9, atol=1e-12)
    assert cv.best_score_ > 0.75  # 4 labels per class, 10 classes: far above chance


def test_semi_supervised_cv_keeps_unlabelled_samples_in_every_training_fold(semi):
    _, y = semi
    lab, unl = np.flatnonzero(y != -1), np.flatnonzero(y == -1)
    folds = list(SemiSupervisedCV(cv=4).split(np.zeros((y.size, 1)), y))
    assert SemiSupervisedCV(cv=4).get_n_splits() == 4 and len(folds) == 4
    tests = np.concatenate([te for _, te in folds])
    np.testing.assert_array_equal(np.sort(tests), lab)  # the labelled samples, each tested once
    for tr, te in folds:
        assert set(unl) <= set(tr) and not set(te) & set(tr)
        assert np.all(np.bincount(y[te], minlength=10) == 1)  # stratified: 4 labelled per class, 4 folds
    # a splitter sees only the labelled samples, in their order
    holdout = StratifiedShuffleSplit(1, test_size=0.25, random_state=0)
    ((tr, te),) = SemiSupervisedCV(cv=holdout).split(np.zeros((y.size, 1)), y)
    ((tr_l, te_l),) = holdout.split(np.zeros(lab.size), y[lab])
    np.testing.assert_array_equal(te, lab[te_l])
    np.testing.assert_array_equal(tr, np.sort(np.concatenate([lab[tr_l], unl])))


def test_hold_out_validation_and_defaults(semi):
    X, y = semi
    model = MVLLeastSquaresCV(views=[76, 64, 6], cv=StratifiedShuffleSplit(1, test_size=0.5, random_state=1))
    model.fit(X, y)
    assert model.n_splits_ == 1 and set(model.best_params_) == {"gamma_A", "gamma_B", "gamma_W", "n_neighbors",
                                                                   "laplacian_power"}
    assert len(model.cv_results_["params"]) == 4 * 1 * 4 * 4  # the default grid
    ref = MVLLeastSquares(views=[76, 64, 6], **model.best_params_).fit(X, y)
    np.testing.assert_array_equal(model.predict(X), ref.predict(X))
    np.testing.assert_array_equal(model.classes_, np.arange(10))
    # cv=None: StratifiedKFold(min(5, smallest class count)) = 4 folds here
    assert MVLLeastSquaresCV(views=[76, 64, 6], gammas_A=(1e-4,), gammas_W=(1e-2,), graphs=((5, 2),)).fit(
        X, y).n_splits_ == 4


def test_gammas_B_auto_tries_coupling_on_incomplete_views_only():
    from mvl.estimators.model_selection import INCOMPLETE_GAMMAS_B

    from .contract_cases import VIEWS, problem

    kw = dict(views=VIEWS, gammas_A=(1e-3,), gammas_W=(0.0,), graphs=((5, 1),), cv=3)
    for views, want in (("complete", (0.0,)), ("incomplete", INCOMPLETE_GAMMAS_B)):
        X, y, _, _, _ = problem(views)
        cv = MVLLeastSquaresCV(**kw).fit(X, y)
        assert tuple(cv.cv_results_["param_gamma_B"]) == tuple(want)
    assert any(g > 0 for g in INCOMPLETE_GAMMAS_B)


def test_the_share_grid_is_the_rule_gamma_A_at_each_kernel_share():
    """gammas_A="share": the grid of gamma_A values at which the kernel term is 1e-4, 1e-3, 1e-2 of the objective at
    the graph term's limit (mvl.solvers.vecchia_direct.share_gamma_A)."""
    from mvl.data.synthetic import make_multiview_manifold
    from mvl.estimators.model_selection import SHARE_GRID
    from mvl.solvers.vecchia_direct import problem, share_gamma_A

    d = make_multiview_manifold(150, n_classes=3, n_views=2, n_features=5, random_state=0)
    X = np.hstack(d.views)
    y = np.full(150, -1)
    for k in range(3):
        y[np.flatnonzero(d.y == k)[:4]] = k
    kw = dict(kernel="rbf", views=[5, 5], bandwidth=[1.5, 1.5])
    cv = MVLLeastSquaresCV(gammas_A="share", gammas_W=(1.0,), graphs=((8, 2),), cv=2, **kw).fit(X, y)
    kernels, system = problem(MVLLeastSquares(gamma_A=1.0, gamma_B=0.0, gamma_W=1.0, n_neighbors=8, laplacian_power=2,
                                              random_state=0, **kw), X, y)
    want = [share_gamma_A(system, kernels, t) for t in SHARE_GRID]
    np.testing.assert_allclose(np.asarray(cv.cv_results_["param_gamma_A"], dtype=float), want, rtol=1e-8)
    assert cv.best_params_["gamma_A"] in cv.cv_results_["param_gamma_A"]
    with pytest.raises(ValueError, match="share"):
        MVLLeastSquaresCV(gammas_A="share", gammas_W=(0.0,), graphs=((8, 2),), cv=2, **kw).fit(X, y)


def test_one_labelled_sample_in_a_class_is_a_clear_error_naming_the_class_and_the_alternative():
    """Three blob views, one labelled sample per class: no stratified split has both a training and a test fold.
    The error names the class, its count and MVLLeastSquares with its defaults, not StratifiedKFold's n_splits
    that the user never set; cv larger than every class is named too; one class with one label among larger ones
    runs, with StratifiedKFold's warning."""
    centres = np.random.default_rng(11).normal(size=(3, 12)) * 1.2
    g = np.random.default_rng(1)
    y = np.arange(90) % 3
    g.shuffle(y)
    X = centres[y] + g.normal(size=(90, 12))
    one = np.full(90, -1)
    one[[np.flatnonzero(y == k)[0] for k in range(3)]] = [0, 1, 2]
    with pytest.raises(ValueError, match=r"class 0 has 1 labelled sample, as every class; cross-validation needs "
                                         r"at least 2 labelled samples per class.*MVLLeastSquares with its defaults"):
        MVLLeastSquaresCV(views=[5, 4, 3]).fit(X, one)
    uneven = np.where(np.arange(90) < 30, y, -1)
    uneven[uneven == 2] = -1
    uneven[np.flatnonzero(y == 2)[0]] = 2
    # one class with one label among larger ones: the folds go on without it in some training fold, with
    # StratifiedKFold's warning naming the least populated class, as in scikit-learn's CV estimators
    with pytest.warns(UserWarning, match="The least populated class in y has only 1 members"):
        MVLLeastSquaresCV(views=[5, 4, 3], cv=3).fit(X, uneven)
    two = np.full(90, -1)
    two[[*np.flatnonzero(y == 0)[:2], *np.flatnonzero(y == 1)[:2]]] = [0, 0, 1, 1]
    with pytest.raises(ValueError, match="cv=3 folds need at least 3 labelled samples in some class; the largest "
                                         "class has 2"):
        MVLLeastSquaresCV(views=[5, 4, 3], cv=3).fit(X, two)
