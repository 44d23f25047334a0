"""The first fit a user makes: the default graph, parameter validation, memory estimates, held-out restart
selection inside a Pipeline, the MVML model size and the data CLI (label semantics and the regularisation warning:
test_base.py; the kernel warnings and errors: test_inputs.py). Every test here failed before the issue was fixed."""

from __future__ import annotations

import pickle
import re
import warnings

import numpy as np
import pytest
from conftest import make_problem, sample_first
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import check_param_validation

import mvl.memory
from mvl import (
    MVML,
    KernelMultiViewPerceptron,
    MVLBinarySVM,
    MVLLeastSquares,
    MVLLeastSquaresCV,
    MVLLeastSquaresOptC,
    MVLSVM,
    grid_decision_functions,
)
from mvl.data.embedded import load_mfeat

from .families import SEMI, SUPERVISED
from .families import make as _make
from mvl.memory import InsufficientMemoryError

ALL = SEMI + SUPERVISED + [MVLLeastSquaresCV]



# ----------------------------------------------------------------------------------------- the default graph


def _draw(y, seed, l_c=3, u_c=47, t_c=100):
    """The protocol of benchmarks/study_defaults.py: per class l_c labelled, u_c unlabelled (after 5 validation
    samples, unused here), up to t_c test samples."""
    rng = np.random.default_rng([21, seed])
    parts = [[], [], []]
    for k in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == k))
        parts[0].append(idx[:l_c])
        parts[1].append(idx[l_c:l_c + u_c])
        parts[2].append(idx[l_c + u_c + 5:l_c + u_c + 5 + t_c])
    return [np.sort(np.concatenate(p)) for p in parts]


def _digits_three_views():
    """scikit-learn's 8 x 8 digits in three views: the 64 pixels, the 4 x 4 image of 2 x 2 block sums, the row and
    column sums (as benchmarks/study_defaults.py)."""
    from sklearn.datasets import load_digits

    img = load_digits().images
    n = len(img)
    views = [img.reshape(n, 64), img.reshape(n, 4, 2, 4, 2).sum(axis=(2, 4)).reshape(n, 16),
             np.hstack([img.sum(axis=2), img.sum(axis=1)])]
    return views, load_digits().target


def _unlabelled_data_check(classes, datasets, seeds):
    for name in datasets:
        views, y = (load_mfeat().views, load_mfeat().y) if name == "mfeat" else _digits_three_views()
        X, sizes = np.hstack(views), [v.shape[1] for v in views]
        for seed in seeds:
            L, U, T = _draw(y, seed)
            LU = np.concatenate([L, U])
            y_semi = np.concatenate([y[L], -np.ones(U.size, dtype=int)])
            for cls in classes:
                labelled_only = cls(views=sizes).fit(X[L], y[L]).score(X[T], y[T])
                supervised = cls(views=sizes, gamma_W=0.0).fit(X[L], y[L]).score(X[T], y[T])
                with warnings.catch_warnings():
                    warnings.simplefilter("error")  # the default semi-supervised fit is silent
                    semi = cls(views=sizes).fit(X[LU], y_semi).score(X[T], y[T])
                assert semi >= labelled_only and semi >= supervised, (name, seed, cls.__name__)


@pytest.mark.parametrize("name", ["mfeat", "digits"])
def test_default_graph_unlabelled_data_do_not_lower_accuracy(name):
    """With the defaults (a 5-NN graph with kernel weights, L^2, gamma_W = 1e-2; benchmarks/study_defaults.py),
    adding 47 unlabelled samples per class to 3 labelled ones does not lower test accuracy, neither against the
    same defaults on the labelled samples alone nor against supervised MVL-LS (gamma_W = 0). With the previous
    default graph (the paper's dense W = K) at gamma_W = 1e-2 it fell from 71 to 42 % on mfeat."""
    _unlabelled_data_check([MVLLeastSquares], [name], range(3))


@pytest.mark.slow
def test_default_graph_unlabelled_data_do_not_lower_accuracy_all_estimators():
    _unlabelled_data_check([MVLLeastSquaresOptC, MVLSVM, MVLBinarySVM], ["mfeat", "digits"], range(3))


