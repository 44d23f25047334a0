# The study's settings, parsed once (mvl.workflow.settings): typed objects that the rules pass on as params.
# Only light modules are imported while the Snakefile is parsed (settings, the method and data-source
# registries, the sidecar check); the solvers are imported by the jobs.
from snakemake.exceptions import WorkflowError

from mvl.data.sources import source as data_source
from mvl.workflow.methods import FAMILIES
from mvl.workflow.settings import SettingsError, load_study

RES = "results"
try:
    STUDY = load_study(config)
except SettingsError as err:
    raise WorkflowError(f"\nConfig: {err}\n") from None


wildcard_constraints:
    dataset="(?!coreg/|scale[a-z0-9_]*/|peers/|incomplete/)[a-z0-9_]+",  # coreg/, scale/, peers/, incomplete/: their own rules
    seed=r"\d+",
    family="|".join(FAMILIES),


def prepared_path(dataset, seed):
    """The loaded raw data a run needs: one per split where the source has files per split (Caltech-101)."""
    part = int(seed) if STUDY[dataset].source.per_split_files else 0
    return f"{RES}/{dataset}/prepared/part{part}.npz"


def unit_input(w):
    """What a unit reads: the prepared paper dataset (per Caltech-101 split), or the dataset npz."""
    if STUDY[w.dataset].source.is_paper:
        return prepared_path(w.dataset, w.seed)
    return f"{RES}/{w.dataset}/dataset.npz"


def run_targets(dataset):
    """One job per (method family, split seed): every l_c, u_c and method of the family (mvl.workflow.runner)."""
    ds = STUDY[dataset]
    return [f"{RES}/{dataset}/runs/{f}/seed{s}.csv" for f in ds.families for s in ds.seeds]


def report_targets(dataset):
    return [
        f"{RES}/{dataset}/report.ipynb",
        f"{RES}/{dataset}/figures/accuracy_vs_labels.png",
        f"{RES}/{dataset}/figures/accuracy_vs_labels.pdf",
        f"{RES}/{dataset}/figures/optc_weights.png",
        f"{RES}/{dataset}/figures/optc_objective.png",
        f"{RES}/{dataset}/figures/comparison.png",
        f"{RES}/{dataset}/summary.csv",
    ]


SCALE = STUDY.scale  # the scale study (config section `scale`), or None
SCALE_DIR = f"{RES}/{SCALE.folder}" if SCALE is not None else f"{RES}/scale"  # results/scale, results/scale_graph


def scale_targets():
    """The scale report (time, memory and accuracy against n), if the config has a `scale` section with sizes."""
    if SCALE is None:
        return []
    return [f"{SCALE_DIR}/report.ipynb", f"{SCALE_DIR}/figures/scale.png", f"{SCALE_DIR}/results.csv"]


PEERS = STUDY.peers  # the peers study (config section `peers`), or None


def peers_targets():
    """The peers report (MVL-LS against Laplace and Poisson learning on real data), if the config has a `peers`
    section with data sets and seeds."""
    if PEERS is None:
        return []
    return [f"{RES}/peers/report.ipynb", f"{RES}/peers/figures/accuracy.png", f"{RES}/peers/summary.csv"]


INCOMPLETE = STUDY.incomplete  # the incomplete-views study (config section `incomplete`), or None


def incomplete_targets():
    """The incomplete-views report (accuracy against the missing fraction q), if `incomplete` lists data sets."""
    if INCOMPLETE is None:
        return []
    return [f"{RES}/incomplete/report.ipynb", f"{RES}/incomplete/figures/accuracy_vs_q.png",
            f"{RES}/incomplete/summary.csv"]


def coreg_targets():
    """The co-regularization report (Sindhwani & Rosenberg 2008 Tables 2-3), if any dataset is configured."""
    if not STUDY.coreg.datasets or not STUDY.coreg.seeds:
        return []
    return [f"{RES}/coreg/report.ipynb", f"{RES}/coreg/summary.csv"]


def all_report_targets():
    """Every report's targets, the one list that the default target and the index page read: a new report adds its
    targets here (its job is defined like the report of report.smk)."""
    return ([t for d in STUDY.datasets for t in report_targets(d)] + coreg_targets() + scale_targets()
            + peers_targets() + incomplete_targets())


def check_raw_data():
    """The raw files of every paper dataset still to be prepared, of every embedded source that downloads its
    file (mvmnist: in the main study until its dataset.npz exists, in the incomplete-views study always), of the
    SSL benchmarks and of every files source can be obtained, and those already local are intact.

    Offline (data.offline or $MVL_OFFLINE) without a file in the mirror or the cache, this raises a
    WorkflowError with one message naming every missing file, its URL and the mirror option; a local file whose
    checksum (else structural check) fails raises one naming it, its path and both checksums. It only reads
    the mirror and the cache.
    """
    missing_files = [
        f"dataset_settings.{d.name}.files: {p}"
        for d in STUDY.datasets.values()
        if d.data.files is not None
        for p in d.data.files.paths()
        if not os.path.isfile(p)
    ]
    if missing_files:
        raise WorkflowError("\nData files missing; no job was started:\n  " + "\n  ".join(missing_files) + "\n")
    for d in STUDY.datasets.values():
        if d.data.files is not None:  # read and checked once here, so that a bad file stops the run before any job
            from mvl.data.errors import DataIntegrityError
            from mvl.data.files import load_files

            f = d.data.files
            try:
                load_files(dict(f.views), f.labels, kernels=f.kernels, name=d.name)
            except DataIntegrityError as err:
                raise WorkflowError(f"\ndataset_settings.{d.name}.files: {err}\nNo job was started.\n") from None
    todo = sorted(
        {
            d.source.download
            for d in STUDY.datasets.values()
            if d.source.is_paper and not all(os.path.exists(prepared_path(d.name, s)) for s in d.seeds)
        }
    )
    # embedded sources that download their file (mvmnist): in the main study until its dataset.npz is written
    todo += [
        d.source.download
        for d in STUDY.datasets.values()
        if d.source.kind == "embedded" and d.source.download and not os.path.exists(f"{RES}/{d.name}/dataset.npz")
    ]
    if INCOMPLETE is not None:  # the incomplete-views study loads its embedded sources in every run job
        todo += [data_source(d).download for d in INCOMPLETE.datasets if data_source(d).download]
    if set(STUDY.coreg.datasets) - {"lines"} and STUDY.coreg.seeds:
        todo.append("ssl_benchmarks")
    if PEERS is not None:  # the peers study's files (mfeat is embedded)
        todo += [{"uspst": "ssl_benchmarks", "mvmnist": "multiview_mnist"}[d] for d in PEERS.datasets if d != "mfeat"]
    todo = sorted(set(todo))
    if not todo:
        return
    from mvl.data import download

    options = download.DataOptions.from_config({"data": config["data"]}, base_dir=os.getcwd())
    try:
        download.verify_available(todo, options)  # presence, then each local file's checksum (else its structure)
    except download.DataIntegrityError as err:
        raise WorkflowError(f"\nRaw data corrupted; no job was started.\n\n{err}\n") from None
    except download.DataError as err:
        hint = (
            "To run without them, leave out the datasets that need them, e.g. --config 'datasets=[mfeat]' "
            "(datasets=[] runs only the co-regularization benchmarks)."
        )
        raise WorkflowError(f"\nRaw data missing; no job was started.\n\n{err}\n{hint}\n") from None
