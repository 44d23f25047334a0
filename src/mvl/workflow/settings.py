"""The study's settings, parsed once: typed, immutable objects built from the validated config.

:func:`load_study` takes the merged config (``config/config.yaml`` and a profile's overlays, validated against
``workflow/schemas/config.schema.yaml``) and returns a :class:`Study`: one :class:`DatasetSettings` per dataset
(``dataset_settings.<name>`` merged over the top-level defaults; nested keys merged, lists replaced) and the
co-regularization settings. Every method name is checked against the method registry
(:mod:`mvl.workflow.methods`) and every source against the data-source registry (:mod:`mvl.data.sources`), here,
once, with an error that names the config key. Every later layer receives these objects, not dicts:

- a rule ``run`` job gets a :class:`Unit` (:meth:`DatasetSettings.unit`): the data it draws from
  (:class:`DataSpec`), its runs (l_c, u_c, method) and the :class:`RunSettings` its methods read
  (:data:`mvl.workflow.methods.RUNS`), nothing else, so that changing one family's settings reruns only its units
  (Snakemake compares a rule's params between runs; these are named tuples, which it records);
- the within-view graph is a :class:`GraphSpec`, which gives the estimators' keyword arguments
  (:meth:`GraphSpec.estimator_params`, every graph parameter explicit) and the report's labels
  (:attr:`GraphSpec.label`, :meth:`GraphSpec.describe`); the graph of eq 60-64, M_W = (L^i)^p per view;
- the report gets :class:`ReportSettings` (:meth:`DatasetSettings.report_settings`), which states the graph of
  every scope.

No paper section (workflow configuration; the graph is that of Section 4.2, eq 60-64).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import NamedTuple

from ..data.sources import source as data_source
from . import methods as registry

__all__ = ["GraphSpec", "Gammas", "Grid", "OptCSettings", "ComparisonSettings", "KernelSpec", "Protocol",
           "FilesSpec", "DataSpec", "RunSettings", "Unit", "ReportSettings", "DatasetSettings", "CoregSettings",
           "Study", "ScaleSettings", "SCALE_METHODS", "PeersSettings", "PEER_METHODS", "PEER_DATASETS",
           "SettingsError", "load_study", "dataset_settings", "ALL", "IncompleteSettings", "INCOMPLETE_PATTERNS"]

ALL = "all"
"""u_c meaning every pool sample that is neither labelled nor validation (stored as -1 in the tables)."""


class SettingsError(ValueError):
    """A config value that the schema cannot judge: an unknown method or source, a missing key."""


class GraphSpec(NamedTuple):
    """The within-view graph (eq 60-64): Laplacian ``laplacian`` ("normalized" I - D^-1/2 W D^-1/2, or
    "unnormalized" D - W) of dense kernel weights W = K (``n_neighbors`` None, the paper, Section 7.1) or of a
    symmetrised kNN graph with ``weights`` "kernel" or "binary" on its edges, raised to ``laplacian_power`` p."""

    laplacian: str = "normalized"
    n_neighbors: int | None = None
    laplacian_power: int = 1
    weights: str = "kernel"

    def estimator_params(self):
        """The graph keywords of the MVL estimators, every one explicit (no estimator default is relied on)."""
        return dict(laplacian=self.laplacian, n_neighbors=self.n_neighbors, laplacian_power=self.laplacian_power,
                    graph_weights=self.weights)

    @property
    def label(self):
        """The results' ``graph`` column: ``normalized-dense`` (the paper's graph), ``normalized-knn10-p2``,
        ``normalized-knn10bin-p2`` (binary weights)."""
        kind = "dense" if not self.n_neighbors else f"knn{int(self.n_neighbors)}" + (
            "bin" if self.weights == "binary" else "")
        return f"{self.laplacian}-{kind}" + ("" if self.laplacian_power == 1 else f"-p{self.laplacian_power}")

    def describe(self):
        """In words, for the report: e.g. "normalized Laplacian of dense kernel weights W = K (the paper's), p = 1"."""
        if not self.n_neighbors:
            what = "dense kernel weights W = K (the paper's)"
        else:
            what = f"a symmetrised {self.n_neighbors}-NN graph with {self.weights} edge weights"
        return f"{self.laplacian} Laplacian of {what}, p = {self.laplacian_power}"

    def short(self):
        """In a few words, for lists of graphs: e.g. "dense W = K, p = 1" or "10-NN, binary weights, p = 2"."""
        what = "dense W = K" if not self.n_neighbors else f"{self.n_neighbors}-NN, {self.weights} weights"
        return f"{what}, p = {self.laplacian_power}"

    def with_knn(self, n_neighbors, laplacian_power):
        """This graph with another kNN size and power (a candidate of the validation grid)."""
        return self._replace(n_neighbors=n_neighbors, laplacian_power=int(laplacian_power))


class Gammas(NamedTuple):
    """(gamma_A, gamma_B, gamma_W) of eq 67-68 under the estimators' names (config: ``gammas: {A, B, W}``), so that
    ``gammas._asdict()`` are an MVL estimator's keyword arguments: the configured values, or a grid point chosen on
    validation (:class:`mvl.workflow.experiments.Choice`)."""

    gamma_A: float
    gamma_B: float
    gamma_W: float


class Grid(NamedTuple):
    """The validation grid (Section 7.3): gamma values, the graphs tried (the configured one first), and the
    l_c at which the selection is made once per split and u_c (None: at every l_c)."""

    A: tuple
    B: tuple
    W: tuple
    graphs: tuple  # GraphSpec, the configured graph first
    labels_per_class: int | None = None

    @property
    def size(self):
        return len(self.graphs) * len(self.A) * len(self.B) * len(self.W)


class OptCSettings(NamedTuple):
    """MVL-LS-optC (Section 6): runs at these l_c, one method per iteration count; restarts, sphere radius,
    tolerance and seed."""

    labels_per_class: tuple
    iterations: tuple
    n_restarts: int
    alpha: float = 1.0
    tol: float = 1e-8
    seed: int = 0


class ComparisonSettings(NamedTuple):
    """The related systems beside MVL: at these l_c, these methods, and their parameters."""

    labels_per_class: tuple
    methods: tuple
    mvml_lambda: float = 0.1
    mvml_eta: float = 1.0
    mvml_iterations: int = 10
    perceptron_epochs: int = 10


class KernelSpec(NamedTuple):
    """Per-view kernel, named as the estimators' ``kernel``: "rbf" (Gaussian; bandwidth sigma "median", "mean" or
    a value; on standardised features if ``standardize``), "linear", or "precomputed" (the data hold full kernel
    matrices)."""

    type: str
    bandwidth: object = "median"
    standardize: bool = True

    def describe(self):
        if self.type == "rbf":
            return (f"Gaussian, bandwidth {self.bandwidth} of the training pool's pairwise distances"
                    + (", standardised features" if self.standardize else ""))
        if self.type == "linear":
            return "linear" + (", standardised features" if self.standardize else "")
        return "precomputed kernel matrices"


class Protocol(NamedTuple):
    """"random": a stratified test set of ``n_test_per_class`` per class per seed; "official": the data set's
    own splits."""

    type: str
    n_test_per_class: int | None = None


class FilesSpec(NamedTuple):
    """The ``files`` source: view name -> file, the labels file, and whether the files hold kernels."""

    views: tuple  # (name, path) pairs
    labels: str
    kernels: bool = False

    def paths(self):
        return [p for _, p in self.views] + [self.labels]


class DataSpec(NamedTuple):
    """What a unit's draws come from: the dataset and its source, the views, the protocol and kernel, the draw
    sizes (validation per class, the largest u_c for nested draws), the seed of the label draws within an
    official split, and the source's own options."""

    dataset: str
    source: str
    views: tuple
    protocol: Protocol
    kernel: KernelSpec
    n_val_per_class: int
    u_max: int
    draw_seed: int = 0
    image_view: str | None = None
    files: FilesSpec | None = None


