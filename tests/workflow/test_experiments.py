"""The experiment runner against direct computations on real (embedded) data."""

import json

import numpy as np
import pytest
from scipy.spatial.distance import pdist
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from mvl import MVLLeastSquares
from mvl.workflow import io
from mvl.data.embedded import load_mfeat
from conftest import gamma_kw
from mvl.workflow.experiments import run_method
from mvl.workflow.settings import run_settings
from mvl.workflow.methods import method
from mvl.workflow.runner import views_of
from mvl.data.protocols import draw_training_set, stratified_split

# the workflow passes the paper's graph explicitly (dense W = K, p = 1), whatever the estimators' defaults are; the
# direct fits below do the same
PAPER_GRAPH = dict(n_neighbors=None, laplacian_power=1)
CONFIG = dict(gammas={"A": 1e-5, "B": 1e-6, "W": 1e-6}, grid={"A": [1e-6, 1e-4], "B": [0.0, 1e-5], "W": [0.0, 1e-5]},
              graph={"laplacian": "normalized", "n_neighbors": None}, svc_C=1.0,
              optc={"n_restarts": 3, "alpha": 1.0, "tol": 1e-8, "seed": 4})
RUN = run_settings(CONFIG)
DRAW = dict(n_val_per_class=3, u_max=4)


@pytest.fixture(scope="module")
def mfeat_problem():
    """Pool of 20 per class, 30 test per class, three views; kernels built with sklearn (independently),
    sample-first (N, N, m) as the estimators take them."""
    ds = load_mfeat(["fac", "kar", "mor"])
    keep = np.concatenate([np.flatnonzero(ds.y == k)[:50] for k in range(10)])
    y = np.full(ds.y.shape, -5)
    y[keep] = ds.y[keep]
    # stratified_split needs every sample to belong to a class: work on the kept subset only
    y_sub = ds.y[keep]
    views = [X[keep] for X in ds.views]
    split = stratified_split(y_sub, 30, seed=7)
    Kp, Kt = [], []
    for X in views:
        sc = StandardScaler().fit(X[split.pool])
        A, B = sc.transform(X[split.pool]), sc.transform(X[split.test])
        sigma = np.median(pdist(A))
        Kp.append(rbf_kernel(A, A, gamma=1 / (2 * sigma**2)))
        Kt.append(rbf_kernel(B, A, gamma=1 / (2 * sigma**2)))
    return np.stack(Kp, axis=-1), np.stack(Kt, axis=-1), y_sub, split, ["fac", "kar", "mor"]


def _direct(problem, lc, uc):
    Kp, Kt, y, split, _ = problem
    d = draw_training_set(split, lc, uc, DRAW["n_val_per_class"], u_max=DRAW["u_max"])
    pos = {g: i for i, g in enumerate(split.pool)}
    tr = np.array([pos[i] for i in d.train])
    va = np.array([pos[i] for i in d.validation])
    ytr = np.concatenate([y[d.labelled], -np.ones(len(d.unlabelled), int)])
    return Kp[np.ix_(tr, tr)], Kt[:, tr], Kp[np.ix_(va, tr)], ytr, y[split.test], y[d.validation]


@pytest.mark.parametrize("lc, uc", [(1, 0), (2, 4)])
def test_mvl_ls_matches_direct_dense_fit(mfeat_problem, lc, uc):
    Kp, Kt, y, split, views = mfeat_problem
    rows = run_method("mvl_ls", Kp, Kt, y, split, lc, uc, RUN, views, dataset="mfeat", seed=7, **DRAW)
    K, K_te, _, ytr, yte, _ = _direct(mfeat_problem, lc, uc)
    ref = MVLLeastSquares(gamma_A=1e-5, gamma_B=1e-6, gamma_W=1e-6, solver="dense", kernel="precomputed",
                          **PAPER_GRAPH).fit(K, ytr)
    ref = ref.score(K_te, yte)
    assert len(rows) == 1 and rows[0]["accuracy"] == pytest.approx(ref, abs=1e-12)
    assert rows[0]["setting"] == ("supervised" if uc == 0 else "semi-supervised")
    assert rows[0]["graph"] == "normalized-dense" and rows[0]["views"] == "fac+kar+mor"


