"""The peers study's class-prior methods (Poisson learning with priors, PoissonMBO, VolumeMBO): each equals
graphlearning's own class called directly on the same graph with independently computed priors, the priors come
from the labelled points or (``*_true``) from every point, and the registry lists them for the peers study."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from mvl.workflow import methods, peers as P, peers_settings

NEW = ("poisson_priors", "poisson_priors_true", "poisson_mbo", "poisson_mbo_true", "volume_mbo", "volume_mbo_true")
CLASSES = {"poisson_priors": "poisson", "poisson_mbo": "poisson_mbo", "volume_mbo": "volume_mbo"}


def _gl():
    try:
        import graphlearning
    except ImportError:
        pytest.fail("graphlearning is not installed: pip install 'mvl[test]' (or graphlearning==1.7.5)")
    return graphlearning


def _imbalanced(seed=0):
    """Two views of three Gaussian blobs of 30, 20 and 10 points (labels 2, 5, 7), two labelled points per class:
    the labelled proportions (uniform) differ from the true ones (1/2, 1/3, 1/6)."""
    rng = np.random.default_rng(seed)
    sizes, codes = (30, 20, 10), (2, 5, 7)
    X = np.vstack([rng.normal(size=(s, 4)) + 2.5 * np.eye(4)[k] for k, s in enumerate(sizes)])
    y = np.repeat(codes, sizes)
    labelled = np.array([0, 1, 30, 31, 50, 51])
    views = [P.standardise(X[:, :2]), P.standardise(X[:, 2:])]
    return views, y, labelled


def test_registry_lists_the_prior_methods_for_the_peers_study():
    names = [m.name for m in methods.methods_for("peers")]
    assert set(NEW) <= set(names) and set(NEW) <= set(peers_settings.PEER_METHODS)
    assert names[-1] == "labelspreading"
    for name in NEW:
        m = methods.method(name, "peers")
        assert not m.by_default and m.requires == ("graphlearning",) and not m.inductive
        true = name.endswith("_true")
        assert dict(m.fit_params)["priors"] == ("true" if true else "labelled")
        # the variant that reads every label says so, and is not one of the methods MVL-LS is judged against
        assert ("true class proportions (the authors' protocol)" in m.label) == true
        assert ("priors from the labelled points" in m.label) == (not true)
        assert (name in P.GRAPH_METHODS) == (not true)
    assert set(NEW).isdisjoint(peers_settings.DEFAULT_METHODS)
    s = peers_settings.parse_settings({"datasets": ["mfeat"], "seeds": [0], "methods": list(NEW)})
    assert s.methods == NEW


def test_class_priors_from_the_labelled_points_or_every_point():
    _, y, labelled = _imbalanced()
    np.testing.assert_allclose(P.class_priors(y, labelled, "labelled"), [1 / 3] * 3)
    np.testing.assert_allclose(P.class_priors(y, labelled, "true"), [30 / 60, 20 / 60, 10 / 60])
    # a class without labelled points is left out (the labels are mapped to the labelled classes)
    np.testing.assert_allclose(P.class_priors(y, labelled[:4], "true"), [30 / 50, 20 / 50])


@pytest.mark.parametrize("name", NEW)
def test_each_prior_method_equals_graphlearning_called_directly(name, monkeypatch):
    """The wrapper passes the graph, the labels (as 0..c-1) and the priors: the same predictions as graphlearning's
    class on the same graph with priors counted here, and the priors it received are these."""
    gl = _gl()
    views, y, labelled = _imbalanced()
    k = 6
    W = P.knn_graph(np.hstack(views), k)
    base = CLASSES[name.removesuffix("_true")]
    ref_y = y if name.endswith("_true") else y[labelled]
    classes = np.unique(y[labelled])
    priors = np.array([np.mean(ref_y == c) for c in classes])
    priors = priors / priors.sum()
    codes = np.searchsorted(classes, y[labelled])
    ctypes.CDLL(None).srand(11)
    direct = classes[getattr(gl.ssl, base)(W, class_priors=priors).fit_predict(labelled, codes)]

    seen = []
    original = getattr(gl.ssl, base)

    def spy(W_, **kw):
        seen.append((W_, kw))
        return original(W_, **kw)

    monkeypatch.setattr(gl.ssl, base, spy)
    graphs = {}
    pred, solver, _ = P.fit_method(name, views, y, labelled, k=k, graphs=graphs, seed=11)
    assert solver == "" and np.array_equal(pred, direct)
    (W_seen, kw), = seen
    assert abs(W_seen - W).max() == 0 and abs(graphs["concat"][0] - W).max() == 0
    np.testing.assert_allclose(kw["class_priors"], priors, rtol=1e-12)
    assert pred.dtype == y.dtype and set(pred) <= set(classes)


def test_volume_mbo_is_reproducible_with_the_seed():
    views, y, labelled = _imbalanced(1)
    a = P.fit_method("volume_mbo_true", views, y, labelled, k=6, seed=3)[0]
    P.fit_method("volume_mbo_true", views, y, labelled, k=6, seed=4)  # the C generator moves on
    b = P.fit_method("volume_mbo_true", views, y, labelled, k=6, seed=3)[0]
    assert np.array_equal(a, b)


def test_mbo_without_priors_is_refused():
    views, y, labelled = _imbalanced()
    W = P.knn_graph(np.hstack(views), 6)
    for base in ("poisson_mbo", "volume_mbo"):
        with pytest.raises(ValueError, match="needs class_priors"):
            P.graph_learning(W, labelled, y[labelled], base)
    with pytest.raises(ValueError, match="one per labelled class"):
        P.graph_learning(W, labelled, y[labelled], "poisson", class_priors=[0.5, 0.5])
    with pytest.raises(ValueError, match="unknown graph learning method"):
        P.graph_learning(W, labelled, y[labelled], "gcn")


def test_run_peers_passes_the_draw_seed(monkeypatch):
    """run_peers hands every fit the seed of its draw (VolumeMBO seeds the C generator with it)."""
    seeds = []
    real = P.graph_learning

    def spy(*a, seed=None, **kw):
        seeds.append(seed)
        return real(*a, seed=seed, **kw)

    monkeypatch.setattr(P, "graph_learning", spy)
    s = peers_settings.parse_settings({"datasets": ["mfeat"], "seeds": [5], "points_per_class": 12,
                                       "labels_per_class": [1], "methods": ["volume_mbo", "poisson_mbo_true"]})
    rows = P.run_peers("mfeat", 5, s)
    assert seeds == [5, 5] and [r["method"] for r in rows] == ["volume_mbo", "poisson_mbo_true"]


def test_table_and_figure_show_every_method_of_the_results(tmp_path):
    """The table and the figure draw their rows and lines from the results: every peers method, one colour each."""
    import pandas as pd

    rows = [dict(dataset="mfeat", seed=s, n=100, n_views=6, setting="stratified", l_c=lc, n_labelled=10 * lc,
                 method=m, solver="", accuracy=0.5 + 0.02 * i + 0.01 * s, seconds=1.0)
            for s in (0, 1) for lc in (1, 5) for i, m in enumerate(peers_settings.PEER_METHODS)]
    summary = P.summarise(pd.DataFrame(rows))
    assert list(P.accuracy_table(summary).columns) == list(peers_settings.PEER_METHODS)
    fig = P.accuracy_figure(summary)
    lines = {c.get_label(): c for c in fig.axes[0].containers}
    assert set(lines) == {P.LABELS[m] for m in peers_settings.PEER_METHODS}
    colours = [tuple(c.lines[0].get_color()) if not isinstance(c.lines[0].get_color(), str)
               else c.lines[0].get_color() for c in lines.values()]
    assert len(set(colours)) == len(colours)
    assert {t.get_text() for t in fig.legends[0].get_texts()} == set(lines)