class RunSettings(NamedTuple):
    """The settings the methods read (:data:`mvl.workflow.methods.RUNS`); a unit holds only its methods' sections
    (the others None)."""

    graph: GraphSpec
    gammas: Gammas | None = None
    grid: Grid | None = None
    svc_C: float | None = None
    optc: OptCSettings | None = None
    comparison: ComparisonSettings | None = None

    def only(self, sections):
        """These settings with every section not in ``sections`` set to None (the graph is always kept: every row
        names it)."""
        return self._replace(**{f: None for f in self._fields if f != "graph" and f not in sections})


class Unit(NamedTuple):
    """The settings of one rule ``run`` job: every run (l_c, u_c, method) of one method family on one split of
    one dataset (the split is the job's wildcard)."""

    family: str
    data: DataSpec
    tasks: tuple
    run: RunSettings


class ReportSettings(NamedTuple):
    """What a dataset's report states about its run: (setting, value) rows, the graph of every scope included."""

    dataset: str
    source: str
    rows: tuple


def _tuple(values):
    return tuple(values) if values is not None else ()


def _merge(base, over):
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = copy.deepcopy(value)
    return base


_SHARED = ("datasets", "data", "dataset_settings", "profile", "coreg", "scale", "peers", "incomplete")
_REQUIRED = ("source", "views", "protocol", "kernel", "seeds", "n_val_per_class", "labels_per_class",
             "unlabelled_per_class", "graph", "gammas", "grid", "grid_labels_per_class", "ablation", "svc_C", "optc",
             "methods")


