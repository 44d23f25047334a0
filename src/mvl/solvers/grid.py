"""Validation grids for MVL-LS: decision functions over graphs and (gamma_A, gamma_B, gamma_W) at once.

Section 7.3 of the paper selects the regularisation on a validation set; the graph of the within-view
term (eq 60-64) is a choice of the same kind: dense kernel weights (the paper, Section 7.1) or a
symmetrised kNN graph, and the iterated Laplacian L^p (Belkin, Niyogi & Sindhwani 2006; Sindhwani &
Rosenberg 2008, Table 4). :func:`grid_decision_functions` evaluates MVL-LS (Theorem 10) on every point of
graphs x gamma_A x gamma_B x gamma_W and returns the combined outputs on the evaluation points.

Factorisations are reused across the grid. With R_p = (K^p)^{1/2} and D_p = l gamma_B m I + l gamma_W (L^p)^k
(k the power), the view operator of Theorem 10 is Q_p = K^p H_p^{-1} = R_p (R_p D_p R_p + delta I)^{-1} R_p
(push-through identity), so one symmetric eigendecomposition R_p D_p R_p = W diag(s) W^T serves every
gamma_A (delta = l gamma_A): Q_p = U diag(1 / (s + delta)) U^T with U = R_p W. Further:

- K^p is eigendecomposed once; with gamma_W = 0, R D R = l gamma_B m K^p needs no other decomposition,
  and such grid points do not depend on the graph (computed once, shared by every graph);
- L^p of each view and kNN size is eigendecomposed once, L = Phi diag(lambda) Phi^T, and serves every
  power k: R L^k R = (R Phi) diag(lambda^k) (R Phi)^T, L^k F = Phi diag(lambda^k) Phi^T F;
- with gamma_B = 0, R D R = l gamma_W R L^k R: one decomposition per graph serves every gamma_W (scaled);
  with gamma_B > 0 one decomposition serves every (gamma_B, gamma_W) of the same ratio gamma_W / gamma_B.

Per grid point the coupled system of :mod:`mvl.estimators.least_squares` (size l, or l + n when gamma_B > 0, then
reduced to l by a Cholesky factorisation of I - l gamma_B Q_1) is solved and A_p = (r_p - D_p F_p) / delta
recovered from F_p = K^p A_p = Q_p r_p. No (nm) x (nm) matrix is formed. Cost: O(m n^3) per
eigendecomposition, and per grid point with gamma_B > 0 one n x n x (mn) product (Q_1) and one Cholesky of
size n; with gamma_B = 0 only O(m l n^2).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import linalg
from scipy.linalg import blas, lapack

from ..validation import check_combination, check_gamma, check_precomputed, check_precomputed_test
from ..exceptions import IndefiniteKernelWarning
from ..labels import encode_labels, encode_targets
from ..graph import GRAPH_WEIGHTS, check_n_neighbors, check_power, view_laplacians
from ..memory import check_memory

__all__ = ["grid_decision_functions"]


def _view_eigs(A, name=None):
    """Symmetric eigendecomposition of each (n, n) matrix of A (m, n, n): eigenvalues clipped at 0. With
    ``name`` (the kernels), a view whose lowest eigenvalue is clearly negative gives an
    :class:`mvl.exceptions.IndefiniteKernelWarning` naming it (the solvers assume PSD kernels; clipping changes it)."""
    out = []
    for p, a in enumerate(A):
        s, V = linalg.eigh(a, check_finite=False, driver="evd")  # divide and conquer: ~2x faster than evr here
        if name is not None and s[0] < -1e-6 * max(abs(s[-1]), abs(s[0])):
            warnings.warn(f"{name}: view {p} is not positive semi-definite (lowest eigenvalue {s[0]:.3g}, largest "
                          f"{s[-1]:.3g}); the grid uses its positive part (eigenvalues clipped at 0)",
                          IndefiniteKernelWarning, stacklevel=3)
        out.append((np.clip(s, 0.0, None), V))
    return out


class _GridSystem:
    """What every grid point shares: targets, labelled rows, c, test kernels and preallocated work arrays."""

    def __init__(self, labelled, Y_L, c, Kt, n):
        self.lab, self.Y_L, self.c, self.Kt, self.n = labelled, Y_L, c, Kt, n
        self.l, self.P = Y_L.shape
        self.m = len(c)

    def outputs(self, eig, beta, omega, delta, apply_L):
        """Combined evaluation outputs (t, P) of one grid point.

        ``eig`` holds per view (s, U, UL) with Q_p = U diag(1/(s + delta)) U^T and UL = U[labelled];
        ``apply_L(p, F)`` returns L^k F of view p (used only when omega > 0)."""
        l, n, P, m, c = self.l, self.n, self.P, self.m, self.c
        lab = self.lab
        Qcc_LL = np.zeros((l, l))
        if beta > 0:
            Qc_L = np.zeros((l, n))
            Z = np.empty((n, m * n), order="F")  # [U_1 diag(inv_1)^1/2, ..., U_m diag(inv_m)^1/2]
        invs = []
        for p, (s, U, UL) in enumerate(eig):
            inv = 1.0 / (s + delta)
            invs.append(inv)
            ULi = UL * inv
            Qcc_LL += (c[p] * c[p]) * (ULi @ UL.T)
            if beta > 0:
                Qc_L += c[p] * (ULi @ U.T)
                np.multiply(U, np.sqrt(inv), out=Z[:, p * n:(p + 1) * n])
        if beta > 0:
            # G = I - beta Q_1, Q_1 = sum_p Q_p = Z Z^T (one rank-(mn) update, upper triangle), is symmetric positive
            # definite for delta > 0 (beta Q_p <= I / m); eliminating T = G^{-1} Qc[:, L] E_L from the coupled
            # system of mvl.estimators.least_squares leaves (I + Qcc_LL + beta Qc_L G^{-1} Qc_L^T) E_L = Y_L (l x l)
            G = blas.dsyrk(-beta, Z, trans=0)
            G[np.diag_indices(n)] += 1.0
            chol, info = lapack.dpotrf(G, lower=0, overwrite_a=1, clean=0)
            X = Qc_L.T.copy(order="F")  # (n, l); overwritten by the solve
            if info == 0:
                X, info = lapack.dpotrs(chol, X, lower=0, overwrite_b=1)
            if info != 0:  # not numerically definite: the (l + n) system by LU, as the structured solver does
                S = np.block([[np.eye(l) + Qcc_LL, beta * Qc_L], [-Qc_L.T, np.eye(n) - beta * (Z @ Z.T)]])
                rhs = np.zeros((l + n, P))
                rhs[:l] = self.Y_L
                sol = linalg.solve(S, rhs, overwrite_a=True, check_finite=False)
                E_L, T = sol[:l], sol[l:]
            else:
                M = Qcc_LL + beta * (Qc_L @ X)
                M[np.diag_indices(l)] += 1.0
                E_L = linalg.solve(M, self.Y_L, overwrite_a=True, check_finite=False)
                T = X @ E_L
        else:
            Qcc_LL[np.diag_indices(l)] += 1.0
            E_L = linalg.solve(Qcc_LL, self.Y_L, assume_a="pos", overwrite_a=True, check_finite=False)
            T = None
        E = np.zeros((n, P))
        E[lab] = E_L
        comb = np.zeros((self.Kt.shape[1], P))
        for p, (_s, U, _UL) in enumerate(eig):
            r = c[p] * E if T is None else c[p] * E + beta * T
            F = U @ ((U.T @ r) * invs[p][:, None])  # F_p = K^p A_p = Q_p r_p on the training points
            DF = (beta * m) * F
            if omega > 0:
                DF += omega * apply_L(p, F)
            comb += c[p] * (self.Kt[p] @ ((r - DF) / delta))  # A_p = (r_p - D_p F_p) / delta
        return comb


def grid_decision_functions(K, y, K_test, gammas_A, gammas_B, gammas_W, c=None, laplacian="normalized",
                            n_neighbors=None, laplacian_power=1, graph_weights="kernel", graphs=None):
    """Combined outputs C f(v) of MVL-LS (Theorem 10) for every point of a (graph,) gamma grid.

    Parameters
    ----------
    K : (n, n, m) training kernels, sample-first as the estimators' ``kernel="precomputed"`` input; y : (n,)
    labels, -1 = unlabelled (any sortable labels, as for the estimators); K_test : (t, n, m) evaluation kernels.
    gammas_A, gammas_B, gammas_W : sequences of values (multiplied by l as in eq 67-68).
    c : combination vector (None: 1/m).
    laplacian : "normalized" or "unnormalized" (built from the kernels), or an explicit (n, n, m) array
        (then ``graphs`` must be None and ``n_neighbors`` None; ``laplacian_power`` still applies).
    n_neighbors, laplacian_power, graph_weights : the graph when ``graphs`` is None (see
        :class:`mvl.MVLLeastSquares`).
    graphs : None, or a list of (n_neighbors, laplacian_power) pairs (n_neighbors None = dense kernel
        weights); ``graph_weights`` applies to every kNN graph (the dense graph keeps the kernel values).

    Returns
    -------
    (outputs, classes): combined outputs C f(v) (columns in the order of ``classes``, the sorted distinct
    labels), of shape (len(gammas_A), len(gammas_B), len(gammas_W), t, P), or with a
    leading axis len(graphs) when ``graphs`` is given. Points with gamma_W = 0 do not depend on the graph
    and are computed once.
    """
    K = check_precomputed(K)
    m, n, _ = K.shape
    classes, y_enc, labelled = encode_labels(y, n)
    encoded = y_enc[labelled]
    Kt = check_precomputed_test(K_test, m, n)
    c = check_combination(c, m)
    gammas_A = [check_gamma(g, "gamma_A", positive=True) for g in gammas_A]
    gammas_B = [check_gamma(g, "gamma_B") for g in gammas_B]
    gammas_W = [check_gamma(g, "gamma_W") for g in gammas_W]
    single = graphs is None
    graph_list = [(n_neighbors, laplacian_power)] if single else list(graphs)
    if not graph_list:
        raise ValueError("graphs is empty")
    graph_list = [(check_n_neighbors(n_neighbors), check_power(laplacian_power, "laplacian_power"))
                  for n_neighbors, laplacian_power in graph_list]
    explicit = not isinstance(laplacian, str)
    if explicit:
        if not single or n_neighbors is not None:
            raise ValueError("an explicit laplacian array is one graph: give neither graphs nor n_neighbors")
        Lx = check_precomputed(laplacian, name="laplacian")
        if Lx.shape != K.shape:
            raise ValueError(f"laplacian has shape {Lx.shape}, kernels have {K.shape}")
    elif laplacian not in ("normalized", "unnormalized"):
        raise ValueError(f"laplacian must be 'normalized', 'unnormalized' or an array of shape (n, n, m), "
                         f"got {laplacian!r}")
    if graph_weights not in GRAPH_WEIGHTS:
        raise ValueError(f"graph_weights must be one of {GRAPH_WEIGHTS}, got {graph_weights!r}")
    l, P = len(labelled), len(classes)
    sysm = _GridSystem(labelled, encode_targets(encoded, P), c, Kt, n)
    G, nA, nB, nW = len(graph_list), len(gammas_A), len(gammas_B), len(gammas_W)
    # before anything large is allocated: per view K's eigenvectors, R, U (3 m n^2), per kNN size L's
    # eigenvectors and R Phi (2 m n^2 each), per graph R L^k R and one decomposition at a time (2 m n^2), the
    # evaluation outputs
    n_knn = len({g[0] for g in graph_list}) if any(g > 0 for g in gammas_W) else 0
    check_memory(8.0 * (m * n * n * (5 + 2 * n_knn) + G * nA * nB * nW * Kt.shape[1] * P),
                 f"grid_decision_functions ({G} graph(s) x {nA * nB * nW} gamma points, n = {n}, m = {m}, "
                 f"t = {Kt.shape[1]})", "evaluate fewer graphs or evaluation points per call, or fewer training "
                 "samples")
    out = np.empty((G, nA, nB, nW, Kt.shape[1], P))

    # K^p = V diag(w) V^T, R_p = K^{1/2} = V diag(sqrt w) V^T: once per view for the whole grid
    Keig = _view_eigs(K, name="K")
    R = np.stack([(V * np.sqrt(w)) @ V.T for w, V in Keig])
    KU = [(w, V * np.sqrt(w)) for w, V in Keig]  # omega = 0: R D R = beta m K, U = R V = V diag(sqrt w)

    # graph operators per distinct kNN size: L = Phi diag(lam) Phi^T and R Phi, per view
    lap_eig = {}
    if any(g > 0 for g in gammas_W):
        for n_neighbors in sorted({g[0] for g in graph_list}, key=lambda v: -1 if v is None else v):
            if explicit:
                L = Lx
            else:
                # graph_weights applies to kNN graphs; the dense graph has the kernel values as weights
                L = view_laplacians(K, normalized=(laplacian == "normalized"), n_neighbors=n_neighbors,
                                    weights="kernel" if n_neighbors is None else graph_weights)
            eigs = _view_eigs(L)
            lap_eig[n_neighbors] = [(lam, Phi, R[p] @ Phi) for p, (lam, Phi) in enumerate(eigs)]

    def with_labelled(s, U):
        return s, U, U[labelled]

    for jb, gB in enumerate(gammas_B):
        beta = l * gB if m > 1 else 0.0
        eig0 = [with_labelled((beta * m) * w, U) for w, U in KU]
        for jw, gW in enumerate(gammas_W):
            if gW > 0:
                continue
            for ja, gA in enumerate(gammas_A):
                out[:, ja, jb, jw] = sysm.outputs(eig0, beta, 0.0, l * gA, None)[None]
    for ig, (n_neighbors, laplacian_power) in enumerate(graph_list):
        if not lap_eig:
            break
        ops = lap_eig[n_neighbors]
        RLR = [(RPhi * lam**laplacian_power) @ RPhi.T for lam, _Phi, RPhi in ops]  # R L^k R per view

        def apply_L(p, F, ops=ops, laplacian_power=laplacian_power):
            lam, Phi, _ = ops[p]
            return Phi @ ((Phi.T @ F) * (lam**laplacian_power)[:, None])

        base = None  # gamma_B = 0: eigendecomposition of R L^k R, scaled by omega
        by_ratio = {}
        for jb, gB in enumerate(gammas_B):
            beta = l * gB if m > 1 else 0.0
            for jw, gW in enumerate(gammas_W):
                if gW == 0:
                    continue
                omega = l * gW
                if beta == 0:
                    if base is None:
                        base = [(s, R[p] @ W) for p, (s, W) in enumerate(_view_eigs(np.stack(RLR)))]
                    eig = [with_labelled(omega * s, U) for s, U in base]
                else:
                    # R D R = beta (m K + (omega / beta) R L^k R): one decomposition per ratio omega / beta (log
                    # grids repeat ratios, e.g. 1e-4 / 1e-6 = 1e-2 / 1e-4), its eigenvalues scaled by beta
                    ratio = float(f"{omega / beta:.12g}")  # equal ratios up to rounding share one key
                    if ratio not in by_ratio:
                        mats = np.stack([m * K[p] + (omega / beta) * RLR[p] for p in range(m)])
                        by_ratio[ratio] = [(s, R[p] @ W) for p, (s, W) in enumerate(_view_eigs(mats))]
                    eig = [with_labelled(beta * s, U) for s, U in by_ratio[ratio]]
                for ja, gA in enumerate(gammas_A):
                    out[ig, ja, jb, jw] = sysm.outputs(eig, beta, omega, l * gA, apply_L)
    return (out[0] if single else out), classes
