"""Semi-supervised benchmarks of Sindhwani & Rosenberg (ICML 2008, "SR"), the data of their MR vs CoMR
experiment (SR Section 4.3, Tables 1 and 4).

Loaders read the MATLAB files of the benchmark collection (``g50c.mat``, ``uspst.mat``, ``text1.mat`` = PCMAC,
``COIL20_cai.mat``) from a file path or a directory; they do not download anything. :func:`make_lines`
generates the LINES data set. :func:`draw_split` draws seeded (l, u, t, v) splits with the sizes of SR
Table 1, and :func:`prepare_split` gives the data, split and kernels of one (dataset, seed) run with the
parameters of SR Table 4 (:func:`graph_kernels`: the kNN graph of either weight convention). Running MR and
CoMR on a split, and the statistics over seeds, are workflow code: :mod:`mvl.workflow.coreg_runner`; the
protocols built on their rows are in :mod:`mvl.workflow.coreg_report`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..coreg import graph_weights_name, intrinsic_graph_kernel, knn_graph_laplacian
from ..kernels import squared_distances
from ..labels import encode_targets

__all__ = [
    "SSLDataset",
    "BENCHMARK_FILES",
    "SPLIT_SIZES",
    "SR_PARAMETERS",
    "load_ssl_benchmark",
    "make_lines",
    "load_dataset",
    "draw_split",
    "prepare_split",
    "graph_kernels",
    "resolve_parameters",
]

BENCHMARK_FILES = {"g50c": "g50c.mat", "uspst": "uspst.mat", "pcmac": "text1.mat", "coil20": "COIL20_cai.mat"}
"""Dataset name -> file name in the benchmark directory (PCMAC is distributed as ``text1.mat``)."""

# expected (n, d, number of classes) of each file
_EXPECTED = {"g50c": (550, 50, 2), "uspst": (2007, 256, 10), "pcmac": (1946, 7511, 2), "coil20": (1440, 1024, 20)}
_ALIASES = {"text1": "pcmac", "coil20_cai": "coil20", "coil": "coil20"}

SPLIT_SIZES = {
    "lines": (2, 500, 250, 250),
    "g50c": (50, 338, 112, 50),
    "uspst": (50, 1430, 477, 50),
    "coil20": (40, 1320, 40, 40),
    "pcmac": (50, 1385, 461, 50),
}
"""(l, u, t, v): labelled, unlabelled, test and validation sizes of SR Table 1."""

SR_PARAMETERS = {
    "lines": dict(n_neighbors=10, sigma=None, laplacian_power=1, kernel="linear", preprocess=None,
                  each_class_labelled=True),
    "g50c": dict(n_neighbors=50, sigma=17.5, laplacian_power=5, kernel="rbf", preprocess=None,
                 each_class_labelled=False),
    "uspst": dict(n_neighbors=10, sigma=9.4, laplacian_power=2, kernel="rbf", preprocess=None,
                  each_class_labelled=False),
    "coil20": dict(n_neighbors=2, sigma=0.6, laplacian_power=1, kernel="rbf", preprocess="unit_norm",
                   each_class_labelled=False),
    "pcmac": dict(n_neighbors=50, sigma=2.7, laplacian_power=5, kernel="rbf", preprocess=None,
                  each_class_labelled=False),
}
"""nn, sigma and p (``laplacian_power``: K2 = (M^p + 1e-6 I)^-1) of SR Table 4 (mu = 1), the ambient kernel
(linear for LINES), our preprocessing and the labelled-set sampling. ``params={"p": ...}`` is accepted for
``laplacian_power`` by :func:`prepare_split` and :func:`mvl.workflow.coreg_runner.run_split`.

sigma is also the width of the "kernel" graph weights exp(-d^2 / (2 sigma^2)) (:func:`graph_kernels`); LINES
has no sigma in Table 4 (linear kernel), so it is run with binary graph weights only.

Labelled sets are uniformly random ("10 random data splits", SR Table 1), so with COIL20 (l = 40, 20 classes)
about 2.6 classes have no labelled point on average; only LINES (l = 2, one point per class) is redrawn until
both classes are labelled (:func:`draw_split`).

