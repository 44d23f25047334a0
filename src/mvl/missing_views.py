"""Incomplete multi-view data: which views each sample has (presence masks from NaN rows), the combination c
renormalised over each sample's present views, the kernels and graphs restricted to the present samples
(the model in :mod:`mvl.solvers.incomplete`)."""

from __future__ import annotations

import numpy as np

__all__ = ["combination_weights", "combination_scales", "feature_presence", "precomputed_presence",
           "precomputed_test_presence", "view_operators", "MaskedViewKernels", "sparse_view_laplacians"]


PARTIAL_NAN = ("partial NaN is not a missing view: a missing view is a row of NaN across ALL that view's columns "
               "(impute the missing features, e.g. with sklearn.impute.SimpleImputer, or mark the whole view "
               "missing)")


def _first(idx, k=5):
    idx = np.asarray(idx).tolist()
    return f"{idx[:k]}{' ...' if len(idx) > k else ''}"


def feature_presence(views, name="X"):
    """The (n, m) presence mask of per-view feature arrays (True: sample i has view p), or None if no value is NaN.

    A missing view is a row of NaN across all that view's columns; a NaN inside an otherwise present view and a
    sample with no view at all are errors (``ValueError``)."""
    n, m = views[0].shape[0], len(views)
    mask = np.ones((n, m), dtype=bool)
    found = False
    for p, V in enumerate(views):
        nan = np.isnan(V)
        if not nan.any():
            continue
        found = True
        rows = nan.all(axis=1)
        partial = np.flatnonzero(nan.any(axis=1) & ~rows)
        if partial.size:
            raise ValueError(f"Input {name} contains NaN: view {p} of sample(s) {_first(partial)} has NaN in some but "
                             f"not all of its {V.shape[1]} features; {PARTIAL_NAN}")
        mask[:, p] = ~rows
    if not found:
        return None
    _check_some_view(mask, name)
    return mask


def _check_some_view(mask, name):
    empty = np.flatnonzero(~mask.any(axis=1))
    if empty.size:
        raise ValueError(f"{name}: sample(s) {_first(empty)} have no view at all (every view is missing, NaN); a "
                         "sample needs at least one view: drop it")


def precomputed_presence(X, name="X"):
    """Presence mask (n, m) of a training stack of Gram matrices (n, n, m) with NaN rows and columns for the missing
    views, or None if there is no NaN. Rows and columns must agree (the Gram matrix is symmetric) and the present
    block of each view must be NaN-free."""
    nan = np.isnan(X)
    if not nan.any():
        return None
    n, _, m = X.shape
    mask = np.ones((n, m), dtype=bool)
    for p in range(m):
        N = nan[:, :, p]
        if not N.any():
            continue
        rows, cols = N.all(axis=1), N.all(axis=0)
        if np.any(rows != cols):
            bad = np.flatnonzero(rows != cols)
            raise ValueError(f"{name} contains NaN or inf (in view(s) [{p}]): a missing view is a NaN row AND column "
                             f"of that view's Gram matrix; sample(s) {_first(bad)} have one without the other")
        present = ~rows
        if N[np.ix_(present, present)].any():
            bad = np.flatnonzero(N[np.ix_(present, present)].any(axis=1))
            raise ValueError(f"{name} contains NaN or inf (in view(s) [{p}]): NaN entries between samples that have "
                             f"the view (sample(s) {_first(np.flatnonzero(present)[bad])}); {PARTIAL_NAN}")
        mask[:, p] = present
    _check_some_view(mask, name)
    return mask


def precomputed_test_presence(X, train_mask, name="X"):
    """Presence mask (t, m) of test kernels (t, n, m): a NaN row (over the training samples that have the view) is a
    missing view of that test sample; the columns of training samples without the view are ignored (NaN or not).
    Returns (mask or None, X with every ignored or missing entry set to 0)."""
    t, n, m = X.shape
    nan = np.isnan(X)
    cols_all = np.ones((n, m), dtype=bool) if train_mask is None else train_mask
    if not nan.any() and train_mask is None:
        return None, X
    mask = np.ones((t, m), dtype=bool)
    for p in range(m):
        cols = cols_all[:, p]
        if not cols.any():
            mask[:, p] = False
            continue
        N = nan[:, cols, p]
        rows = N.all(axis=1)
        partial = np.flatnonzero(N.any(axis=1) & ~rows)
        if partial.size:
            raise ValueError(f"Input {name} contains NaN: view {p} of test sample(s) {_first(partial)} has NaN for "
                             f"some but not all training samples that have the view; {PARTIAL_NAN}")
        mask[:, p] = ~rows
    _check_some_view(mask, name)
    Xf = np.where(mask[:, None, :] & cols_all[None, :, :], X, 0.0)
    return mask, Xf


def combination_weights(c, mask):
    """c~ (n, m): the combination vector renormalised over each sample's present views (module docstring).

    c~_ip = c_p (sum_q c_q) / (sum_{q in V_i} c_q) where that ratio is positive and finite (for c = 1/m: ``1/|V_i|``,
    the mean of the present views), otherwise c_p ||c|| / ||c_{V_i}||; 0 for absent views (and for a sample whose
    present c_q are all 0). A complete row gets c itself."""
    c = np.asarray(c, dtype=np.float64)
    mask = np.asarray(mask, dtype=bool)
    cm = np.where(mask, c[None, :], 0.0)
    out = cm * combination_scales(c, mask)[:, None]
    out[mask.all(axis=1)] = c  # exactly c where nothing is missing
    return out


