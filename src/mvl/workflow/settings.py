"""The study's settings, parsed once: typed, immutable objects built from the validated config.

:func:`load_study` takes the merged config (``config/config.yaml`` and a profile's overlays, validated against
``workflow/schemas/config.schema.yaml``) and returns a :class:`Study`: one :class:`DatasetSettings` per dataset
(``dataset_settings.<name>`` merged over the top-level defaults; nested keys merged, lists replaced), the shared
run settings of the main study, and each other study's settings, parsed by the study that owns its config section
(:data:`STUDY_SECTIONS`: ``coreg`` by :mod:`mvl.workflow.coreg_study`, ``scale`` by
:mod:`mvl.workflow.scale_settings`, ``peers`` by :mod:`mvl.workflow.peers_settings`, ``incomplete`` by
:mod:`mvl.workflow.incomplete_settings`; each light, so that parsing stays fast). Every method name is
checked against the method registry (:mod:`mvl.workflow.methods`) and every source against the data-source
registry (:mod:`mvl.data.sources`), here, once, with an error that names the config key. Every later layer
receives these objects, not dicts:

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
from . import coreg_study, incomplete_settings, peers_settings, scale_settings
from . import methods as registry
from .sections import SettingsError, as_tuple

__all__ = ["GraphSpec", "Gammas", "Grid", "OptCSettings", "ComparisonSettings", "KernelSpec", "Protocol",
           "FilesSpec", "DataSpec", "RunSettings", "Unit", "ReportSettings", "DatasetSettings", "Study",
           "STUDY_SECTIONS", "SettingsError", "load_study", "dataset_settings", "run_settings", "ALL"]

ALL = "all"
"""u_c meaning every pool sample that is neither labelled nor validation (stored as -1 in the tables)."""


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


def _merge(base, over):
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = copy.deepcopy(value)
    return base


STUDY_SECTIONS = {"coreg": coreg_study.parse_settings, "scale": scale_settings.parse_settings,
                  "peers": peers_settings.parse_settings, "incomplete": incomplete_settings.parse_settings}
"""Config section -> the parser of the study that owns it (section mapping or None -> the study's settings)."""

_SHARED = ("datasets", "data", "dataset_settings", "profile", *STUDY_SECTIONS)
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
class Study:
    """The whole run: profile name, the datasets (in the config's order), co-regularization, the scale study, the
    peers study, the incomplete-views study."""

    profile: str
    datasets: dict
    coreg: coreg_study.CoregSettings
    scale: scale_settings.ScaleSettings | None = None
    peers: peers_settings.PeersSettings | None = None
    incomplete: incomplete_settings.IncompleteSettings | None = None

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
        optc=OptCSettings(labels_per_class=as_tuple(opt.get("labels_per_class")),
                          iterations=as_tuple(opt.get("iterations")),
                          n_restarts=int(opt.get("n_restarts", 20)), alpha=float(opt.get("alpha", 1.0)),
                          tol=float(opt.get("tol", 1e-8)), seed=int(opt.get("seed", 0))) if opt else None,
        comparison=ComparisonSettings(
            labels_per_class=as_tuple(cmp_.get("labels_per_class")), methods=as_tuple(cmp_.get("methods")),
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
    sections = {key: parse(config.get(key)) for key, parse in STUDY_SECTIONS.items()}
    return Study(profile=str(config.get("profile") or "default"), datasets=datasets, **sections)