def test_cv_selects_best_validation_point_by_brute_force(mfeat_problem):
    Kp, Kt, y, split, views = mfeat_problem
    (row,) = run_method("mvl_ls_cv", Kp, Kt, y, split, 2, 4, RUN, views, **DRAW)
    K, K_te, K_va, ytr, yte, yva = _direct(mfeat_problem, 2, 4)
    g = CONFIG["grid"]
    val = {(a, b, w): MVLLeastSquares(gamma_A=a, gamma_B=b, gamma_W=w, solver="dense", kernel="precomputed",
                                      **PAPER_GRAPH).fit(K, ytr)
           .score(K_va, yva) for a in g["A"] for b in g["B"] for w in g["W"]}
    chosen = (row["gamma_A"], row["gamma_B"], row["gamma_W"])
    assert val[chosen] == max(val.values()) == pytest.approx(row["val_accuracy"])
    test_acc = MVLLeastSquares(**gamma_kw(chosen), solver="dense", kernel="precomputed", **PAPER_GRAPH).fit(K, ytr)
    test_acc = test_acc.score(K_te, yte)
    assert row["accuracy"] == pytest.approx(test_acc, abs=1e-12)
    assert row["gamma_choice"] == "selected" and row["grid_size"] == 8


def test_kfold_selects_best_mean_fold_accuracy_by_brute_force(mfeat_problem):
    """mvl_ls_kfold: the row's gammas maximise the mean accuracy over stratified k-fold splits of the labelled
    samples (every unlabelled sample in every training fold), each fold fitted by the dense textbook solver; the
    row's accuracy is the dense fit on the whole draw with them. At l_c = 1 the validation set decides instead."""
    from sklearn.model_selection import StratifiedKFold

    Kp, Kt, y, split, views = mfeat_problem
    (row,) = run_method("mvl_ls_kfold", Kp, Kt, y, split, 2, 4, RUN, views, **DRAW)
    K, K_te, _, ytr, yte, _ = _direct(mfeat_problem, 2, 4)
    lab, unl = np.flatnonzero(ytr >= 0), np.flatnonzero(ytr < 0)
    folds = [(np.sort(np.concatenate([lab[a], unl])), lab[b])
             for a, b in StratifiedKFold(2).split(np.zeros(lab.size), ytr[lab])]
    g = CONFIG["grid"]

    def fold_accuracy(gammas, tr, te):
        est = MVLLeastSquares(gamma_A=gammas[0], gamma_B=gammas[1], gamma_W=gammas[2], solver="dense",
                              kernel="precomputed", **PAPER_GRAPH)
        return est.fit(K[np.ix_(tr, tr)], ytr[tr]).score(K[np.ix_(te, tr)], ytr[te])

    cv = {(a, b, w): np.mean([fold_accuracy((a, b, w), tr, te) for tr, te in folds])
          for a in g["A"] for b in g["B"] for w in g["W"]}
    chosen = (row["gamma_A"], row["gamma_B"], row["gamma_W"])
    assert cv[chosen] == pytest.approx(max(cv.values()), abs=1e-12)
    assert row["val_accuracy"] == pytest.approx(max(cv.values()), abs=1e-12)
    assert chosen == next(k for k, v in cv.items() if v == max(cv.values()))  # ties: the first, as GridSearchCV
    ref = MVLLeastSquares(gamma_A=chosen[0], gamma_B=chosen[1], gamma_W=chosen[2], solver="dense",
                          kernel="precomputed", **PAPER_GRAPH).fit(K, ytr).score(K_te, yte)
    assert row["accuracy"] == pytest.approx(ref, abs=1e-12)
    assert row["gamma_choice"] == "selected" and row["selected_by"] == "2-fold CV"
    assert row["graph_used"] == "normalized-dense"
    (one,) = run_method("mvl_ls_kfold", Kp, Kt, y, split, 1, 0, RUN, views, **DRAW)
    (val,) = run_method("mvl_ls_cvgraph", Kp, Kt, y, split, 1, 0, RUN, views, **DRAW)
    assert one["selected_by"] == "validation set" and one["setting"] == "supervised"
    assert (one["gamma_A"], one["gamma_B"], one["gamma_W"], one["accuracy"]) == (
        val["gamma_A"], val["gamma_B"], val["gamma_W"], val["accuracy"])


def test_svc_baseline_matches_sklearn(mfeat_problem):
    Kp, Kt, y, split, views = mfeat_problem
    (row,) = run_method("svc_sum", Kp, Kt, y, split, 3, 0, RUN, views, **DRAW)
    K, K_te, _, ytr, yte, _ = _direct(mfeat_problem, 3, 0)
    ref = SVC(kernel="precomputed", C=1.0).fit(K.sum(-1) / 3, ytr).score(K_te.sum(-1) / 3, yte)
    assert row["accuracy"] == pytest.approx(ref, abs=1e-12)