@dataclass(frozen=True)
class DatasetSettings:
    """Every setting of one dataset, merged and checked; :meth:`unit` and :meth:`report_settings` give what the
    rules pass on."""

    name: str
    data: DataSpec
    seeds: tuple
    run: RunSettings
    tasks: tuple  # every (l_c, u_c, method) of one split, u_c = 0 the supervised setting

    @property
    def source(self):
        return data_source(self.data.source)

    def tasks_of(self, family):
        """The runs of one unit: (l_c, u_c, method) of ``family``, in a fixed order."""
        if family not in registry.FAMILIES:
            raise ValueError(f"unknown family {family!r}; families are {registry.FAMILIES}")
        return tuple(t for t in self.tasks if registry.method(t[2]).family == family)

    @property
    def families(self):
        """Method families with at least one run (one job per family and split)."""
        return tuple(f for f in registry.FAMILIES if self.tasks_of(f))

    def unit_cost(self, family, n_points):
        """Cost of the unit ``family`` in structured MVL-LS fits, for the cluster resources: the runs' fits (the
        registry's ``Method.fits``), each at its size relative to the largest (``n_points(l_c, u_c)`` gives a
        run's training points), plus the validation grids (0.75 fits per grid point, measured)."""
        tasks = self.tasks_of(family)
        if not tasks:
            return 0.0
        sizes = {(lc, uc): n_points(lc, uc) for lc, uc, _ in tasks}
        big = max(sizes.values())
        fits = sum(registry.method(m).fits * (sizes[lc, uc] / big) ** 3 for lc, uc, m in tasks)
        sel = {uc for lc, uc, m in tasks if registry.method(m).uses_selection}
        if sel:
            grid = self.run.grid
            lc_sel = grid.labels_per_class or max(lc for lc, _, _ in tasks)
            fits += sum(0.75 * grid.size * (n_points(lc_sel, uc) / big) ** 3 for uc in sel)
        return fits

    def unit(self, family):
        """The :class:`Unit` of ``family``: its tasks and only the run settings its methods read."""
        tasks = self.tasks_of(family)
        sections = {s for _, _, m in tasks for s in registry.method(m).reads}
        return Unit(family=family, data=self.data, tasks=tasks, run=self.run.only(sections))

    def report_settings(self):
        """The report's settings table: kernel, fixed gammas and the graph of every scope (the configured graph of
        the fixed-gamma methods and mvl_ls_cv, and the candidates of the validation grid)."""
        run, grid = self.run, self.run.grid
        rows = [("kernel", self.data.kernel.describe()),
                ("fixed gammas", ", ".join(f"{k} = {v:g}" for k, v in run.gammas._asdict().items())),
                ("graph, fixed-gamma methods and selected gammas (paper scope)", run.graph.describe())]
        if grid is not None and len(grid.graphs) > 1:
            rows.append(("graphs of the validation grid (selected-graph scope)",
                         f"{grid.graphs[0].laplacian} Laplacian of: " + "; ".join(g.short() for g in grid.graphs)))
        if grid is not None:
            at = "every l_c" if grid.labels_per_class is None else f"l_c = {grid.labels_per_class}"
            rows.append(("validation grid", f"{grid.size} points ({len(grid.graphs)} graphs x gamma_A {len(grid.A)} "
                                            f"x gamma_B {len(grid.B)} x gamma_W {len(grid.W)}), selected at {at}"))
        return ReportSettings(dataset=self.name, source=self.data.source, rows=tuple(rows))