def test_the_papers_graph_is_one_parameter_away():
    """n_neighbors=None: the dense kernel weights W = K with L itself (p = 1), as the paper (Section 7.1)."""
    K, Kt, y = make_problem(m=3, n=40, P=3, seed=11)
    a = MVLLeastSquares(kernel="precomputed", n_neighbors=None).fit(sample_first(K), y)
    b = MVLLeastSquares(kernel="precomputed", n_neighbors=None, laplacian_power=1, graph_weights="kernel",
                        laplacian="normalized", gamma_W=1e-2).fit(sample_first(K), y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    from mvl.graph import laplacian as graph_laplacian
    L = np.stack([graph_laplacian(Kp, normalized=True) for Kp in K])  # W = K, dense
    c = MVLLeastSquares(kernel="precomputed", laplacian=sample_first(L)).fit(sample_first(K), y)
    np.testing.assert_allclose(a.coef_, c.coef_, rtol=1e-10, atol=1e-12 * np.abs(c.coef_).max())


# ----------------------------------------------------------------------------------------- parameters


@pytest.mark.parametrize("cls", ALL)
def test_parameter_constraints(cls):
    """scikit-learn's own parameter-validation check: every parameter has a constraint, and a bad type or value
    raises InvalidParameterError naming the parameter."""
    check_param_validation(cls.__name__, cls(gamma_A=1e-2) if cls in (MVLSVM, MVLBinarySVM) else cls())


@pytest.mark.parametrize("cls,param", [(MVML, "lmbda"), (MVLLeastSquares, "gamma_A"), (MVLSVM, "gamma_B"),
                                       (MVLLeastSquaresOptC, "alpha"), (KernelMultiViewPerceptron, "p"),
                                       (MVML, "eta"), (MVLBinarySVM, "tol")])
def test_string_numbers_are_refused_by_every_estimator(cls, param, digits3):
    X, y = digits3
    with pytest.raises(InvalidParameterError, match=rf"The '{param}' parameter of {cls.__name__} must be .* Got "
                                                    r"'1e-5' instead"):
        cls(views=[76, 64, 6], **{param: "1e-5"}).fit(X, y)


# ----------------------------------------------------------------------------------------- memory


@pytest.mark.parametrize("cls,advice", [(MVLLeastSquares, 'solver="cg" .*solver="nystrom"'),
                                        (MVLLeastSquaresOptC, 'solver="cg" .*solver="nystrom"'),
                                        (MVLSVM, "fewer training samples"), (MVLBinarySVM, "fewer training samples"),
                                        (MVML, "nystrom=0.1"), (MVLLeastSquaresCV, "fewer")])
def test_memory_is_estimated_before_allocating(cls, advice, monkeypatch, digits3):
    X, y = digits3
    K = np.stack([np.exp(-np.square(X[:, None, :3] - X[None, :, :3]).sum(-1))] * 2, axis=-1)
    est = _make(cls, kernel="precomputed")
    est.fit(K, y)  # fine with the machine's memory
    monkeypatch.setattr(mvl.memory, "available_memory", lambda: 10_000)
    name = "grid_decision_functions" if cls is MVLLeastSquaresCV else cls.__name__
    with pytest.raises(InsufficientMemoryError, match=rf"{name}.*needs about .* of memory, but only 10\.0 kB "
                                                      rf"is available; .*{advice}") as exc:
        _make(cls, kernel="precomputed").fit(K, y)
    assert isinstance(exc.value, MemoryError)
    with pytest.raises(InsufficientMemoryError, match="grid_decision_functions .* evaluate fewer"):
        grid_decision_functions(K, y, K, [1e-3], [0.0], [0.0, 1e-2])
    with pytest.raises(InsufficientMemoryError, match="training kernels"):  # feature views: before the kernels
        MVLSVM(views=[76, 64, 6]).fit(X, y)
    with pytest.raises(InsufficientMemoryError, match=r"the structured MVL-LS solve at n = 60, m = 3.*solver=\"cg\""):
        MVLLeastSquares(views=[76, 64, 6], solver="structured").fit(X, y)
    # solver="auto" on feature views chooses "cg" when the structured solve would not fit
    assert MVLLeastSquares(views=[76, 64, 6]).fit(X, y).solver_ == "cg"


# ----------------------------------------------------------------------------------------- optC restart selection


def _scaled_digits(n_per_class=12):
    """Three mfeat views whose raw scales differ wildly (what a scaler is for); 5 classes, 40 % unlabelled."""
    ds = load_mfeat(["fou", "kar", "mor"])
    keep = np.concatenate([np.flatnonzero(ds.y == k)[:n_per_class] for k in range(5)])
    X = np.hstack(ds.views)[keep] * np.repeat([1e3, 1.0, 1e-2], [76, 64, 6])
    y = ds.y[keep].copy()
    y[np.random.default_rng(1).random(y.size) < 0.4] = -1
    return X, y, ds.y[keep]


def test_optc_validation_fraction_works_inside_a_pipeline():
    """The restart is chosen on a held-out part of what the estimator receives: behind a StandardScaler that is
    the scaled data, the same as scaling by hand; the kept c is refitted on every labelled sample."""
    X, y, truth = _scaled_digits()
    kw = dict(kernel="rbf", views=[76, 64, 6], n_restarts=6, n_iter=5, random_state=3, validation_fraction=0.3)
    pipe = make_pipeline(StandardScaler(), MVLLeastSquaresOptC(**kw)).fit(X, y)
    opt = pipe[-1]
    by_hand = MVLLeastSquaresOptC(**kw).fit(StandardScaler().fit_transform(X), y)
    np.testing.assert_allclose(opt.c_, by_hand.c_, rtol=1e-12)
    np.testing.assert_array_equal(opt.validation_scores_, by_hand.validation_scores_)
    assert opt.validation_scores_.max() > 0.7  # held-out accuracy of scaled data, not of bypassed raw data
    held = opt.validation_indices_
    lab = np.flatnonzero(y != -1)
    assert set(held) <= set(lab) and 0.2 <= held.size / lab.size <= 0.4
    for k in np.unique(y[lab]):  # stratified: every class held out and kept
        assert 0 < np.sum(y[held] == k) < np.sum(y[lab] == k)
    # coef_ is MVL-LS at the kept c on every labelled sample (Theorem 10), an independent solver path
    ls = MVLLeastSquares(kernel="rbf", views=[76, 64, 6], c=opt.c_).fit(pipe[0].transform(X), y)
    np.testing.assert_allclose(opt.coef_, ls.coef_, rtol=1e-8, atol=1e-10 * np.abs(ls.coef_).max())
    assert pipe.score(X, truth) > 0.9
    # and inside GridSearchCV over the pipeline
    search = GridSearchCV(pipe, {"mvlleastsquaresoptc__gamma_A": [1e-5, 1e-3]},
                          cv=StratifiedKFold(2, shuffle=True, random_state=0)).fit(X, y)
    assert search.best_score_ > 0.8


def test_optc_validation_fraction_needs_two_labels_per_class():
    K, _, y = make_problem(m=2, n=20, P=3, frac_unlabelled=0.0, seed=2)
    y[:] = [0, 1, 2] + [1, 2] * 8 + [1]
    with pytest.raises(ValueError, match=r"class 0 has 1 labelled sample\(s\)"):
        MVLLeastSquaresOptC(kernel="precomputed", validation_fraction=0.2).fit(sample_first(K), y)
    with pytest.raises(ValueError, match="not both"):
        MVLLeastSquaresOptC(kernel="precomputed", validation_fraction=0.2).fit(sample_first(K), y,
                                                                              sample_first(K), y)


# ----------------------------------------------------------------------------------------- MVML size


def test_mvml_keeps_only_what_prediction_needs():
    """The fitted model pickles to about the size of its training input (which feature-view prediction needs),
    not to the O(m n^2) factorisations and caches of the fit; predictions and the metric survive the pickle."""
    ds = load_mfeat()
    idx = np.sort(np.random.default_rng(0).permutation(2000)[:300])
    X, y = np.hstack(ds.views)[idx], ds.y[idx]
    model = MVML(views=[v.shape[1] for v in ds.views]).fit(X, y)
    blob = pickle.dumps(model)
    assert len(blob) < 1.5 * X.nbytes + 1_000_000  # 145 MB before (93 x X), 1.6 MB of X
    back = pickle.loads(blob)
    np.testing.assert_array_equal(back.predict(X), model.predict(X))
    np.testing.assert_allclose(back.block_norms_, model.block_norms_)
    # the metric's block norms from the compact form equal those of the dense metric
    A = model.A_[0]
    o = np.concatenate([[0], np.cumsum(model.block_sizes_)])
    dense = [[np.linalg.norm(A[o[i]:o[i + 1], o[j]:o[j + 1]]) for j in range(6)] for i in range(6)]
    np.testing.assert_allclose(model.block_norms_[0], dense, rtol=1e-10)


# ----------------------------------------------------------------------------------------- data CLI


def test_download_help_documents_every_option(capsys):
    from mvl.data import download

    with pytest.raises(SystemExit):
        download.main(["--help"])
    text = capsys.readouterr().out
    assert "``" not in text and ":func:" not in text  # no raw reST
    for option in ("--data-mirror", "--cache-dir", "--offline", "--retries", "--include-optional"):
        line = next(x for x in text.splitlines() if x.strip().startswith(option))
        rest = text.split(line, 1)[1].split("\n  -", 1)[0]
        assert len((line.split(option, 1)[1] + rest).split()) > 4, option  # a sentence, not just a metavar
    assert "multiview_mnist (multi-view MNIST" in text and "scikit-multimodallearn" in text


def test_readme_documents_the_multiview_mnist_source():
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert "multiview_mnist" in readme and "scikit-multimodallearn" in readme


# ----------------------------------------------------------------------------------------- docstrings


@pytest.mark.parametrize("cls", ALL)
def test_docstrings_give_every_default_and_run_their_examples(cls):
    """Every constructor parameter is documented as ``name : ..., default <its default>`` (numpydoc), and the
    Examples section runs as written (doctest)."""
    import ast
    import doctest
    import inspect

    doc = cls.__doc__
    for name, par in inspect.signature(cls.__init__).parameters.items():
        if name == "self":
            continue
        m = re.search(rf"^    {name} : (.*)$", doc, flags=re.M)
        assert m is not None, f"{cls.__name__}: {name} not documented"
        stated = re.search(r"default (.+)$", m.group(1))
        assert stated is not None, (cls.__name__, name, m.group(1))
        assert ast.literal_eval(stated.group(1)) == par.default, (cls.__name__, name, m.group(1), par.default)
    tests = doctest.DocTestFinder(recurse=False).find(cls, cls.__name__, globs={})
    assert tests and tests[0].examples, f"{cls.__name__} has no Examples"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for t in tests:
            runner.run(t)
    assert runner.failures == 0


@pytest.mark.parametrize("solver", ["nystrom", "cg"])
def test_optc_validation_fraction_with_the_scalable_f_step(solver):
    """validation_fraction with solver="nystrom" / "cg": the same hold-out as the structured path (same seed), and
    the kept c refitted on every labelled sample equals MVLLeastSquares(c=c_) with that solver."""
    X, y, truth = _scaled_digits()
    X = StandardScaler().fit_transform(X)
    kw = dict(kernel="rbf", views=[76, 64, 6], n_restarts=4, n_iter=3, random_state=5, validation_fraction=0.3)
    structured = MVLLeastSquaresOptC(solver="structured", **kw).fit(X, y)
    est = MVLLeastSquaresOptC(solver=solver, n_components=len(y), **kw).fit(X, y)
    np.testing.assert_array_equal(est.validation_indices_, structured.validation_indices_)
    assert est.validation_scores_.shape == (4,) and est.n_labelled_ == np.sum(y != -1)
    ref = MVLLeastSquares(kernel="rbf", views=[76, 64, 6], c=est.c_, solver=solver, n_components=len(y),
                          random_state=5).fit(X, y)
    np.testing.assert_allclose(est.decision_function(X), ref.decision_function(X), rtol=1e-5, atol=1e-6)
    assert est.score(X, truth) > 0.9