def test_ablation_rows_and_single_view(mfeat_problem):
    Kp, Kt, y, split, views = mfeat_problem
    rows = run_method("mvl_ls_ablation", Kp, Kt, y, split, 1, 4, RUN, views, **DRAW)
    assert [(r["gamma_B"], r["gamma_W"]) for r in rows] == [(0, 0), (0, 1e-6), (1e-6, 0), (1e-6, 1e-6)]
    (row,) = run_method("view_kar", Kp[..., 1:2], Kt[..., 1:2], y, split, 2, 0, RUN, ["kar"], **DRAW)
    K, K_te, _, ytr, yte, _ = _direct(mfeat_problem, 2, 0)
    ref = MVLLeastSquares(gamma_A=1e-5, gamma_B=1e-6, gamma_W=1e-6, solver="dense", kernel="precomputed",
                          **PAPER_GRAPH).fit(K[..., 1:2], ytr)
    ref = ref.score(K_te[..., 1:2], yte)
    assert row["accuracy"] == pytest.approx(ref, abs=1e-12)
    rows = run_method("single_views", Kp, Kt, y, split, 2, 0, RUN, views, **DRAW)
    assert [r["method"] for r in rows] == ["view_fac", "view_kar", "view_mor"]
    assert rows[1]["accuracy"] == row["accuracy"] and rows[1]["views"] == "kar"
    assert views_of(method("view_kar"), views) == ["kar"] and views_of(method("mvl_ls"), views) == views
    assert method("view_kar").family == "ls" and method("mvl_ls_optc25").family == "optc"
    with pytest.raises(ValueError, match="unknown method"):
        method("nope")
    with pytest.raises(ValueError, match="unknown view"):
        views_of(method("view_xyz"), views)


def test_optc_run_matches_direct_fit(mfeat_problem):
    """mvl_ls_optc<N>: the run's accuracy and c equal a direct MVLLeastSquaresOptC fit with the same seed,
    and the test accuracy equals a plain dense MVL-LS fit with the learned c."""
    from mvl import MVLLeastSquaresOptC

    Kp, Kt, y, split, views = mfeat_problem
    (row,) = run_method("mvl_ls_optc4", Kp, Kt, y, split, 2, 0, RUN, views, seed=7, **DRAW)
    K, K_te, K_va, ytr, yte, yva = _direct(mfeat_problem, 2, 0)
    ref = MVLLeastSquaresOptC(gamma_A=1e-5, gamma_B=1e-6, gamma_W=1e-6, n_restarts=3, n_iter=4,
                              random_state=[4, 7, 2, 0],
                              kernel="precomputed", **PAPER_GRAPH)
    ref.fit(K, ytr, K_va, yva)
    c = np.array(json.loads(row["optc_c"]))
    np.testing.assert_allclose(c, ref.c_, rtol=1e-8, atol=1e-10)
    plain = MVLLeastSquares(gamma_A=1e-5, gamma_B=1e-6, gamma_W=1e-6, c=ref.c_, solver="dense", kernel="precomputed",
                            **PAPER_GRAPH).fit(K, ytr)
    plain = plain.score(K_te, yte)
    assert row["accuracy"] == pytest.approx(plain, abs=1e-12)
    h = np.array(json.loads(row["optc_objective"]))
    assert h.shape == (3, 4) and row["optc_best_restart"] == ref.best_restart_


def test_atomic_write_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "out.json"
    with pytest.raises(RuntimeError):
        with io.atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("interrupted")
    assert list(tmp_path.iterdir()) == []
    io.save_json(target, {"a": 1})
    assert json.loads(target.read_text()) == {"a": 1} and len(list(tmp_path.iterdir())) == 1


@pytest.mark.slow
def test_structured_equals_dense_on_real_kernels():
    """All six mfeat views, 60 labelled + 40 unlabelled per class pool subset: n = 500, dense N = 3000."""
    ds = load_mfeat()
    split = stratified_split(ds.y, 150, seed=1)
    d = draw_training_set(split, 30, 20, 0)
    from mvl.kernels import multiview_kernels

    K, Kt = multiview_kernels([X[d.train] for X in ds.views], [X[split.test] for X in ds.views])
    ytr = np.concatenate([ds.y[d.labelled], -np.ones(len(d.unlabelled), int)])
    c = np.array([0.3, -0.1, 0.25, 0.2, 0.15, 0.2])
    a = MVLLeastSquares(gamma_A=1e-5, gamma_B=1e-6, gamma_W=1e-6, c=c, kernel="precomputed", **PAPER_GRAPH).fit(K, ytr)
    b = MVLLeastSquares(gamma_A=1e-5, gamma_B=1e-6, gamma_W=1e-6, c=c, solver="dense", kernel="precomputed",
                        **PAPER_GRAPH).fit(K, ytr)
    fa, fb = a.decision_function(Kt), b.decision_function(Kt)
    assert np.max(np.abs(fa - fb)) / np.max(np.abs(fb)) <= 1e-8
    assert a.score(Kt, ds.y[split.test]) > 0.9