@dataclass(frozen=True)
class CoregSettings:
    """The co-regularization benchmarks (Sindhwani & Rosenberg 2008) to run, and their split seeds."""

    datasets: tuple = ()
    seeds: tuple = ()


SCALE_METHODS = tuple(registry.SCALE_METHODS)
"""Methods of the scale profile (:data:`mvl.workflow.methods.SCALE_METHODS`); "nystrom_<M>" names nystrom with M
centres."""


class ScaleSettings(NamedTuple):
    """The config section ``scale``: sizes, methods, the hyperparameter preset, the data seed, labelled
    points per class, cg's tolerance, iteration limit and preconditioner centres, the largest n of "structured",
    the kNN rule (:func:`mvl.workflow.scale.graph_neighbors`)."""

    sizes: tuple
    methods: tuple
    preset: str
    seed: int
    labels: int
    tol: float
    max_iter: int
    centres: int
    structured_max: int
    neighbors: str = "scaled"

    def runs(self):
        """(method name, n) of every fit: "structured" only up to structured_max, nystrom_<M> only where M <= n."""
        out = []
        for n in self.sizes:
            for name in self.methods:
                base, _, M = name.partition("_")
                if (base == "structured" and n > self.structured_max) or (M and int(M) > n):
                    continue
                out.append((name, n))
        return out

    def fit_settings(self, name):
        """Keyword arguments of :func:`mvl.workflow.scale.write_fit` for the method ``name``."""
        M = name.partition("_")[2]
        return dict(preset=self.preset, seed=self.seed, labels=self.labels, tol=self.tol, max_iter=self.max_iter,
                    n_components=int(M) if M else self.centres, neighbors=self.neighbors)


def _scale(sc):
    if not sc or not sc.get("sizes"):
        return None
    methods = _tuple(sc.get("methods") or ["structured", "cg", "nystrom_1000", "labelonly", "labelspreading",
                                           "ridge"])
    for name in methods:
        base, _, M = name.partition("_")
        if base not in SCALE_METHODS or (base == "nystrom") != bool(M) or (M and not M.isdigit()):
            raise SettingsError(f"scale.methods: unknown method {name!r}; one of {SCALE_METHODS} (nystrom as "
                                "nystrom_<M>, M the number of centres)")
    return ScaleSettings(_tuple(int(n) for n in sc["sizes"]), methods, sc.get("preset", "graph"),
                         int(sc.get("seed", 1)), int(sc.get("labels_per_class", 5)), float(sc.get("tol", 1e-6)),
                         int(sc.get("max_iter", 300)), int(sc.get("centres", 1000)),
                         int(sc.get("structured_max", 8000)), sc.get("neighbors", "scaled"))


PEER_METHODS = ("mvl_ls", "mvl_ls_concat", "mvl_ls_graph", "laplace", "poisson", "laplace_sum", "poisson_sum",
                "labelspreading")
