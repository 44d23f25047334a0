"""Model selection for MVL-LS: ``MVLLeastSquaresCV`` and the semi-supervised cross-validation splitter.

Section 7.3 of the paper selects (gamma_A, gamma_B, gamma_W) on a validation set; the graph of the
within-view term (eq 60-64: kNN size, Laplacian power) is a choice of the same kind. In a semi-supervised
problem only the labelled samples can be scored, and every unlabelled sample belongs in every training fold
(it costs no label and shapes the graph). :class:`SemiSupervisedCV` splits that way, for any scikit-learn
tool (``GridSearchCV(..., cv=SemiSupervisedCV(cv=5))``); :class:`MVLLeastSquaresCV` makes the same selection
faster, in the spirit of ``RidgeCV`` / ``LogisticRegressionCV``: per fold one call of
:func:`mvl.grid_decision_functions` evaluates the whole grid of graphs x gamma_A x gamma_B x gamma_W with the
eigendecompositions shared across it (Theorem 10 through one symmetric eigendecomposition per view and graph,
see :mod:`mvl.solvers.grid`), where ``GridSearchCV`` factorises every grid point of every fold anew.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import _fit_context
from sklearn.model_selection import StratifiedKFold, check_cv
from sklearn.utils._param_validation import HasMethods, StrOptions
from sklearn.utils.validation import check_is_fitted, column_or_1d

from ..docstrings import shared_parameters
from .base import StrictInterval, MultiViewClassifier, encode_labels, take_samples, unlabelled_mask
from ..solvers.grid import grid_decision_functions
from .least_squares import MVLLeastSquares

__all__ = ["MVLLeastSquaresCV", "SemiSupervisedCV", "INCOMPLETE_GAMMAS_B"]


class SemiSupervisedCV:
    """Cross-validation over the labelled samples, with every unlabelled sample in every training fold.

    ``split(X, y)`` splits the labelled samples of ``y`` (-1, or None/NaN in object arrays, marks an unlabelled
    one) with ``cv`` (an int: ``StratifiedKFold(cv)``; or any scikit-learn splitter, which then sees only the
    labelled samples, in their order) and yields (train, test) index arrays into all the samples: train = the
    fold's labelled training samples and every unlabelled sample, test = the fold's held-out labelled samples.
    Pass it as ``cv=`` to ``GridSearchCV`` or ``cross_val_score`` with a semi-supervised estimator of this
    package.

    Parameters
    ----------
    cv : int >= 2 or a cross-validation splitter, default 5
        How the labelled samples are split.
    Examples
    --------
    >>> import numpy as np
    >>> from mvl.estimators.model_selection import SemiSupervisedCV
    >>> y = np.array([0, 0, 1, 1, -1, -1])
    >>> [(tr.tolist(), te.tolist()) for tr, te in SemiSupervisedCV(cv=2).split(np.zeros(6), y)]
    [([1, 3, 4, 5], [0, 2]), ([0, 2, 4, 5], [1, 3])]
    """
    def __init__(self, *, cv=5):
        self.cv = cv
    def _labelled_cv(self):
        return StratifiedKFold(self.cv) if isinstance(self.cv, Integral) else self.cv
    def get_n_splits(self, X=None, y=None, groups=None):
        """Number of folds."""
        cv = self._labelled_cv()
        if y is not None and not isinstance(self.cv, Integral):
            lab = ~unlabelled_mask(column_or_1d(y))
            return cv.get_n_splits(np.zeros(int(lab.sum())), column_or_1d(y)[lab], groups)
        return cv.get_n_splits(X, y, groups)
    def split(self, X, y, groups=None):
        """(train, test) index arrays: labelled folds, every unlabelled sample in every training fold."""
        y = column_or_1d(y)
        unl = unlabelled_mask(y)
        lab, unl_idx = np.flatnonzero(~unl), np.flatnonzero(unl)
        g = None if groups is None else np.asarray(groups)[lab]
        for tr, te in self._labelled_cv().split(np.zeros((lab.size, 1)), y[lab], g):
            yield np.sort(np.concatenate([lab[tr], unl_idx])), lab[te]
    def __repr__(self):
        return f"SemiSupervisedCV(cv={self.cv!r})"


INCOMPLETE_GAMMAS_B = (0.0, 1e-5, 1e-4, 1e-3)
"""The gamma_B values of ``gammas_B="auto"`` on incomplete views: no coupling, and the range that the validation
sweep of :data:`mvl.estimators.base.INCOMPLETE_GAMMA_B` covers (``benchmarks/bench_incomplete.py --sweep``)."""

SHARE_GRID = (1e-4, 1e-3, 1e-2)
"""The kernel-term shares theta of ``MVLLeastSquaresCV(gammas_A="share")``: around the graph regime's target
:data:`mvl.solvers.vecchia_direct.KERNEL_SHARE` (graph6's validated fits lie at theta <= 1.5e-2)."""


@shared_parameters
class MVLLeastSquaresCV(MultiViewClassifier):
    """MVL-LS (Algorithm 1) with the graph and (gamma_A, gamma_B, gamma_W) selected by cross-validation.

    Every point of ``graphs`` x ``gammas_A`` x ``gammas_B`` x ``gammas_W`` is scored by its mean accuracy over
    folds of the labelled samples; every unlabelled sample is in every fold's training set (and graph), as with
    :class:`SemiSupervisedCV`. Per fold one call of :func:`mvl.grid_decision_functions` evaluates the whole
    grid, reusing eigendecompositions across it (one per view for the kernel, one per view and kNN size for
    the Laplacian, serving every power, and one per view and graph for every (gamma_A, gamma_W) with
    gamma_B = 0). The best point (ties: the first in the order of ``cv_results_["params"]``, as GridSearchCV)
    is refitted on all the data: ``best_estimator_``, an :class:`mvl.MVLLeastSquares`, which predicts.
    The selection equals ``GridSearchCV(MVLLeastSquares(...), grid, cv=SemiSupervisedCV(cv=cv))`` over the
    same grid (tested), several times faster (``benchmarks/bench_cv.py``).
    Incomplete views (NaN rows, :mod:`mvl.solvers.incomplete`): the same folds, each grid point one view-by-view
    incomplete solve per fold (:func:`mvl.solvers.incomplete.solve_structured_incomplete`, each view's graph built once
    per fold on its training samples; no shared eigendecompositions), again equal to that GridSearchCV (tested).

    Parameters
    ----------
    gammas_A : sequence of float > 0 or "share", default (1e-5, 1e-4, 1e-3, 1e-2)
        RKHS regularisation values (eq 10), multiplied by l as in eq (67)-(68); typical range 1e-6 to 1e-1
        (``benchmarks/study_defaults.py`` selected 1e-5 most often). Values below 1e-5 can leave
        (gamma_W L^p K + gamma_A I) nearly singular when a kernel is only numerically PSD (e.g. a float32
        linear Gram matrix); the grid, which clips the kernel's eigenvalues at 0, and the refit then disagree.
        "share": the graph regime's grid, the gamma_A at which the kernel term is 1e-4, 1e-3 and 1e-2 of the
        objective at the graph term's limit (:data:`SHARE_GRID`, :func:`mvl.solvers.vecchia_direct.share_gamma_A`
        on all of X with the first kNN graph of ``graphs`` and the largest of ``gammas_W``): the parameterisation
        that holds as n grows in the graph regime, where the validated gamma_A falls with n. Not for data outside
        the graph regime (e.g. mfeat: the kernel term carries the fit there, the rule's values are far too small).
    gammas_B : sequence of float >= 0, or "auto", default "auto"
        Between-view weights (eq 53-58). Each value > 0 costs one n x n Cholesky and an O(m n^3) product per
        grid point (gamma_B = 0 points share the eigendecompositions); add 1e-6 (the paper's value) if wanted.
        "auto": (0,) on complete views; :data:`mvl.estimators.model_selection.INCOMPLETE_GAMMAS_B` when training
        views are missing, where the between-view term is what carries the labels across views.
    gammas_W : sequence of float >= 0, default (0.0, 1e-4, 1e-2, 1.0)
        Within-view (manifold) weights (eq 53, 60-64); 0 leaves the graph out (the supervised MVL-LS when
        gamma_B = 0).
    graphs : sequence of (n_neighbors, laplacian_power) pairs, default ((5, 2), (10, 2), (5, 4), (10, 4))
        The graphs tried: a symmetrised kNN graph with ``n_neighbors`` (None: the paper's dense kernel weights
        W = K) and the Laplacian power p of (L^i)^p. The default covers the graphs the validation study
        (``benchmarks/study_defaults.py``) selected most often; the estimators' default graph is (5, 2).
    graph_weights : "kernel" or "binary", default "kernel"
        Edge weights of every kNN graph (the dense graph keeps the kernel values).
    laplacian : "normalized" or "unnormalized", default "normalized"
        I - D^-1/2 W D^-1/2 or D - W.
    c : array (m,) or None, default None
        Combination vector of C = c^T (x) I_P (eq 52); None is 1/m.
    cv : None, int >= 2 or a cross-validation splitter, default None
        Folds of the labelled samples: None is ``StratifiedKFold(min(5, smallest class count))`` (each class
        needs 2 labelled samples); an int k is ``StratifiedKFold(k)``; a splitter (e.g. ``StratifiedShuffleSplit(
        1, test_size=0.2)`` for one hold-out split) sees only the labelled samples. Scoring is accuracy.
    {kernel, views, bandwidth}

    Attributes
    ----------
    best_params_ : dict
        gamma_A, gamma_B, gamma_W, n_neighbors, laplacian_power of the selected point.
    best_score_ : float
        Its mean cross-validated accuracy.
    best_index_ : int
        Its index in ``cv_results_``.
    cv_results_ : dict of arrays
        As GridSearchCV's: ``params`` (list of dicts), ``param_<name>``, ``split<k>_test_score``,
        ``mean_test_score``, ``std_test_score``, ``rank_test_score``.
    best_estimator_ : MVLLeastSquares
        Refitted on all of X and y with ``best_params_``; ``predict``, ``decision_function``, ``score`` and
        ``view_decision_function`` use it.
    n_splits_ : int
    classes_, coef_, c_, n_views_, n_train_, n_features_in_, n_labelled_, bandwidths_, feature_names_in_
        As the refitted :class:`mvl.MVLLeastSquares` (``best_estimator_``'s; ``feature_names_in_`` only for a
        DataFrame X).

    See Also
    --------
    MVLLeastSquares : the estimator refitted with the selected parameters.
    SemiSupervisedCV : the folds (unlabelled samples in every training fold).
    mvl.solvers.grid.grid_decision_functions : the shared-factorisation grid evaluation.

    {mvl_references}

    {mfeat_example}
    >>> from mvl import MVLLeastSquaresCV
    >>> idx = idx[:300]
    >>> y = ds.y[idx].copy()
    >>> labelled = np.concatenate([np.flatnonzero(y == k)[:3] for k in range(10)])  # 3 per class (cv = 3)
    >>> y[np.setdiff1d(np.arange(300), labelled)] = -1  # 30 labelled samples, 270 unlabelled
    >>> model = MVLLeastSquaresCV(views=[76, 64, 6], cv=3).fit(X[idx], y)
    >>> sorted(model.best_params_)
    ['gamma_A', 'gamma_B', 'gamma_W', 'laplacian_power', 'n_neighbors']
    """

    _parameter_constraints: dict = {
        **MultiViewClassifier._parameter_constraints,
        "gammas_A": ["array-like", StrOptions({"share"})],
        "gammas_B": ["array-like", StrOptions({"auto"})],
        "gammas_W": ["array-like"],
        "graphs": ["array-like"],
        "graph_weights": [StrOptions({"kernel", "binary"})],
        "laplacian": [StrOptions({"normalized", "unnormalized"})],
        "c": [None, "array-like"],
        "cv": [None, StrictInterval(Integral, 2, None, closed="left"), HasMethods(["split", "get_n_splits"])],
    }
    _semi_supervised = True

    def __init__(self, *, gammas_A=(1e-5, 1e-4, 1e-3, 1e-2), gammas_B="auto", gammas_W=(0.0, 1e-4, 1e-2, 1.0),
                 graphs=((5, 2), (10, 2), (5, 4), (10, 4)), graph_weights="kernel", laplacian="normalized", c=None,
                 cv=None, kernel="rbf", views=None, bandwidth=None):
        self.gammas_A = gammas_A
        self.gammas_B = gammas_B
        self.gammas_W = gammas_W
        self.graphs = graphs
        self.graph_weights = graph_weights
        self.laplacian = laplacian
        self.c = c
        self.cv = cv
        self.kernel = kernel
        self.views = views
        self.bandwidth = bandwidth

    def _gammas_B(self, incomplete):
        """The gamma_B values of the grid: ``gammas_B``, with "auto" resolved for complete or incomplete views."""
        if isinstance(self.gammas_B, str):  # "auto"
            return INCOMPLETE_GAMMAS_B if incomplete else (0.0,)
        return self.gammas_B

    def _estimator(self, **params):
        """An MVLLeastSquares with this estimator's input, combination and graph settings."""
        nn = params.get("n_neighbors")
        return MVLLeastSquares(c=self.c, laplacian=self.laplacian, kernel=self.kernel, views=self.views,
                               bandwidth=self.bandwidth, graph_weights="kernel" if nn is None else self.graph_weights,
                               loss="squared", **params)

    def _share_gammas(self, X, y, graphs, gB, gW):
        """gammas_A="share": the gamma_A of each kernel share of :data:`SHARE_GRID` (parameter ``gammas_A``)."""
        from ..solvers.vecchia_direct import limit_energies, problem

        knn = [g for g in graphs if g[0] is not None]
        if not knn or max(gW) <= 0 or self.kernel == "precomputed":
            raise ValueError('gammas_A="share" needs feature views, a kNN graph in graphs and a gamma_W > 0')
        nn, power = knn[0]
        kernels, system = problem(self._estimator(gamma_A=1.0, gamma_B=gB[0], gamma_W=max(gW), n_neighbors=nn,
                                                  laplacian_power=power, random_state=0), X, y)
        graph, kern = limit_energies(system, kernels)
        return [t / (1.0 - t) * graph / (system.l * kern) for t in SHARE_GRID]

    def _folds(self, y):
        """Labelled-sample splitter (SemiSupervisedCV) and its folds."""
        cv = self.cv
        if cv is None or isinstance(cv, Integral):
            classes, y_enc, labelled = encode_labels(y, len(y))
            counts = np.bincount(y_enc[labelled], minlength=len(classes))
            k = int(counts.argmin())
            if counts.max() < 2:  # one label per class: no stratified split has a test fold and a training fold
                raise ValueError(
                    f"MVLLeastSquaresCV: class {classes.tolist()[k]!r} has {counts[k]} labelled sample, as every "
                    "class; cross-validation needs at least 2 labelled samples per class (and at least cv per "
                    "class for cv folds). With fewer labels fit MVLLeastSquares with its defaults "
                    '(gamma_A="auto", loss="auto"), which need no validation')
            if cv is not None and counts.max() < cv:
                raise ValueError(f"MVLLeastSquaresCV: cv={cv} folds need at least {cv} labelled samples in some "
                                 f"class; the largest class has {counts.max()}: lower cv or leave it at None")
        if cv is None:
            # StratifiedKFold(k) warns when a class has fewer than k labelled samples (a training fold may then
            # lack it), as in scikit-learn's CV estimators
            cv = min(5, max(2, int(counts.min())))
        splitter = SemiSupervisedCV(cv=cv if isinstance(cv, Integral) else check_cv(cv))
        return list(splitter.split(np.zeros((len(y), 1)), y))

    def _fold_kernels(self, X, K, tr, te):
        """Sample-first training (|tr|, |tr|, m) and evaluation (|te|, |tr|, m) kernels of one fold: slices of the
        validated precomputed kernels K (m, n, n), or computed as MVLLeastSquares computes them from the fold's
        training samples."""
        if self.kernel == "precomputed":
            return np.moveaxis(K[:, tr][:, :, tr], 0, -1), np.moveaxis(K[:, te][:, :, tr], 0, -1)
        helper = self._estimator()
        Kf = helper._fit_kernels(take_samples(X, tr))
        Kt = helper._test_kernels(take_samples(X, te))
        return np.moveaxis(Kf, 0, -1), np.moveaxis(Kt, 0, -1)

    def _grid_incomplete(self, X, K, mask, y, tr, te, gA, gB, gW, graphs):
        """The grid's combined outputs on one fold of incomplete views (:mod:`mvl.solvers.incomplete`), shape (graphs,
        gammas_A, gammas_B, gammas_W, |te|, P), and the fold's classes: each view's graph once per graph and fold
        (:func:`mvl.missing_views.view_operators`, on the view's training samples), then one view-by-view solve
        (solver "structured": :func:`mvl.solvers.incomplete.solve_structured_incomplete`, O(sum_p n_p^3)) per
        grid point: the fit of
        MVLLeastSquares(solver="structured") at that point, without the shared eigendecompositions of the
        complete path. The fold's kernels are computed as MVLLeastSquares computes them (precomputed: sliced)."""
        from .base import encode_targets
        from ..missing_views import combination_weights, view_operators
        from ..solvers import MVLProblem, get_solver
        from ..validation import check_combination

        if self.kernel == "precomputed":  # K: validated, zero at the missing views' rows and columns
            Kf, Kt = K[:, tr][:, :, tr], K[:, te][:, :, tr]
            fmask, tmask = mask[tr], mask[te] & mask[tr].any(axis=0)[None, :]
        else:
            fold = self._estimator()
            Kf = fold._fit_kernels(take_samples(X, tr))
            Kt, tmask = fold._test_kernels(take_samples(X, te), presence=True)
            fmask = fold.view_mask_
            fmask = np.ones(Kf.shape[:2][::-1], dtype=bool) if fmask is None else fmask
            tmask = np.ones((Kt.shape[1], Kf.shape[0]), dtype=bool) if tmask is None else tmask
        m, n = Kf.shape[0], Kf.shape[1]
        classes, y_enc, labelled = encode_labels(y[tr], n)
        Y_L = encode_targets(y_enc[labelled], len(classes))
        c = check_combination(self._kept_views(self.c, combination=True), m)
        Ct = combination_weights(c, tmask)
        out = np.empty((len(graphs), len(gA), len(gB), len(gW), Kt.shape[1], len(classes)))
        solver = get_solver("structured")  # the incomplete-view structured solve at the given mask
        for g, (nn, power) in enumerate(graphs):
            L = None
            if any(w > 0 for w in gW):
                L = view_operators(Kf, fmask, self.laplacian, nn, gamma_W=1.0, laplacian_power=power,
                                   graph_weights="kernel" if nn is None else self.graph_weights)
            for a, ga in enumerate(gA):
                for b, gb in enumerate(gB):
                    for k, gw in enumerate(gW):
                        A = solver.solve(MVLProblem(Kf, labelled, Y_L, c, ga, gb, gw, laplacians=L if gw > 0 else None,
                                                    mask=fmask)).coef
                        out[g, a, b, k] = np.einsum("ptn,pnk,tp->tk", Kt, A, Ct, optimize=True)
        return out, classes

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Cross-validate the grid on X (see ``kernel``) and y (-1 = unlabelled), then refit the best point on all
        the data."""
        if y is None:
            raise ValueError("MVLLeastSquaresCV requires y to be passed, but the target y is None")
        # the input checks and messages of MVLLeastSquares on all of X (and the kernels, for "precomputed")
        helper = self._estimator()
        K = helper._fit_kernels(X)
        incomplete = helper.view_mask_ is not None
        y = column_or_1d(y, warn=True)
        encode_labels(y, K.shape[1])  # the label checks and messages of every estimator, before any work
        graphs = [(None if n_neighbors is None else int(n_neighbors), int(laplacian_power))
                  for n_neighbors, laplacian_power in self.graphs]
        gB, gW = (np.atleast_1d(np.asarray(g, dtype=np.float64)).tolist()
                  for g in (self._gammas_B(incomplete), self.gammas_W))
        gA = self._share_gammas(X, y, graphs, gB, gW) if isinstance(self.gammas_A, str) else \
            np.atleast_1d(np.asarray(self.gammas_A, dtype=np.float64)).tolist()
        _warn_few_labelled_class(self, y)
        folds = self._folds(y)
        shape = (len(graphs), len(gA), len(gB), len(gW))
        scores = np.empty(shape + (len(folds),))
        for f, (tr, te) in enumerate(folds):
            if incomplete:
                out, classes = self._grid_incomplete(X, K, helper.view_mask_, y, tr, te, gA, gB, gW, graphs)
                pred = classes[np.argmax(out, axis=-1)]
                scores[..., f] = np.mean(pred == y[te], axis=-1)
                continue
            Kf, Kt = self._fold_kernels(X, K, tr, te)
            c_kept = self._kept_views(self.c, combination=True)
            out, classes = grid_decision_functions(Kf, y[tr], Kt, gA, gB, gW, c=c_kept, laplacian=self.laplacian,
                                                   graph_weights=self.graph_weights, graphs=graphs)
            pred = classes[np.argmax(out, axis=-1)]
            scores[..., f] = np.mean(pred == y[te], axis=-1)
        params = [dict(gamma_A=a, gamma_B=b, gamma_W=w, n_neighbors=n_neighbors, laplacian_power=laplacian_power)
                  for (n_neighbors, laplacian_power) in graphs for a in gA for b in gB for w in gW]
        flat = scores.reshape(-1, len(folds))
        mean = flat.mean(axis=1)
        order = np.argsort(-mean, kind="stable")
        rank = np.empty(mean.size, dtype=np.int32)
        rank[order] = 1 + np.searchsorted(-mean[order], -mean[order], side="left")  # ties share the best rank
        results = {"params": params}
        for name in ("gamma_A", "gamma_B", "gamma_W", "n_neighbors", "laplacian_power"):
            results[f"param_{name}"] = np.ma.MaskedArray([p[name] for p in params], dtype=object)
        for f in range(len(folds)):
            results[f"split{f}_test_score"] = flat[:, f]
        results.update(mean_test_score=mean, std_test_score=flat.std(axis=1), rank_test_score=rank)
        best = int(np.argmax(mean))  # the first of the best, as GridSearchCV's rank_test_score.argmin()
        self.cv_results_ = results
        self.best_index_ = best
        self.best_params_ = dict(params[best])
        self.best_score_ = float(mean[best])
        self.n_splits_ = len(folds)
        self.best_estimator_ = est = self._estimator(**self.best_params_).fit(X, y)
        for attr in ("classes_", "coef_", "c_", "n_views_", "n_train_", "n_features_in_", "feature_names_in_",
                     "bandwidths_", "n_labelled_"):
            if hasattr(est, attr):
                setattr(self, attr, getattr(est, attr))
        return self

    def decision_function(self, X):
        """:meth:`mvl.MVLLeastSquares.decision_function` of ``best_estimator_``."""
        check_is_fitted(self)
        return self.best_estimator_.decision_function(X)

    def predict(self, X):
        """:meth:`mvl.MVLLeastSquares.predict` of ``best_estimator_``."""
        check_is_fitted(self)
        return self.best_estimator_.predict(X)

    def view_decision_function(self, X):
        """Per-view outputs f^i(v) (t, m, P) of ``best_estimator_``."""
        check_is_fitted(self)
        return self.best_estimator_.view_decision_function(X)


def _warn_few_labelled_class(est, y):
    """:class:`mvl.exceptions.FewLabelsWarning` when a labelled class of ``y`` has few labels among many
    (:func:`mvl.estimators.poisson_fit.few_labelled_class`) and some points are unlabelled: the cross-validation
    selects and refits the squared loss, whose folds can hardly hold such a class, where MVL-LS's default takes the
    class-balanced few-label term."""
    import warnings

    from ..exceptions import FewLabelsWarning
    from .poisson_fit import AUTO_UNEQUAL_LOSS, few_labels_message

    if not unlabelled_mask(y).any():
        return
    message = few_labels_message(est, y, f"{type(est).__name__} cross-validates the squared loss",
                                 f'Fit MVLLeastSquares() with its defaults, which need no validation: loss="auto" '
                                 f'takes the class-balanced few-label term here (loss="{AUTO_UNEQUAL_LOSS}").')
    if message is not None:
        warnings.warn(message, FewLabelsWarning, stacklevel=4)  # this function, fit, the fit wrapper, the caller
