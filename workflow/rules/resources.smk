# The functions behind the rules' `resources:` (mem_mb, runtime in minutes), estimated from each job's problem
# size, for cluster execution (profiles/slurm). Included before the rule files, which name them in their
# `resources:` (e.g. mem_mb=run_mem_mb in the run rule). Local runs ignore mem_mb and runtime unless --resources
# caps them.
#
# Sizes: P classes, m views, n = training points of the job (labelled + unlabelled + validation, per
# class, times two for Caltech-101's flipped copies), t test points, N the whole data set.
#  - a run unit holds the split's kernels (m N_pool (N_pool + t) float64, or the prepared paper
#    data) plus the structured MVL-LS solve of its largest run: about 4 m n^2 float64 (kernels, Laplacians, eigenvectors,
#    work space), the coupled (l + n)^2 system, and the m t n test kernels; measured reference: n = 2040,
#    m = 10 peaks at 1.19 GiB for the whole process (README, benchmarks).
#  - prepare (paper datasets) loads the raw kernels once: up to ~1.1 GB for Caltech-101 (10 views).
# Memory = 512 MB (Python, numpy, scipy, scikit-learn) + 1.25 x the estimate, rounded up to 256 MB,
# times the attempt number (profiles/slurm retries a failed job once with twice the memory).
# Precedence: --set-resources RULE:mem_mb=... / runtime=... (command line or profile) wins over these.
import math as _math

# sizes of a source the registry does not know (a researcher's own files): generous
_UNKNOWN_SOURCE = {"classes": 200, "total": 12000, "test": 6000}
_MB = 1e6
_F8 = 8  # bytes per float64


def _sizes(dataset):
    """Classes, images in the data set, test and training images per split, views, copies per image."""
    d = STUDY[dataset]
    src = d.source
    s = dict(_UNKNOWN_SOURCE) if src.classes is None else {"classes": src.classes, "total": src.total}
    for key in ("test", "train"):
        if getattr(src, key) is not None:
            s[key] = getattr(src, key)
    if d.data.protocol.type == "random":
        s["test"] = s["classes"] * d.data.protocol.n_test_per_class
    s.setdefault("train", s["total"] - s["test"])
    s["m"] = len(d.data.views)
    s["flip"] = 2 if src.name == "caltech101" else 1
    return d, s


def _n_points(dataset, lc, uc):
    """Training points of one job: labelled + unlabelled + validation per class (flipped copies count)."""
    d, s = _sizes(dataset)
    if uc == "all":  # the whole pool of the class
        return s["train"], int(lc) * s["classes"] * s["flip"]
    per_class = int(lc) + int(uc) + d.data.n_val_per_class
    return min(s["classes"] * per_class * s["flip"], s["train"]), int(lc) * s["classes"] * s["flip"]


def _loaded_mb(dataset):
    """What a run/select job loads: the split's kernels, or the prepared paper data."""
    d, s = _sizes(dataset)
    if d.data.source == "cub":
        image = s["total"] ** 2 * _F8 if d.data.image_view else 0
        return (s["total"] * 312 * _F8 + image) / _MB
    return s["m"] * s["train"] * (s["train"] + s["test"]) * _F8 / _MB


def _solver_mb(dataset, lc, uc):
    _, s = _sizes(dataset)
    n, l = _n_points(dataset, lc, uc)
    return (4 * s["m"] * n * n + 2 * (l + n) ** 2 + s["m"] * s["test"] * n) * _F8 / _MB


def _fit_seconds(dataset, lc, uc):
    """One structured MVL-LS fit, O(m n^3): about 25 s at n = 2040, m = 10 on one busy core (measured)."""
    _, s = _sizes(dataset)
    n, _ = _n_points(dataset, lc, uc)
    return 30.0 * (s["m"] / 10) * (n / 2040) ** 3


def _mem(estimate_mb, attempt):
    return int(256 * _math.ceil((512 + 1.25 * estimate_mb) / 256)) * attempt


def _minutes(seconds, attempt, floor=10):
    """Wall time: 60 s start-up (Snakemake in the job, imports) + 3 x the estimate, at least ``floor``."""
    return max(floor, _math.ceil((60 + 3 * seconds) / 60)) * attempt


def _largest_task(dataset, family):
    """(l_c, u_c) of the unit's largest training set."""
    tasks = STUDY[dataset].tasks_of(family)
    return max(((lc, uc) for lc, uc, _ in tasks), key=lambda t: _n_points(dataset, *t)[0])


def run_mem_mb(wildcards, attempt):
    """A unit holds the split's kernels (or the prepared paper data) and one solve at a time."""
    lc, uc = _largest_task(wildcards.dataset, wildcards.family)
    return _mem(_loaded_mb(wildcards.dataset) + _solver_mb(wildcards.dataset, lc, uc), attempt)


def run_runtime(wildcards, attempt):
    """The unit's cost in fits (mvl.workflow.settings.DatasetSettings.unit_cost: its runs and validation grids, each scaled to
    its size) times one fit at the largest size."""
    lc, uc = _largest_task(wildcards.dataset, wildcards.family)
    fits = STUDY[wildcards.dataset].unit_cost(wildcards.family, lambda l, u: _n_points(wildcards.dataset, l, u)[0])
    return _minutes(fits * _fit_seconds(wildcards.dataset, lc, uc), attempt)


def prepare_mem_mb(wildcards, attempt):
    """Rule prepare: the raw files (float32 or float64) and the float64 arrays built from them."""
    return _mem(2 * _loaded_mb(wildcards.dataset), attempt)


def per_attempt(value):
    """A fixed resource (MB or minutes) times the attempt number, for the rules whose jobs are small."""
    return lambda wildcards, attempt: value * attempt


# the peers study (peers.smk): n points and m views of each data set (before points_per_class)
_PEERS_SIZES = {"mfeat": (2000, 10, 6), "uspst": (2007, 10, 1), "mvmnist": (5000, 10, 4)}


def _peers_points(dataset):
    n, classes, m = _PEERS_SIZES[dataset]
    if PEERS.points_per_class is not None:
        n = min(n, classes * PEERS.points_per_class)
    return n, m


def peers_mem_mb(wildcards, attempt):
    """A peers job: the structured MVL-LS solve, about 4 m n^2 float64 (kernels, Laplacians, eigenvectors)."""
    n, m = _peers_points(wildcards.pds)
    return _mem(4 * m * n * n * _F8 / _MB, attempt)


def peers_runtime(wildcards, attempt):
    """Per l_c (USPST's BNS split one more) a structured fit on the m views for mvl_ls and mvl_ls_graph, one on a
    single view for mvl_ls_concat (1/m of it); the graph methods take seconds."""
    n, m = _peers_points(wildcards.pds)
    settings = len(PEERS.labels_per_class) + (wildcards.pds == "uspst")
    fits = sum(x in PEERS.methods for x in ("mvl_ls", "mvl_ls_graph")) + ("mvl_ls_concat" in PEERS.methods) / m
    return _minutes(settings * fits * 30.0 * (m / 10) * (n / 2040) ** 3, attempt)