"""Methods of the peers study (:mod:`mvl.workflow.peers`): MVL-LS with the package defaults (on the views, and on the
concatenated views as one view) and with the graph-regime setting, graphlearning's Laplace and Poisson
learning on the kNN graph of the concatenated views and on the sum of the per-view kNN graphs (``_sum``),
scikit-learn's LabelSpreading."""
PEER_DATASETS = ("mfeat", "uspst", "mvmnist")
"""Data sets of the peers study: UCI Multiple Features (embedded), USPST (Sindhwani's file, the BNS-2006 splits),
multi-view MNIST (through the data options)."""


class PeersSettings(NamedTuple):
    """The config section ``peers``: MVL-LS against Laplace and Poisson learning on real data,
    transductive. Data sets, seeds (one labelled draw each), labelled points per class, methods, k of the kNN
    graphs, and ``points_per_class`` (None: every point of the data set; an integer: a seeded stratified subset of
    at most that many points per class, for the quick profiles)."""

    datasets: tuple
    seeds: tuple
    labels_per_class: tuple
    methods: tuple
    n_neighbors: int = 10
    points_per_class: int | None = None

    def runs(self):
        """(dataset, seed) of every job."""
        return [(d, s) for d in self.datasets for s in self.seeds]

    def for_run(self, dataset, seed):
        """The settings one job reads: these, with its one data set and seed (a job's params then change only with
        what changes its result, not when data sets or seeds are added)."""
        return self._replace(datasets=(dataset,), seeds=(int(seed),))


def _peers(sc):
    """The :class:`PeersSettings` of the config section ``peers`` (None without data sets or seeds)."""
    if not sc or not sc.get("datasets") or not sc.get("seeds"):
        return None
    for key, allowed in (("datasets", PEER_DATASETS), ("methods", PEER_METHODS)):
        bad = [v for v in sc.get(key) or [] if v not in allowed]
        if bad:
            raise SettingsError(f"peers.{key}: unknown {bad}; one of {allowed}")
    methods = _tuple(sc.get("methods") or ["mvl_ls", "mvl_ls_concat", "laplace", "poisson", "laplace_sum",
                                           "poisson_sum", "labelspreading"])
    lcs = _tuple(int(v) for v in sc.get("labels_per_class") or [1, 5])
    k = int(sc.get("n_neighbors", 10))
    ppc = sc.get("points_per_class")
    ppc = None if ppc is None else int(ppc)
    if k < 1:
        raise SettingsError(f"peers.n_neighbors: must be >= 1, got {k}")
    if min(lcs) < 1:
        raise SettingsError(f"peers.labels_per_class: must be >= 1, got {list(lcs)}")
    if ppc is not None and ppc <= max(lcs):
        raise SettingsError(f"peers.points_per_class: {ppc} leaves no unlabelled point of a class at l_c = "
                            f"{max(lcs)} (labels_per_class); use more points per class or null (every point)")
    return PeersSettings(_tuple(sc["datasets"]), _tuple(int(s) for s in sc["seeds"]), lcs, methods, k, ppc)


# ------------------------------------------------------------------ the incomplete-views study

INCOMPLETE_PATTERNS = ("random", "class", "block")
"""Missing-view patterns of the incomplete-views study (:func:`mvl.workflow.incomplete.presence_mask`): "random"
(a fraction q of the (sample, view) entries), "class" (a fraction q of the (class, view) cells, each absent for every
sample of its class), "block" (the same on random blocks of samples instead of classes)."""


