"""Class sizes in the decision: the volume-constrained threshold and PoissonMBO on sparse graphs.

**The volume-constrained threshold.** Given scores a_ik (point i, class k) and class sizes s_k with sum_k s_k = n,
choose labels maximising the total score with exactly s_k points in class k:

    max_x  sum_ik a_ik x_ik   s.t.  sum_k x_ik = 1 (every i),  sum_i x_ik = s_k (every k),  x_ik >= 0,      (1)

a transportation problem whose constraint matrix is totally unimodular, so the LP (1) has an integral optimum. Its
dual is  min_p  sum_i max_k (a_ik - p_k) + sum_k s_k p_k  (2): class prices p_k, and a point takes the class of
largest net value a_ik - p_k. :func:`volume_threshold` solves (1) by the auction algorithm for the transportation
problem with similar objects (Bertsekas & Castanon, "The auction algorithm for the transportation problem", Annals
of Operations Research 20, 1989; Bertsekas, "Linear Network Optimization", 1991, Section 4.2; used for MBO by Jacobs,
Merkurjev & Esedoglu, "Auction dynamics: a volume constrained MBO scheme", J. Comput. Phys. 354, 2018): class k has
s_k slots; each unassigned point bids, for its best class j (net value v_1, second best v_2), the price
p_j + v_1 - v_2 + eps; a full class keeps its s_k highest bids and its price is the lowest bid it keeps. All
unassigned points bid at once (Jacobi auction). At the end every assignment satisfies eps-complementary slackness,
a_i,l(i) - b_i >= max_k (a_ik - p_k) - eps, which bounds the duality gap (2) - (1) by n eps. Epsilon scaling (eps
divided by 5 per phase, prices kept, assignment restarted) reaches eps_final = tol * range(a) / n, so the total score
is within tol * range(a) of the optimum, and exactly optimal whenever distinct assignments differ in total score by
more than that (for example scores on a grid coarser than tol * range(a)). :func:`duality_gap` evaluates (2) - (1).

**The multiplicative threshold.** graphlearning's ``volume_label_projection`` (Calder, Cook, Thorpe & Slepcev, ICML
2020, Section 3.1): scores mapped to [0, 1] by one affine map, label argmax_k w_k a_ik, and the weights adjusted by
w_k <- w_k - 0.1 (fraction predicted as k - prior_k), normalised to w_0 = 1, until every fraction is within 1e-3 of
its prior (at most 10^4 steps): class sizes approximately, not the optimum of (1). :func:`multiplicative_threshold`.

**PoissonMBO** (Calder et al. 2020, Algorithm 2; graphlearning's ``poisson_mbo``). On a graph with weights W,
L = D - W, labelled points j with one-hot labels e_j and source b = sum_j (e_j - ebar) delta_j:
start from the labels of the Poisson solution u, L u = b with sum_i d_i u_i = 0 (:func:`poisson_scores`,
conjugate gradients on D^{-1/2} L D^{-1/2}, as graphlearning); then T times: u <- one-hot labels; Ns steps of
u <- u - dt (L u - mu b), dt = 1 / max_i d_i (explicit heat flow with the source as fidelity); labels <- the
volume-constrained threshold of u with class sizes n * prior (:func:`class_sizes`). Class priors default to the
labelled proportions. ``threshold="auction"`` (the default) uses the exact threshold (1), ``"multiplicative"``
graphlearning's, with its weights carried over the iterations as graphlearning does.

**Several views.** :func:`combined_laplacian` sums per-view Laplacians with weights, sum_v w_v (D_v - W_v) =
D - W of the weighted sum of the graphs, so PoissonMBO and the Poisson solution run on it unchanged.

Everything is sparse: the graph is a scipy sparse matrix, the working arrays are n x k.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import connected_components

__all__ = ["volume_threshold", "duality_gap", "multiplicative_threshold", "class_sizes", "combined_laplacian",
           "poisson_scores", "poisson_mbo"]


# ------------------------------------------------------------------ class sizes


def check_priors(priors, k=None):
    """``priors`` as a float64 vector: finite, non-negative, summing to 1 (within 1e-8), of length k if given."""
    p = np.asarray(priors, dtype=np.float64)
    if p.ndim != 1 or p.size == 0:
        raise ValueError(f"class_priors must be a non-empty vector; got shape {p.shape}")
    if k is not None and p.size != k:
        raise ValueError(f"class_priors has {p.size} entries for {k} classes")
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValueError("class_priors must be finite and non-negative")
    if abs(p.sum() - 1.0) > 1e-8:
        raise ValueError(f"class_priors must sum to 1; they sum to {p.sum():.10g}")
    return p


def class_sizes(n, priors):
    """Integer class sizes summing to n closest to n * priors (largest remainder: floor(n p_k), then one more for
    the classes of largest fractional part, ties to the lower class index)."""
    if int(n) != n or n < 0:
        raise ValueError(f"n must be a non-negative integer; got {n!r}")
    n = int(n)
    p = check_priors(priors)
    exact = n * p
    sizes = np.floor(exact).astype(np.int64)
    short = n - int(sizes.sum())
    order = np.argsort(-(exact - sizes), kind="stable")
    sizes[order[:short]] += 1
    return sizes


# ------------------------------------------------------------------ thresholds


def _check_scores(scores, sizes):
    a = np.asarray(scores, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError(f"scores must be an (n, k) array; got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError("scores must be finite")
    s = np.asarray(sizes)
    if s.shape != (a.shape[1],):
        raise ValueError(f"class_sizes must have one entry per class ({a.shape[1]}); got shape {s.shape}")
    if np.any(s != np.round(s)) or np.any(s < 0):
        raise ValueError("class_sizes must be non-negative integers")
    s = s.astype(np.int64)
    if s.sum() != a.shape[0]:
        raise ValueError(f"class_sizes sum to {s.sum()}, not to the number of points {a.shape[0]}")
    return a, s


def _auction_phase(a, sizes, price, eps, max_rounds):
    """One Jacobi auction at fixed eps from an empty assignment and the given prices (updated in place).
    Returns (labels, bids)."""
    n, k = a.shape
    labels = np.full(n, -1, dtype=np.int64)
    bids = np.full(n, -np.inf)
    held = np.zeros(k, dtype=np.int64)
    unassigned = np.arange(n)
    rows = np.arange(n)
    for _ in range(max_rounds):
        if unassigned.size == 0:
            return labels, bids
        net = a[unassigned] - price
        top2 = np.argpartition(-net, 1, axis=1)[:, :2]
        r = rows[:unassigned.size]
        v1, v2 = net[r, top2[:, 0]], net[r, top2[:, 1]]
        swap = v2 > v1
        j = np.where(swap, top2[:, 1], top2[:, 0])
        gap = np.abs(v1 - v2)
        bid = price[j] + gap + eps                                # the bid of the auction, see the docstring
        losers = []
        for c in np.unique(j):
            new = unassigned[j == c]
            new_bid = bid[j == c]
            if held[c] + new.size <= sizes[c]:                    # free slots: everyone is accepted
                labels[new], bids[new] = c, new_bid
                held[c] += new.size
                if held[c] == sizes[c]:
                    price[c] = bids[labels == c].min()
                continue
            members = np.flatnonzero(labels == c)
            pool = np.concatenate([members, new])
            pool_bid = np.concatenate([bids[members], new_bid])
            keep = np.argpartition(-pool_bid, sizes[c] - 1)[:sizes[c]] if sizes[c] > 0 else np.array([], int)
            mask = np.zeros(pool.size, bool)
            mask[keep] = True
            out = pool[~mask]
            labels[out], bids[out] = -1, -np.inf
            labels[pool[mask]] = c
            bids[new] = np.where(mask[members.size:], new_bid, -np.inf)
            held[c] = sizes[c]
            price[c] = pool_bid[mask].min() if sizes[c] > 0 else np.inf
            losers.append(out)
        unassigned = np.sort(np.concatenate(losers)) if losers else np.array([], dtype=np.int64)
    raise RuntimeError(f"the auction did not finish in {max_rounds} rounds at eps = {eps:g}")


def volume_threshold(scores, class_sizes, tol=1e-9, max_rounds=100000):
    """Labels maximising sum_i scores[i, label_i] with exactly ``class_sizes[k]`` points in class k (the
    transportation problem (1) of the module docstring), by the auction algorithm with epsilon scaling.

    Returns (labels, prices): labels in 0..k-1, and the class prices p of the dual (2) (a point's label maximises
    scores[i, k] - p_k up to tol * range(scores) / n). The total score is within tol * range(scores) of the optimum.
    A class of size 0 gets price +inf.
    """
    a, s = _check_scores(scores, class_sizes)
    n, k = a.shape
    if not tol > 0:
        raise ValueError(f"tol must be positive; got {tol!r}")
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(k)
    if k == 1:
        return np.zeros(n, dtype=np.int64), np.zeros(1)
    price = np.where(s > 0, 0.0, np.inf)
    a = a - a.min()
    spread = max(float(a.max()), np.finfo(float).tiny)
    if np.sum(s > 0) == 1:                                        # one class can take points: no choice
        return np.full(n, int(np.argmax(s > 0)), dtype=np.int64), price
    eps_final = tol * spread / n
    eps = max(spread / 5.0, eps_final)
    while True:
        labels, _ = _auction_phase(a, s, price, eps, max_rounds)
        if eps <= eps_final:
            return labels, price
        eps = max(eps / 5.0, eps_final)


def duality_gap(scores, class_sizes, labels, prices):
    """(2) - (1): the dual objective at ``prices`` minus the total score of ``labels`` (non-negative for any
    labels with the given sizes; zero when both are optimal). Classes of size 0 (price inf) are left out."""
    a, s = _check_scores(scores, class_sizes)
    p = np.asarray(prices, dtype=np.float64)
    live = s > 0
    dual = np.max(a[:, live] - p[live], axis=1).sum() + float(s[live] @ p[live])
    return dual - a[np.arange(a.shape[0]), labels].sum()


def multiplicative_threshold(scores, class_priors, weights=None, dt=0.1, tol=1e-3, max_iter=10000):
    """graphlearning's volume label projection (module docstring): returns (labels, weights); ``weights`` a
    starting point (ones by default)."""
    a = np.asarray(scores, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError(f"scores must be an (n, k) array; got shape {a.shape}")
    n, k = a.shape
    p = check_priors(class_priors, k)
    w = np.ones(k) if weights is None else np.array(weights, dtype=np.float64)
    a = a - a.min()
    top = a.max()
    a = a / top if top > 0 else a
    err, i = 1.0, 0
    while i < max_iter and err > tol:
        i += 1
        frac = np.bincount(np.argmax(a * w, axis=1), minlength=k) / n
        grad = frac - p
        err = np.max(np.abs(grad))
        w = w - dt * grad                                         # over-filled classes lose weight
        w = w / w[0]
    return np.argmax(a * w, axis=1), w


# ------------------------------------------------------------------ graphs


def _as_graph(W, name="W"):
    if not sparse.issparse(W):
        raise TypeError(f"{name} must be a scipy sparse matrix (dense n x n graphs are not accepted)")
    W = sparse.csr_matrix(W, dtype=np.float64)
    if W.shape[0] != W.shape[1]:
        raise ValueError(f"{name} must be square; got shape {W.shape}")
    if W.nnz and (W.data.min() < 0 or not np.all(np.isfinite(W.data))):
        raise ValueError(f"{name} must have finite non-negative weights")
    if abs(W - W.T).max() > 1e-10 * max(abs(W).max(), 1.0) if W.nnz else False:
        raise ValueError(f"{name} must be symmetric")
    W = W - sparse.diags(W.diagonal())                            # self-loops do not enter L = D - W
    W.eliminate_zeros()
    return W


def combined_weights(graphs, weights=None):
    """sum_v w_v W_v of symmetric sparse graphs (weights equal, 1 / m, by default; non-negative)."""
    if sparse.issparse(graphs):
        graphs = [graphs]
    graphs = [_as_graph(G, f"graphs[{v}]") for v, G in enumerate(graphs)]
    if not graphs:
        raise ValueError("graphs must hold at least one graph")
    if len({G.shape for G in graphs}) != 1:
        raise ValueError(f"the graphs have different shapes: {[G.shape for G in graphs]}")
    m = len(graphs)
    w = np.full(m, 1.0 / m) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (m,) or np.any(w < 0) or not np.all(np.isfinite(w)) or w.sum() <= 0:
        raise ValueError(f"weights must be {m} finite non-negative numbers, not all zero; got {weights!r}")
    out = graphs[0] * w[0]
    for wv, G in zip(w[1:], graphs[1:], strict=True):
        out = out + G * wv
    return out.tocsr()


def combined_laplacian(graphs, weights=None):
    """sum_v w_v (D_v - W_v): the unnormalised Laplacian of the weighted sum of the graphs (sparse CSR)."""
    W = combined_weights(graphs, weights)
    return (sparse.diags(np.asarray(W.sum(axis=1)).ravel()) - W).tocsr()


def _labelled_codes(n, labelled, labels, classes, class_priors):
    idx = np.asarray(labelled)
    if idx.ndim != 1 or idx.size == 0 or not np.issubdtype(idx.dtype, np.integer):
        raise ValueError("labelled must be a non-empty vector of point indices")
    if idx.min() < 0 or idx.max() >= n or np.unique(idx).size != idx.size:
        raise ValueError(f"labelled must hold distinct indices in 0..{n - 1}")
    y = np.asarray(labels)
    if y.shape != idx.shape:
        raise ValueError(f"labels has shape {y.shape}, labelled {idx.shape}")
    classes = np.unique(y) if classes is None else np.asarray(classes)
    if np.unique(classes).size != classes.size:
        raise ValueError("classes must be distinct")
    pos = {c: i for i, c in enumerate(classes.tolist())}
    try:
        codes = np.array([pos[c] for c in y.tolist()], dtype=np.int64)
    except KeyError as e:
        raise ValueError(f"label {e.args[0]!r} is not one of classes {classes.tolist()}") from None
    counts = np.bincount(codes, minlength=classes.size)
    if np.any(counts == 0):
        raise ValueError(f"class {classes[np.flatnonzero(counts == 0)[0]]!r} has no labelled point")
    if classes.size < 2:
        raise ValueError("at least two classes are needed")
    priors = counts / counts.sum() if class_priors is None else check_priors(class_priors, classes.size)
    return idx, codes, classes, priors


def _source(n, idx, codes, k):
    onehot = np.eye(k)[codes]
    b = np.zeros((n, k))
    b[idx] = onehot - onehot.mean(axis=0)                         # centred sources (Calder et al., eq 6)
    return b


def _cg(A, b, tol, max_iter):
    """Block conjugate gradients for A x = b, A symmetric positive semi-definite, b in its range, from x = 0;
    stops when every column's residual is below tol times its right-hand side."""
    x = np.zeros_like(b)
    r = b.copy()
    p = r.copy()
    rs = np.sum(r * r, axis=0)
    target = tol ** 2 * np.maximum(rs, np.finfo(float).tiny)
    for _ in range(max_iter):
        if np.all(rs <= target):
            return x
        Ap = A @ p
        alpha = rs / np.maximum(np.sum(p * Ap, axis=0), np.finfo(float).tiny)
        x += alpha * p
        r -= alpha * Ap
        rs_new = np.sum(r * r, axis=0)
        p = r + (rs_new / np.maximum(rs, np.finfo(float).tiny)) * p
        rs = rs_new
    warnings.warn(f"conjugate gradients stopped at {max_iter} iterations above tol = {tol:g}", RuntimeWarning,
                  stacklevel=3)
    return x