def test_registry_parses_the_name_grammar_once():
    """The parameters that reports, comparison and runner read from a method name come from the registry."""
    from mvl.workflow.methods import lookup, method_attribute

    assert method("view_kar").view == "kar" and method("mvl_ls").view is None
    assert method("mvl_ls_optc25").optc_iterations == 25 and method("mvl_ls_optc25").kind == "mvl_ls_optc"
    m = method("mvml_sparse_n24")
    assert (m.mvml_metric, m.nystrom_percent, m.kind, m.related, m.family) == ("sparse", 24, "mvml", True, "comparison")
    assert method("perceptron_orth").related and method("perceptron_orth").kind == "perceptron"
    assert method("mvl_svm_ablation").ablation and method("mvl_svm_ablation").kind == "mvl_svm"
    assert method("mvl_binsvm").kind == "mvl_binsvm" and method("svc_sum").kind == "svc"
    assert not method("mvl_ls_cv").ablation and not method("mvl_ls_cv").related
    assert lookup("SR: MR") is None and lookup(float("nan")) is None
    assert method_attribute(["view_fou", "mvl_ls", "nope"], "view", "-") == ["fou", None, "-"]


def test_registry_says_how_every_method_runs():
    """Every method's run kind has one run function, and its estimator is built from the run settings by the
    registry's factory (no list of names in the runner)."""
    from mvl import MVLLeastSquares
    from mvl import MVML
    from mvl.estimators.optc import MVLLeastSquaresOptC
    from mvl import OrthogonalMultiViewPerceptron
    from mvl import MVLBinarySVM
    from mvl.workflow.experiments import RUNS
    from mvl.workflow.methods import RUNS as RUN_KINDS

    assert set(RUNS) == set(RUN_KINDS)
    names = ["mvl_ls", "mvl_ls_ablation", "mvl_ls_cv", "mvl_ls_kfold", "mvl_ls_ablation_cvgraph", "mvl_svm_ablation",
             "svc_sum", "single_views", "perceptron_matrix", "view_fou", "mvl_ls_optc25", "mvml_full_n24"]
    assert {method(n).run for n in names} == set(RUN_KINDS)
    params = run_settings(dict(CONFIG, graph={"laplacian": "normalized", "n_neighbors": 7, "laplacian_power": 2},
                               comparison={"mvml_lambda": 0.3, "perceptron_epochs": 4}))
    ls = method("mvl_ls_cvgraph").make_estimator(params, gammas=(1.0, 2.0, 3.0), graph=params.graph.with_knn(5, 1))
    assert isinstance(ls, MVLLeastSquares) and (ls.gamma_A, ls.gamma_B, ls.gamma_W) == (1.0, 2.0, 3.0)
    assert (ls.n_neighbors, ls.laplacian_power, ls.kernel) == (5, 1, "precomputed")
    svm = method("mvl_binsvm_ablation").make_estimator(params)
    assert isinstance(svm, MVLBinarySVM) and (svm.gamma_A, svm.n_neighbors, svm.laplacian_power) == (1e-5, 7, 2)
    opt = method("mvl_ls_optc25").make_estimator(params, seed=3, l_c=2, u_c="all")
    assert isinstance(opt, MVLLeastSquaresOptC) and opt.n_iter == 25 and opt.random_state == [4, 3, 2, -1]
    mv = method("mvml_sparse_n24").make_estimator(params, seed=5)
    assert isinstance(mv, MVML) and (mv.learn_A, mv.nystrom, mv.lmbda, mv.random_state) == ("sparse", 0.24, 0.3, 5)
    pc = method("perceptron_orth").make_estimator(params, seed=2)
    assert isinstance(pc, OrthogonalMultiViewPerceptron) and pc.n_epochs == 4
    assert method("svc_sum").make_estimator(params).C == 1.0
    with pytest.raises(ValueError, match="several estimators"):
        method("single_views").make_estimator(params)