class IncompleteSettings(NamedTuple):
    """The config section ``incomplete``: MVL-LS on incomplete views against mean imputation and the
    best single view, for every data set (an embedded source), split seed, pattern and missing fraction q; the
    draw sizes per class (labelled, unlabelled, test), the number of sample blocks of the "block" pattern and the
    gamma_B of the multi-view MVL-LS fits (every other hyperparameter: the package defaults)."""

    datasets: tuple
    q: tuple
    patterns: tuple
    seeds: tuple
    labels_per_class: int = 5
    unlabelled_per_class: int = 50
    test_per_class: int = 100
    n_blocks: int = 10
    gamma_B: float = 0.0  # of the multi-view MVL-LS fits; 0 = the package default

    def runs(self):
        """(data set, seed) of every job."""
        return [(d, s) for d in self.datasets for s in self.seeds]

    def job(self):
        """What one job reads (the rule's params): these settings without the lists of data sets and seeds (its
        wildcards), so that adding a seed or a data set reruns no finished job."""
        return self._replace(datasets=(), seeds=())


def _incomplete(sec):
    """:class:`IncompleteSettings` of the config section ``incomplete`` (None: absent or no data set)."""
    if not sec or not sec.get("datasets"):
        return None
    where = "incomplete"
    for name in sec["datasets"]:
        try:
            src = data_source(name)
        except ValueError as err:
            raise SettingsError(f"{where}.datasets: {err}") from None
        if src.kind != "embedded":
            raise SettingsError(f"{where}.datasets: {name!r} is a {src.kind} source; the incomplete-views study "
                                "runs on the embedded multi-view sources (feature views), e.g. mfeat, mvmnist")
    q = _tuple(float(v) for v in sec.get("q", [0.0, 0.2, 0.4, 0.6]))
    if not q or any(not 0.0 <= v < 1.0 for v in q) or len(set(q)) != len(q):
        raise SettingsError(f"{where}.q: missing fractions must be distinct values in [0, 1), got {list(q)}")
    patterns = _tuple(sec.get("patterns", ["random", "class"]))
    unknown = [p for p in patterns if p not in INCOMPLETE_PATTERNS]
    if unknown or not patterns:
        raise SettingsError(f"{where}.patterns: unknown pattern(s) {unknown}; one of {INCOMPLETE_PATTERNS}")
    seeds = _tuple(int(s) for s in sec.get("seeds", [0, 1, 2]))
    if not seeds or min(seeds) < 0:
        raise SettingsError(f"{where}.seeds: at least one seed, each >= 0, got {list(seeds)}")
    sizes = {k: int(sec.get(k, d)) for k, d in (("labels_per_class", 5), ("unlabelled_per_class", 50),
                                               ("test_per_class", 100), ("n_blocks", 10))}
    for k, lo in (("labels_per_class", 1), ("unlabelled_per_class", 0), ("test_per_class", 1), ("n_blocks", 1)):
        if sizes[k] < lo:
            raise SettingsError(f"{where}.{k}: must be >= {lo}, got {sizes[k]}")
    gamma_B = float(sec.get("gamma_B", 0.0))
    if not gamma_B >= 0:
        raise SettingsError(f"{where}.gamma_B: must be >= 0, got {gamma_B}")
    return IncompleteSettings(datasets=_tuple(sec["datasets"]), q=q, patterns=patterns, seeds=seeds, **sizes,
                              gamma_B=gamma_B)


@dataclass(frozen=True)
class Study:
    """The whole run: profile name, the datasets (in the config's order), co-regularization, the scale study, the
    peers study, the incomplete-views study."""

    profile: str
    datasets: dict
    coreg: CoregSettings
    scale: ScaleSettings | None = None
    peers: PeersSettings | None = None
    incomplete: IncompleteSettings | None = None  # the incomplete-views study (config section `incomplete`)

    def __getitem__(self, name):
        return self.datasets[name]


def _check_method(name, where, run=None):
    try:
        m = registry.method(name)
    except ValueError as err:
        raise SettingsError(f"{where}: {err}") from None
    if run is not None and m.run not in run:
        raise SettingsError(f"{where}: method {name!r} runs as {m.run!r}, this list takes methods that run as {run}")
    return m