def combination_scales(c, mask):
    """s_i (n,) of :func:`combination_weights`: c~_ip = s_i c_p for p in V_i. s_i = (sum_q c_q) / (sum_{q in V_i}
    c_q) where that ratio is positive and finite, else ||c|| / ||c_{V_i}||, 0 if every present c_q is 0; exactly 1
    for a complete row. s_i depends on c only through its direction (c~ is positively homogeneous of degree 1)."""
    c = np.asarray(c, dtype=np.float64)
    mask = np.asarray(mask, dtype=bool)
    cm = np.where(mask, c[None, :], 0.0)
    tot = float(c.sum())
    sub = cm.sum(axis=1)
    scale = np.zeros(mask.shape[0])
    ok = (tot != 0.0) & (sub * tot > 0) & (np.abs(sub) > 1e-12 * np.abs(c).sum())
    scale[ok] = tot / sub[ok]
    norms = np.sqrt((cm * cm).sum(axis=1))
    fb = ~ok & (norms > 0)
    scale[fb] = np.linalg.norm(c) / norms[fb]
    scale[mask.all(axis=1)] = 1.0
    return scale


def view_operators(K, mask, laplacian, n_neighbors, *, gamma_W, laplacian_power, graph_weights):
    """Per-view within-view operators on each view's samples: a list of m arrays (n_p, n_p) (None for an empty
    view), or None when gamma_W = 0. The graph of view p is built from K^p restricted to S_p
    (:func:`mvl.graph.within_view_operators`, the same options); an explicit laplacian array (m, n, n) is restricted
    to S_p x S_p (a principal submatrix: still symmetric positive semi-definite). Every argument is validated."""
    from .graph import within_view_operators

    m = K.shape[0]
    explicit = not isinstance(laplacian, str) and laplacian is not None
    out = []
    for p in range(m):
        idx = np.flatnonzero(mask[:, p])
        Kp = K[p][np.ix_(idx, idx)][None]
        lap = laplacian[p][np.ix_(idx, idx)][None] if explicit else laplacian
        if idx.size == 0:  # a view no sample has: no function, no operator
            out.append(None)
            continue
        L = within_view_operators(Kp, lap, n_neighbors, gamma_W=gamma_W, laplacian_power=laplacian_power,
                                  graph_weights=graph_weights)
        out.append(None if L is None else np.ascontiguousarray(L[0]))
    return None if gamma_W == 0 else out


class MaskedViewKernels:
    """The kernel operator of :class:`mvl.kernel_blocks.ViewKernels` restricted to the present (sample, view) pairs:
    K^p Z_p with the rows and columns outside S_p zeroed (Pi_p K^p Pi_p, module docstring), without an n x n array.

    ``kernels``: a ViewKernels on the views with the missing rows filled with any finite value (the estimator
    uses 0); ``mask`` (n, m). Products, columns and rows are the underlying ones masked after the product (the
    input is masked before), so only the blocks S_p x S_p count."""

    def __init__(self, kernels, mask):
        self.base = kernels
        self.mask = np.asarray(mask, dtype=bool)
        self.m, self.n = kernels.m, kernels.n
        self.kind, self.scales, self.views = kernels.kind, kernels.scales, kernels.views
        self._w = self.mask.T.astype(np.float64)  # (m, n)

    @property
    def gram(self):
        return self.base.gram

    @gram.setter
    def gram(self, value):
        self.base.gram = value

    def matmul(self, Z):
        """Pi_p K^p Pi_p Z_p for every view: (m, n, k) -> (m, n, k)."""
        out = self.base.matmul(np.asarray(Z, dtype=np.float64) * self._w[:, :, None])
        out *= self._w[:, :, None]
        return out

    def columns(self, p, cols):
        """Columns ``cols`` of Pi_p K^p Pi_p, (n, len(cols))."""
        return self.base.columns(p, cols) * (self._w[p][:, None] * self._w[p][cols][None, :])

    def rows(self, p, idx):
        """Rows ``idx`` of Pi_p K^p Pi_p, (len(idx), n)."""
        return self.base.rows(p, idx) * (self._w[p][idx][:, None] * self._w[p][None, :])

    def diag(self, i):
        return self.base.diag(i) * self._w[i]


def sparse_view_laplacians(kernels, mask, n_neighbors, graph_weights="kernel", normalized=True):
    """Per view the sparse kNN Laplacian of the view's samples S_p (:func:`mvl.graph.sparse_knn_weights` on the
    rows S_p only, the graph of :func:`view_operators`), embedded in n x n (zero rows and columns outside S_p),
    CSR. ``kernels``: a :class:`mvl.kernel_blocks.ViewKernels` on all n samples (missing rows filled with finite
    values: never read) or its :class:`MaskedViewKernels`."""
    from scipy import sparse

    from .graph import sparse_knn_weights, sparse_laplacian
    from .kernel_blocks import ViewKernels

    base = getattr(kernels, "base", kernels)
    n, m = base.n, base.m
    out = []
    for p in range(m):
        idx = np.flatnonzero(mask[:, p])
        if idx.size == 0:
            out.append(sparse.csr_matrix((n, n)))
            continue
        if base.views is None:
            sub = ViewKernels(gram=base.gram[p][np.ix_(idx, idx)][None])
        else:
            sub = ViewKernels([base.views[p][idx]], base.kind, [base.scales[p]], max_memory=0, block=base.block,
                              threads=base.threads)
        Lp = sparse_laplacian(sparse_knn_weights(sub, 0, n_neighbors, graph_weights), normalized=normalized).tocoo()
        out.append(sparse.csr_matrix((Lp.data, (idx[Lp.row], idx[Lp.col])), shape=(n, n)))
    return out
