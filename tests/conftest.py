"""Shared problem generators and reference helpers for the mvl test suite.

Everything here is written with plain numpy on purpose: the problems and the
reference computations must not depend on the package code under test.
"""

from __future__ import annotations

import os
from pathlib import Path

# scikit-learn's estimator checks include one with array API dispatch on numpy input, which runs only when SciPy
# was imported with its array API support on; set before anything imports SciPy so that check runs, not skips.
os.environ.setdefault("SCIPY_ARRAY_API", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from mvl.workflow import snakemake_log  # noqa: E402


def _gaussian_gram(X, X_test, rng):
    """Gaussian Gram matrices with a median-distance bandwidth (training points only)."""
    sq = np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=-1)
    iu = np.triu_indices(X.shape[0], k=1)
    sigma = np.median(np.sqrt(sq[iu])) * rng.uniform(0.7, 1.5)
    sq_t = np.sum((X_test[:, None, :] - X[None, :, :]) ** 2, axis=-1)
    return np.exp(-sq / (2 * sigma**2)), np.exp(-sq_t / (2 * sigma**2))


PAPER_MODEL = dict(gamma_B=0.0, gamma_W=0.0, n_neighbors=None, laplacian_power=1)
"""The paper's model: the dense graph W = K (Section 7.1), L itself (p = 1), no between- or within-view term unless
given. The solver tests compare the estimators with references of this model; the estimators' own defaults (a
kNN graph, L^2, gamma_W = 1e-2) are tested in test_first_fit.py."""


GAMMAS = ("gamma_A", "gamma_B", "gamma_W")


def gamma_kw(gammas):
    """A tuple (gamma_A, gamma_B, gamma_W) (or its leading entries) as keyword arguments of the estimators."""
    return dict(zip(GAMMAS[:len(gammas)], gammas, strict=True))


def paper_kwargs(n_positional, kw):
    """``kw`` completed with :data:`PAPER_MODEL` for what neither the ``n_positional`` leading gammas nor ``kw``
    give."""
    defaults = {k: v for k, v in PAPER_MODEL.items() if k not in GAMMAS[:n_positional]}
    return {**defaults, **kw}


def paper_model(cls):
    """A factory of ``cls`` (MVLLeastSquares, MVLLeastSquaresOptC, MVLSVM, MVLBinarySVM) with
    :data:`PAPER_MODEL` as defaults, and the paper's squared loss where ``cls`` has a ``loss``."""
    import inspect

    paper_loss = {"loss": "squared"} if "loss" in inspect.signature(cls).parameters else {}  # eq (53)

    def make(*gammas, **kw):
        """``gammas``: leading gamma_A, gamma_B, gamma_W (the estimators themselves take keywords only)."""
        return cls(**paper_kwargs(len(gammas), {**paper_loss, **gamma_kw(gammas), **kw}))
    make.__name__ = cls.__name__
    return make


def make_labels(n, P, frac_unlabelled, rng):
    """Labels in 0..P-1 with -1 for unlabelled samples, randomly interleaved.

    Every class gets at least one labelled sample and at least one sample is
    unlabelled whenever ``frac_unlabelled > 0``.
    """
    n_unl = int(round(frac_unlabelled * n))
    if frac_unlabelled > 0:
        n_unl = max(n_unl, 1)
    n_lab = n - n_unl
    if n_lab < P:
        raise ValueError("not enough labelled samples to label every class")
    lab = np.concatenate([np.arange(P), rng.integers(0, P, size=n_lab - P)])
    rng.shuffle(lab)
    y = -np.ones(n, dtype=np.int64)
    pos = np.sort(rng.choice(n, size=n_lab, replace=False))
    y[pos] = lab
    return y


def make_problem(m, n, P, frac_unlabelled=0.3, seed=0, t=7):
    """A random multi-view problem with Gaussian kernels.

    Returns ``(K, K_test, y)`` with K of shape (m, n, n), K_test of shape
    (m, t, n) and y of shape (n,), -1 = unlabelled. Each view has its own
    feature dimension and bandwidth so the views genuinely differ.
    """
    rng = np.random.default_rng(seed)
    K = np.empty((m, n, n))
    K_test = np.empty((m, t, n))
    for p in range(m):
        d = int(rng.integers(2, 6))
        X = rng.normal(size=(n, d))
        X_test = rng.normal(size=(t, d))
        K[p], K_test[p] = _gaussian_gram(X, X_test, rng)
    y = make_labels(n, P, frac_unlabelled, rng)
    return K, K_test, y