def _tasks(s, where):
    """Every (l_c, u_c, method) of one split; u_c = 0 is the supervised setting (duplicates removed)."""
    out = []
    methods = s["methods"]
    for kind in ("supervised", "semi"):
        for name in methods.get(kind, []):
            _check_method(name, f"{where}.methods.{kind}")
    semi_lc = s.get("semi_labels_per_class") or s["labels_per_class"]
    for lc in s["labels_per_class"]:
        out += [(lc, 0, m) for m in methods.get("supervised", [])]
        for uc in s["unlabelled_per_class"] if lc in semi_lc else []:
            out += [(lc, uc, m) for m in methods.get("semi", [])]
    for lc in s["optc"]["labels_per_class"]:
        out += [(lc, 0, f"mvl_ls_optc{it}") for it in s["optc"]["iterations"]]
    comparison = s.get("comparison") or {}
    for name in comparison.get("methods", []):
        _check_method(name, f"{where}.comparison.methods")
    for lc in comparison.get("labels_per_class", []):
        out += [(lc, 0, m) for m in comparison.get("methods", [])]
    ab = s["ablation"]
    ab_methods = ab.get("methods", ["mvl_ls_ablation"])
    for name in ab_methods:
        _check_method(name, f"{where}.ablation.methods", run=("ablation", "ablation_selected"))
    for lc in ab["labels_per_class"]:
        for uc in ab["unlabelled_per_class"]:
            out += [(lc, uc, m) for m in ab_methods]
    return tuple(dict.fromkeys(out))


def _graph(g):
    return GraphSpec(laplacian=g.get("laplacian", "normalized"), n_neighbors=g.get("n_neighbors"),
                     laplacian_power=int(g.get("laplacian_power", 1)), weights=g.get("weights", "kernel"))


def _grid(grid, graph_config, labels_per_class):
    graph = _graph(graph_config)
    sel = graph_config.get("select") or {}
    graphs = [graph]
    for n_neighbors in sel.get("n_neighbors", []):
        for laplacian_power in sel.get("laplacian_power", [1]):
            cand = graph.with_knn(n_neighbors, laplacian_power)
            if (cand.n_neighbors, cand.laplacian_power) not in [(g.n_neighbors, g.laplacian_power) for g in graphs]:
                graphs.append(cand)
    return Grid(A=tuple(float(v) for v in grid["A"]), B=tuple(float(v) for v in grid["B"]),
                W=tuple(float(v) for v in grid["W"]), graphs=tuple(graphs), labels_per_class=labels_per_class)


def run_settings(s):
    """The :class:`RunSettings` of one dataset's merged settings (a mapping in the config's layout: ``graph``,
    ``gammas``, ``grid``, ``grid_labels_per_class``, ``svc_C``, ``optc``, ``comparison``; absent sections None)."""
    g = s.get("graph") or {}
    opt, cmp_ = s.get("optc"), s.get("comparison")
    return RunSettings(
        graph=_graph(g),
        gammas=Gammas(*(float(s["gammas"][k]) for k in ("A", "B", "W"))) if s.get("gammas") else None,
        grid=_grid(s["grid"], g, s.get("grid_labels_per_class")) if s.get("grid") else None,
        svc_C=float(s["svc_C"]) if s.get("svc_C") is not None else None,
        optc=OptCSettings(labels_per_class=_tuple(opt.get("labels_per_class")),
                          iterations=_tuple(opt.get("iterations")),
                          n_restarts=int(opt.get("n_restarts", 20)), alpha=float(opt.get("alpha", 1.0)),
                          tol=float(opt.get("tol", 1e-8)), seed=int(opt.get("seed", 0))) if opt else None,
        comparison=ComparisonSettings(
            labels_per_class=_tuple(cmp_.get("labels_per_class")), methods=_tuple(cmp_.get("methods")),
            mvml_lambda=float(cmp_.get("mvml_lambda", 0.1)), mvml_eta=float(cmp_.get("mvml_eta", 1.0)),
            mvml_iterations=int(cmp_.get("mvml_iterations", 10)),
            perceptron_epochs=int(cmp_.get("perceptron_epochs", 10))) if cmp_ else None)