def _check_connected(W):
    ncomp, _ = connected_components(W, directed=False)
    if ncomp > 1:
        warnings.warn(f"the graph has {ncomp} connected components; the Poisson solution is only determined up to "
                      "a constant per component", RuntimeWarning, stacklevel=3)


def poisson_scores(graphs, labelled, labels, weights=None, classes=None, tol=1e-10, max_iter=100000):
    """Poisson learning's scores u (n x k): L u = b (centred sources at the labelled points) with
    sum_i d_i u_i = 0, L = D - W of the weighted sum of ``graphs`` (:func:`combined_weights`).
    Returns (u, classes); argmax over the columns gives Poisson learning's labels."""
    W = combined_weights(graphs, weights)
    n = W.shape[0]
    idx, codes, classes, _ = _labelled_codes(n, labelled, labels, classes, None)
    _check_connected(W)
    d = np.asarray(W.sum(axis=1)).ravel()
    if np.any(d <= 0):
        raise ValueError("every point needs at least one edge (a point of degree 0)")
    dm = sparse.diags(1.0 / np.sqrt(d))
    L_sym = (sparse.identity(n) - dm @ W @ dm).tocsr()
    b = _source(n, idx, codes, classes.size)
    v = _cg(L_sym, b / np.sqrt(d)[:, None], tol, max_iter)        # D^-1/2 L D^-1/2 (D^1/2 u) = D^-1/2 b
    return v / np.sqrt(d)[:, None], classes