def make_linear_problem(m, n, P, frac_unlabelled=0.3, seed=0, t=6):
    """Explicit finite feature maps Phi_p (n x d_p) and linear kernels Phi_p Phi_p^T.

    Returns a dict with Phi, Phi_test (lists), K (m, n, n), K_test (m, t, n), y.
    """
    rng = np.random.default_rng(seed)
    dims = [int(rng.integers(2, 7)) for _ in range(m)]
    Phi = [rng.normal(size=(n, d)) for d in dims]
    Phi_test = [rng.normal(size=(t, d)) for d in dims]
    K = np.stack([F @ F.T for F in Phi])
    K = 0.5 * (K + K.transpose(0, 2, 1))  # exactly symmetric in floating point
    K_test = np.stack([Ft @ F.T for F, Ft in zip(Phi, Phi_test, strict=True)])
    y = make_labels(n, P, frac_unlabelled, rng)
    return dict(Phi=Phi, Phi_test=Phi_test, K=K, K_test=K_test, y=y)


def random_graph_laplacians(m, n, seed=0, normalized=False):
    """m graph Laplacians from random symmetric non-negative weights (numpy only)."""
    rng = np.random.default_rng(seed)
    out = np.empty((m, n, n))
    for p in range(m):
        W = rng.uniform(0, 1, size=(n, n)) * (rng.uniform(size=(n, n)) < 0.6)
        W = np.triu(W, 1)
        W = W + W.T
        d = W.sum(axis=1)
        if normalized:
            s = 1.0 / np.sqrt(d)
            out[p] = np.eye(n) - s[:, None] * W * s[None, :]
        else:
            out[p] = np.diag(d) - W
    return out


def pm_one_targets(y, P):
    """Targets (-1, ..., 1, ..., -1) of the labelled samples, shape (l, P)."""
    lab = np.flatnonzero(y >= 0)
    Y = -np.ones((lab.size, P))
    Y[np.arange(lab.size), y[lab]] = 1.0
    return lab, Y


def objective_minimiser_values(K, labelled, Y_L, c, gamma_A, gamma_B, gamma_W, L=None, between_weights=None):
    """The values f (m, n, P) at the training points of the minimiser of eq (10)/(53), times l:
    sum_i ||y_i - C f(x_i)||^2 + l gamma_A ||f||_K^2 + l gamma_B <f, M_B f> + l gamma_W <f, M_W f>, f = G a,
    solved as one stacked linear least-squares problem in a (numpy lstsq on the square roots of the quadratic
    forms by eigh): no normal equations, no eq (68)."""
    m, n, _ = K.shape
    P = Y_L.shape[1]
    N = n * m
    G = np.zeros((N, N))  # sample-major: index i * m + p
    for p in range(m):
        for i in range(n):
            for j in range(n):
                G[i * m + p, j * m + p] = K[p, i, j]
    SC = np.zeros((len(labelled), N))  # a -> C f(x_i) for the labelled i, applied to f
    for r, i in enumerate(labelled):
        for p in range(m):
            SC[r, i * m + p] = c[p]
    w = np.ones(n) if between_weights is None else np.asarray(between_weights, dtype=float)
    MB = np.zeros((N, N))
    for i in range(n):
        for p in range(m):
            for q in range(m):
                MB[i * m + p, i * m + q] = w[i] * ((m if p == q else 0) - 1)
    MW = np.zeros((N, N))
    if gamma_W > 0 and L is not None:
        for p in range(m):
            for i in range(n):
                for j in range(n):
                    MW[i * m + p, j * m + p] = L[p, i, j]

    def root(S):
        s, V = np.linalg.eigh(0.5 * (S + S.T))
        return (V * np.sqrt(np.clip(s, 0.0, None))).T

    lw = len(labelled)
    design = np.vstack([SC @ G, np.sqrt(lw * gamma_A) * root(G), np.sqrt(lw * gamma_B) * root(MB) @ G,
                        np.sqrt(lw * gamma_W) * root(MW) @ G])
    target = np.vstack([Y_L, np.zeros((design.shape[0] - len(labelled), P))])
    a = np.linalg.lstsq(design, target, rcond=None)[0]
    return (G @ a).reshape(n, m, P).transpose(1, 0, 2)