def dataset_settings(name, s):
    """The :class:`DatasetSettings` of dataset ``name`` from its merged settings ``s`` (a mapping in the config's
    layout, already validated by the schema)."""
    where = f"dataset_settings.{name}"
    s = dict(s)
    if s.get("source") == "files" and "views" not in s and s.get("files"):
        s["views"] = list(s["files"].get("views", {}))
    missing = [k for k in _REQUIRED if k not in s]
    if missing:
        raise SettingsError(f"{where}: missing {', '.join(missing)} (set them in {where} or at the top level)")
    try:
        src = data_source(s["source"])
    except ValueError as err:
        raise SettingsError(f"{where}.source: {err}") from None
    protocol = Protocol(s["protocol"]["type"], s["protocol"].get("n_test_per_class"))
    if protocol.type == "random" and protocol.n_test_per_class is None:
        raise SettingsError(f"{where}.protocol: type random needs n_test_per_class")
    kind = {"gaussian": "rbf"}.get(s["kernel"]["type"], s["kernel"]["type"])  # "gaussian": the old name of rbf
    kernel = KernelSpec(kind, s["kernel"].get("bandwidth", "median"), bool(s["kernel"].get("standardize", True)))
    files = None
    if src.kind == "files":
        f = s.get("files")
        if not f:
            raise SettingsError(f"{where}: source files needs files: {{views: {{name: path}}, labels: path}}")
        files = FilesSpec(views=tuple((str(k), str(v)) for k, v in f["views"].items()), labels=str(f["labels"]),
                          kernels=bool(f.get("kernels", False)))
        unknown = [v for v in s["views"] if v not in dict(files.views)]
        if unknown:
            raise SettingsError(f"{where}.views: {unknown} have no file in {where}.files.views "
                                f"(it has {list(dict(files.views))})")
        if files.kernels != (kernel.type == "precomputed"):
            raise SettingsError(f"{where}: files.kernels: {str(files.kernels).lower()} needs kernel type "
                                f"{'precomputed' if files.kernels else 'gaussian or linear'}, got {kernel.type!r}")
    elif s.get("files"):
        raise SettingsError(f"{where}.files: only the source files reads files (source is {s['source']!r})")
    counts = list(s["unlabelled_per_class"]) + list(s["ablation"]["unlabelled_per_class"]) + [0]
    data = DataSpec(dataset=name, source=src.name, views=tuple(s["views"]), protocol=protocol, kernel=kernel,
                    n_val_per_class=int(s["n_val_per_class"]), u_max=max(u for u in counts if u != ALL),
                    draw_seed=int(s.get("draw_seed", 0)), image_view=(s.get("loader") or {}).get("image_view"),
                    files=files)
    return DatasetSettings(name=name, data=data, seeds=tuple(s["seeds"]), run=run_settings(s),
                           tasks=_tasks(s, where))


def load_study(config):
    """The :class:`Study` of a merged, schema-validated config (a mapping); raises :class:`SettingsError` naming
    the key of an unknown method or source or of a missing setting."""
    defaults = {k: copy.deepcopy(v) for k, v in config.items() if k not in _SHARED}
    datasets = {}
    for name in config.get("datasets", []):
        if name not in config.get("dataset_settings", {}):
            raise SettingsError(f"dataset {name!r} is listed in `datasets` but has no entry in `dataset_settings` "
                                f"(known: {sorted(config.get('dataset_settings', {}))})")
        merged = _merge(copy.deepcopy(defaults), config["dataset_settings"][name])
        datasets[name] = dataset_settings(name, merged)
    coreg = config.get("coreg") or {}
    return Study(profile=str(config.get("profile") or "default"), datasets=datasets,
                 coreg=CoregSettings(datasets=_tuple(coreg.get("datasets")), seeds=_tuple(coreg.get("seeds"))),
                 scale=_scale(config.get("scale")), peers=_peers(config.get("peers")),
                 incomplete=_incomplete(config.get("incomplete")))