def poisson_mbo(graphs, labelled, labels, class_priors=None, start=None, Ns=40, T=20, mu=1.0, weights=None,
                classes=None, threshold="auction", tol=1e-10):
    """PoissonMBO (module docstring): predicted labels (values of ``classes``) of all n points.

    graphs: a symmetric sparse weight matrix or a list of them (combined with ``weights``, equal by default);
    class_priors: the class fractions (default: the labelled proportions); start: (n, k) scores whose argmax
    starts the iterations (default: :func:`poisson_scores`); threshold: "auction" (exact class sizes) or
    "multiplicative" (graphlearning's projection)."""
    if threshold not in ("auction", "multiplicative"):
        raise ValueError(f"threshold must be 'auction' or 'multiplicative'; got {threshold!r}")
    for name, value in (("Ns", Ns), ("T", T)):
        if int(value) != value or value < 0:
            raise ValueError(f"{name} must be a non-negative integer; got {value!r}")
    if not (np.isfinite(mu) and mu >= 0):
        raise ValueError(f"mu must be finite and non-negative; got {mu!r}")
    W = combined_weights(graphs, weights)
    n = W.shape[0]
    idx, codes, classes, priors = _labelled_codes(n, labelled, labels, classes, class_priors)
    k = classes.size
    if start is None:
        start, _ = poisson_scores(W, idx, codes, classes=np.arange(k), tol=tol)
    start = np.asarray(start, dtype=np.float64)
    if start.shape != (n, k):
        raise ValueError(f"start must have shape {(n, k)}; got {start.shape}")
    d = np.asarray(W.sum(axis=1)).ravel()
    L = (sparse.diags(d) - W).tocsr()
    dt = 1.0 / d.max()                                            # explicit heat step, stable for dt <= 1 / max d
    fidelity = mu * dt * _source(n, idx, codes, k)
    sizes = class_sizes(n, priors)
    u = np.eye(k)[np.argmax(start, axis=1)]
    w = None
    for _ in range(int(T)):
        for _ in range(int(Ns)):
            u = u - dt * (L @ u) + fidelity                       # u <- (I - dt L) u + mu dt b
        if threshold == "auction":
            lab, _ = volume_threshold(u, sizes)
        else:
            lab, w = multiplicative_threshold(u, priors, weights=w)
        u = np.eye(k)[lab]
    return classes[np.argmax(u, axis=1)]