def solver_values(K, coef):
    """f^p(x_i) = sum_j K^p(x_i, x_j) coef[p, j] for coefficients (m, n, P)."""
    return np.einsum("pij,pjk->pik", K, coef)


def sample_first(K):
    """Per-view arrays (m, n, n) / (m, t, n) of the references -> the estimators' sample-first (n, n, m) / (t, n, m)."""
    return np.ascontiguousarray(np.moveaxis(np.asarray(K), 0, -1))


def rel_diff(a, b):
    """max |a - b| / max |b| (with a floor to avoid dividing by ~0)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


# ---------------------------------------------------------------- fixtures


@pytest.fixture
def two_view_problem():
    """m=2 views, n=16 samples, P=3 classes, ~30% unlabelled."""
    return make_problem(m=2, n=16, P=3, frac_unlabelled=0.3, seed=11)


@pytest.fixture
def three_view_problem():
    """m=3 views, n=20 samples, P=2 classes, ~40% unlabelled."""
    return make_problem(m=3, n=20, P=2, frac_unlabelled=0.4, seed=12)


@pytest.fixture
def supervised_problem():
    """m=3 views, n=15 samples, P=3 classes, every sample labelled."""
    return make_problem(m=3, n=15, P=3, frac_unlabelled=0.0, seed=14)


SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
ALLOW_MISSING = "MVL_ALLOW_MISSING_SHARED_DATA"


@pytest.fixture
def shared_data():
    """The real data folder ../shared/data; missing: FAIL, unless MVL_ALLOW_MISSING_SHARED_DATA=1 (explicit skip)."""
    if not (SHARED / "flowers17" / "datasplits.mat").is_file():
        msg = (f"the real data folder {SHARED} (../shared/data relative to the repository) is missing; "
               f"it is required for the tests that read it. Set {ALLOW_MISSING}=1 to skip them explicitly.")
        if os.environ.get(ALLOW_MISSING, "").lower() in ("1", "true", "yes"):
            pytest.skip(msg)
        pytest.fail(msg)
    return SHARED


# ---------------------------------------------------------------- running the Snakemake workflow

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW_FILES = ("Snakefile", "workflow", "notebooks", "config", "profiles")


def snakemake_exe():
    """The snakemake next to the test interpreter (the project's venv), else the one on PATH."""
    import shutil
    import sys

    exe = Path(sys.executable).with_name("snakemake")
    found = str(exe) if exe.exists() else shutil.which("snakemake")
    assert found, "snakemake is not installed in the test environment"
    return found


def copy_workflow(dest):
    """The workflow's files (no results) copied into ``dest``; returns ``dest``."""
    import shutil

    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    for item in WORKFLOW_FILES:
        src = ROOT / item
        (shutil.copytree if src.is_dir() else shutil.copy)(src, dest / item)
    return dest


def run_snakemake(*args, cwd=ROOT, timeout=300, env=None):
    """``snakemake *args`` in ``cwd``; the CompletedProcess (text output captured, never raises on failure)."""
    import subprocess

    return subprocess.run([snakemake_exe(), *args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env=env, check=False)


def job_stats(text):
    """The first "Job stats" table of a Snakemake run or dry run: {rule: count}, "total" included."""
    assert "Job stats:" in text, text[-3000:]
    return snakemake_log.job_stats(text)


# ---------------------------------------------------------------- digits of three classes


@pytest.fixture(scope="module")
def digits3():
    """60 mfeat digits of three classes, three views (fou, kar, mor), standardised."""
    from sklearn.preprocessing import StandardScaler

    from mvl.data.embedded import load_mfeat

    ds = load_mfeat(["fou", "kar", "mor"])
    keep = np.concatenate([np.flatnonzero(ds.y == k)[:20] for k in (1, 4, 7)])
    X = StandardScaler().fit_transform(np.hstack(ds.views)[keep])
    y = ds.y[keep]
    return X, y


# ---------------------------------------------------------------- the manifold data of the operator solvers


def gauss_gram(X, Z, s):
    """The Gaussian Gram matrix exp(-||x - z||^2 / (2 s^2)) by scipy's cdist."""
    from scipy.spatial.distance import cdist

    return np.exp(-cdist(X, Z, "sqeuclidean") / (2 * s * s))


@pytest.fixture(scope="module")
def manifold():
    """300 training points of three 6-feature views (4 classes on curves), 24 labelled, 80 test points."""
    from scipy.spatial.distance import cdist

    from mvl.data.synthetic import make_multiview_manifold

    d = make_multiview_manifold(380, n_classes=4, n_views=3, n_features=6, random_state=3)
    views = [V[:300] for V in d.views]
    tests = [V[300:] for V in d.views]
    y = d.y[:300]
    labelled = np.concatenate([np.flatnonzero(y == k)[:6] for k in range(4)])
    scales = [0.7 * np.median(cdist(V, V)[np.triu_indices(300, 1)]) for V in views]
    K = np.stack([gauss_gram(V, V, s) for V, s in zip(views, scales, strict=False)])
    return dict(views=views, tests=tests, y=y, labelled=labelled, scales=scales, K=K, d=d)


def manifold_problem(manifold, power=2, gammas=(1e-4, 1e-3, 1e-2), c=(0.5, 0.3, 0.2), weights=None):
    """The kernel operator, the MVLSystem with sparse 8-NN Laplacians, the dense Laplacian powers, Y_L and c of
    :func:`manifold`."""
    from mvl.graph import sparse_knn_weights, sparse_laplacian
    from mvl.kernel_blocks import ViewKernels
    from mvl.labels import encode_targets
    from mvl.solvers.system import MVLSystem

    views, _K, y, lab = manifold["views"], manifold["K"], manifold["y"], manifold["labelled"]
    Y_L = encode_targets(y[lab], 4)
    kernels = ViewKernels(views, "rbf", manifold["scales"], max_memory=0, block=128)
    Ls = [sparse_laplacian(sparse_knn_weights(kernels, p, 8)) for p in range(3)]
    Ld = np.stack([np.linalg.matrix_power(Lp.toarray(), power) for Lp in Ls])
    c = np.asarray(c)
    gamma_A, gamma_B, gamma_W = gammas
    system = MVLSystem(300, lab, Y_L, c, gamma_A=gamma_A, gamma_B=gamma_B, gamma_W=gamma_W, laplacians=Ls,
                       laplacian_power=power, between_weights=weights)
    return kernels, system, Ld, Y_L, c


def manifold_labels(manifold):
    """-1 except at the labelled points of :func:`manifold`."""
    y = np.full(300, -1)
    y[manifold["labelled"]] = manifold["y"][manifold["labelled"]]
    return y


def random_c(m, rng):
    """A combination vector with at least one negative entry."""
    c = rng.uniform(0.2, 1.5, size=m) * rng.choice([-1.0, 1.0], size=m)
    c[0] = -abs(c[0])
    return c


def fit_precomputed(K, y, solver, **kw):
    """The paper's MVL-LS fitted on the per-view kernels K (m, n, n) (and an explicit per-view laplacian (m, n, n)),
    passed to the estimator sample-first with kernel="precomputed"."""
    import mvl

    if not isinstance(kw.get("laplacian", "normalized"), str):
        kw["laplacian"] = sample_first(kw["laplacian"])
    return paper_model(mvl.MVLLeastSquares)(solver=solver, kernel="precomputed", **kw).fit(sample_first(K), y)


def precomputed_ls(*gammas, **kw):
    """The paper's MVL-LS on precomputed kernels; ``gammas``: leading gamma_A, gamma_B, gamma_W."""
    import mvl

    return paper_model(mvl.MVLLeastSquares)(**gamma_kw(gammas), kernel="precomputed", **kw)


signal_free = pytest.mark.filterwarnings(
    "ignore::mvl.exceptions.RegularizationWarning", "ignore::mvl.exceptions.UnlabelledMarkerWarning",
    "ignore::mvl.exceptions.FewLabelsWarning")
"""For a test on data whose labels are drawn independently of the kernels (:func:`make_problem`, scikit-learn's
estimator checks): such a fit may predict one class for every labelled sample, leave the unlabelled samples out
at gamma_W = 0, or draw a class few labels among many, and the package warns so; what the test checks holds either
way and the warning is not what it tests (the warnings themselves are asserted in tests/estimators/test_base.py,
tests/test_validation.py and tests/estimators/test_few_labelled_class.py)."""