COIL20 rows are scaled to unit Euclidean norm: with the raw pixel values in [0, 1] of ``COIL20_cai.mat``
(median nearest-neighbour distance 2.0, median distance 11) a width sigma = 0.6 makes the Gaussian Gram matrix
numerically the identity; on unit-norm rows (median distance 0.77) sigma = 0.6 is a meaningful width. The
paper does not state the scaling of its COIL20 file. PCMAC rows already have unit norm.
"""


@dataclass
class SSLDataset:
    """Features ``X`` (n, d; dense array, or scipy CSR for PCMAC), labels ``y`` in 0..c-1, the original
    label values ``classes`` (``classes[y]`` are the labels in the file), and the transductive splits shipped in
    the file (``idx_labelled`` 10 x 50 and ``idx_unlabelled``, 0-based) where present."""

    name: str
    X: object
    y: np.ndarray
    classes: np.ndarray
    source: str = ""
    idx_labelled: np.ndarray | None = None
    idx_unlabelled: np.ndarray | None = None

    @property
    def n_samples(self):
        return self.X.shape[0]

    @property
    def n_classes(self):
        return len(self.classes)


def _canonical(name):
    key = str(name).lower()
    key = _ALIASES.get(key, key)
    if key not in BENCHMARK_FILES:
        raise ValueError(f"unknown benchmark {name!r}; expected one of {sorted(BENCHMARK_FILES)} (or 'text1')")
    return key


def load_ssl_benchmark(name, path):
    """Read one benchmark file.

    Parameters
    ----------
    name : "g50c", "uspst", "pcmac" (or "text1") or "coil20"
    path : the ``.mat`` file itself or the directory holding it (file names in :data:`BENCHMARK_FILES`).

    Variables read: ``X`` and ``y`` (g50c, uspst, text1; ``X`` sparse for text1), ``X`` and ``Y`` (COIL20_cai),
    and ``idxLabs``/``idxUnls`` (1-based) where present. Shapes are checked against the known ones
    (550 x 50, 2007 x 256, 1946 x 7511, 1440 x 1024).
    """
    from scipy import io as sio
    from scipy import sparse

    key = _canonical(name)
    p = Path(path)
    file = p / BENCHMARK_FILES[key] if p.is_dir() else p
    if not file.is_file():
        raise FileNotFoundError(f"benchmark file for {key!r} not found: {file} (expected {BENCHMARK_FILES[key]} "
                                f"in the benchmark directory)")
    mat = sio.loadmat(str(file))
    if "X" not in mat:
        raise ValueError(f"{file}: no variable 'X' (variables: {sorted(k for k in mat if not k.startswith('__'))})")
    X = mat["X"]
    X = X.tocsr().astype(np.float64) if sparse.issparse(X) else np.asarray(X, dtype=np.float64)
    ylab = mat.get("y", mat.get("Y"))
    if ylab is None:
        raise ValueError(f"{file}: no label variable 'y' or 'Y'")
    ylab = np.asarray(ylab).ravel().astype(np.int64)
    n, d, c = _EXPECTED[key]
    classes, y = np.unique(ylab, return_inverse=True)
    if X.shape != (n, d) or ylab.shape != (n,) or classes.size != c:
        raise ValueError(f"{file}: expected X of shape {(n, d)} and {n} labels in {c} classes, got X {X.shape}, "
                         f"{ylab.size} labels in {classes.size} classes")
    data = sparse.csr_matrix(X).data if sparse.issparse(X) else X
    if not np.all(np.isfinite(data)):
        raise ValueError(f"{file}: X contains NaN or inf")
    idx_l = mat.get("idxLabs")
    idx_u = mat.get("idxUnls")
    return SSLDataset(
        name=key, X=X, y=y.astype(np.int64), classes=classes, source=str(file),
        idx_labelled=None if idx_l is None else np.asarray(idx_l, dtype=np.int64) - 1,
        idx_unlabelled=None if idx_u is None else np.asarray(idx_u, dtype=np.int64) - 1,
    )


LINES_GEOMETRY = dict(vertex=(1.0, 0.0), gap=0.1, length=2.0, noise=0.05)
"""Parameters of :func:`make_lines`: the lines' intersection, the distance of each segment from it, the segment
length and the noise standard deviation."""


def make_lines(n_samples=1002, seed=0, noise=None):
    """The LINES data set (SR Section 4.2-4.3, Figure 2): two classes spread along perpendicular lines.

    SR give no coordinates; this is our construction. The two lines meet at right angles at the vertex
    v = (1, 0), with directions u = (1, 1)/sqrt(2) (class 1) and u' = (1, -1)/sqrt(2) (class 0); each class is
    uniform on its segment v + tau u, tau in [0.1, 2.1] (the segments stop 0.1 short of the vertex), plus
    isotropic Gaussian noise of standard deviation ``noise`` (default 0.05). The line through the origin
    x_2 = 0 separates the classes, so the linear kernel without bias of SR Table 4 can express a perfect
    classifier, while a linear function that is constant along one line varies fastest along the other
    (SR Section 4.2).

    Returns ``(X, y)``: (n_samples, 2) float64 and labels in {0, 1}, class 1 first (n - n//2 points).
    """
    rng = np.random.default_rng(seed)
    g = LINES_GEOMETRY
    noise = g["noise"] if noise is None else float(noise)
    n = int(n_samples)
    h = n - n // 2
    v = np.asarray(g["vertex"], dtype=np.float64)
    parts = []
    for u, m in (((1.0, 1.0), h), ((1.0, -1.0), n - h)):
        tau = g["gap"] + g["length"] * rng.uniform(0.0, 1.0, size=m)
        parts.append(v + tau[:, None] * (np.asarray(u) / np.sqrt(2.0)))
    X = np.vstack(parts) + noise * rng.normal(size=(n, 2))
    y = np.r_[np.ones(h, dtype=np.int64), np.zeros(n - h, dtype=np.int64)]
    return X, y


def load_dataset(name, data_dir=None, seed=0):
    """(X, y) of a dataset of SR Table 1: "lines" (generated with ``seed``, l + u + t + v points) or a benchmark
    read from ``data_dir`` with :func:`load_ssl_benchmark`."""
    key = str(name).lower()
    if key == "lines":
        return make_lines(sum(SPLIT_SIZES["lines"]), seed=seed)
    if data_dir is None:
        raise ValueError(f"data_dir is needed to load {name!r}")
    ds = load_ssl_benchmark(key, data_dir)
    return ds.X, ds.y


def draw_split(y, sizes, seed, each_class_labelled=True, max_tries=10000):
    """Seeded random split into labelled, unlabelled, test and validation index sets of sizes (l, u, t, v).

    A uniform random permutation is drawn; its first l entries are the labelled set, the next u, t and v the
    unlabelled, test and validation sets. With ``each_class_labelled`` the permutation is redrawn until every
    class has a labelled sample (for LINES with l = 2: one per class). Returns a dict of sorted index arrays.
    """
    y = np.asarray(y)
    l, u, t, v = (int(s) for s in sizes)
    n = y.size
    if l + u + t + v > n:
        raise ValueError(f"split sizes {sizes} need {l + u + t + v} points, the data have {n}")
    classes = np.unique(y)
    if each_class_labelled and l < classes.size:
        raise ValueError(f"l = {l} labelled points cannot cover {classes.size} classes")
    rng = np.random.default_rng(seed)
    for _ in range(max_tries):
        perm = rng.permutation(n)
        if not each_class_labelled or np.unique(y[perm[:l]]).size == classes.size:
            break
    else:  # pragma: no cover - needs absurd sizes
        raise RuntimeError("could not draw a labelled set covering every class")
    cuts = np.cumsum([0, l, u, t, v])
    names = ("labelled", "unlabelled", "test", "validation")
    return {k: np.sort(perm[cuts[i]:cuts[i + 1]]) for i, k in enumerate(names)}


def _preprocess(X, how):
    if how is None:
        return X
    if how == "unit_norm":
        from scipy import sparse

        if sparse.issparse(X):
            norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1))).ravel()
            return sparse.diags(1.0 / np.where(norms > 0, norms, 1.0)) @ X
        norms = np.linalg.norm(X, axis=1, keepdims=True)
        return X / np.where(norms > 0, norms, 1.0)
    raise ValueError(f"unknown preprocessing {how!r}")


def resolve_parameters(dataset, params):
    """The canonical name of ``dataset`` and its parameters: :data:`SR_PARAMETERS` (binary graph weights) with
    ``params`` over them (``p`` is an alias of ``laplacian_power``); ``ValueError`` for unknown names."""
    key = str(dataset).lower()
    key = _ALIASES.get(key, key)
    if key not in SPLIT_SIZES:
        raise ValueError(f"unknown dataset {dataset!r}; expected one of {sorted(SPLIT_SIZES)}")
    par = dict(SR_PARAMETERS[key], graph_weights="binary")
    given = dict(params or {})
    if "p" in given:  # the name of SR Table 4
        if "laplacian_power" in given:
            raise ValueError("give laplacian_power or its alias p, not both")
        given["laplacian_power"] = given.pop("p")
    unknown = set(given) - set(par)
    if unknown:
        raise ValueError(f"unknown parameter(s) {sorted(unknown)}; expected some of {sorted(par)} (or p)")
    par.update(given)
    par["graph_weights"] = graph_weights_name(par["graph_weights"])
    return key, par


def graph_kernels(sqdist, params, weights=None):
    """The kNN graph of SR Section 4.3 on the training points and its intrinsic kernel, for one weight
    convention (``weights``: "binary" or "kernel", default ``params["graph_weights"]``).

    ``params`` holds n_neighbors, laplacian_power and sigma (the width of the kernel weights
    exp(-d^2 / (2 sigma^2)); SR Table 4's sigma of the ambient Gaussian kernel). Returns a dict with ``M`` (the
    normalized Laplacian), ``K2`` = (M^p + 1e-6 I)^-1 and ``R`` = M^p + 1e-6 I.
    """
    weights = graph_weights_name(params["graph_weights"] if weights is None else weights)
    if weights == "kernel" and params.get("sigma") is None:
        raise ValueError("kernel graph weights need sigma (SR Table 4 gives none for LINES)")
    M = knn_graph_laplacian(sqdist, params["n_neighbors"], weights=weights, sigma=params.get("sigma"))
    K2, R = intrinsic_graph_kernel(M, params["laplacian_power"])
    return dict(M=M, K2=K2, R=R)


def prepare_split(dataset, seed, data_dir=None, X=None, y=None, sizes=None, params=None):
    """Data, split and kernels of one (dataset, seed) run of SR Section 4.3 (see
    :func:`mvl.workflow.coreg_runner.run_split`).

    Training points are ordered labelled first, then unlabelled; evaluation points validation first, then
    test. Returns a dict with ``key``, ``params``, ``split`` (index arrays into the data set), ``K1`` (n, n) and
    ``K1_eval`` (v + t, n) of the ambient kernel, ``sqdist`` (n, n) squared distances of the training points,
    ``M`` (normalized kNN Laplacian with the weights ``params["graph_weights"]``, default binary),
    ``K2`` = (M^p + 1e-6 I)^-1 and ``R`` = M^p + 1e-6 I on the training points (:func:`graph_kernels`; call it
    with ``sqdist`` for the other weight convention), ``labelled`` (= 0..l-1), ``Y_L`` (l, P) +-1 targets,
    ``classes`` and encoded labels ``y_train``, ``y_val``, ``y_test``.
    """
    key, par = resolve_parameters(dataset, params)
    sizes = tuple(SPLIT_SIZES[key] if sizes is None else sizes)
    ss = np.random.SeedSequence([int(seed), 6])
    data_seed, split_seed = (int(s.generate_state(1)[0]) for s in ss.spawn(2))
    if X is None:
        X, y = load_dataset(key, data_dir, seed=data_seed)
    y = np.asarray(y, dtype=np.int64)
    X = _preprocess(X, par["preprocess"])
    split = draw_split(y, sizes, split_seed, each_class_labelled=par["each_class_labelled"])
    lab, unl, tst, val = split["labelled"], split["unlabelled"], split["test"], split["validation"]
    train = np.r_[lab, unl]
    ev = np.r_[val, tst]
    classes = np.unique(y)
    enc = np.searchsorted(classes, y)
    Xtr, Xev = X[train], X[ev]
    D_tr = squared_distances(Xtr)
    if par["kernel"] == "linear":
        from scipy import sparse

        K1, K1e = Xtr @ Xtr.T, Xev @ Xtr.T
        K1, K1e = (k.toarray() if sparse.issparse(k) else np.asarray(k, dtype=np.float64) for k in (K1, K1e))
        K1 = 0.5 * (K1 + K1.T)
    elif par["kernel"] == "rbf":
        s2 = 2.0 * float(par["sigma"]) ** 2
        K1 = np.exp(-D_tr / s2)
        K1e = np.exp(-squared_distances(Xev, Xtr) / s2)
    else:
        raise ValueError(f"kernel must be 'linear' or 'rbf', got {par['kernel']!r}")
    graph = graph_kernels(D_tr, par)
    return dict(
        key=key, params=par, split=split, K1=K1, K1_eval=K1e, sqdist=D_tr, **graph, labelled=np.arange(lab.size),
        Y_L=encode_targets(enc[lab], classes.size), classes=classes,
        y_train=enc[train], y_val=enc[val], y_test=enc[tst],
    )
