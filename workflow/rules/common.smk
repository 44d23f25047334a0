import copy

from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

from mvl.workflow.methods import FAMILIES
from mvl.workflow.runner import PAPER_SOURCES, unit_tasks

RES = "results"
DATASETS = list(config["datasets"])
_SHARED = ("datasets", "data", "dataset_settings", "profile")
_DATASET_SCHEMA = os.path.join(workflow.basedir, "workflow", "schemas", "dataset.schema.yaml")


wildcard_constraints:
    dataset="(?!coreg/)[a-z0-9_]+",  # results/coreg/ belongs to the co-regularization rules
    seed=r"\d+",
    family="|".join(FAMILIES),


def _merge(base, over):
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = copy.deepcopy(value)
    return base


def _dataset_settings(name):
    if name not in config["dataset_settings"]:
        raise ValueError(
            f"dataset {name!r} is listed in `datasets` but has no entry in `dataset_settings` "
            f"(known: {sorted(config['dataset_settings'])})"
        )
    merged = {k: copy.deepcopy(v) for k, v in config.items() if k not in _SHARED}
    _merge(merged, config["dataset_settings"][name])
    validate(merged, _DATASET_SCHEMA)
    if merged["protocol"]["type"] == "random" and "n_test_per_class" not in merged["protocol"]:
        raise ValueError(f"dataset_settings.{name}.protocol: type random needs n_test_per_class")
    return merged


DCFG = {name: _dataset_settings(name) for name in DATASETS}


def dcfg(dataset):
    """Settings of one dataset: dataset_settings.<name> merged over the top-level defaults."""
    return DCFG[dataset] if dataset in DCFG else _dataset_settings(dataset)


def views(dataset):
    return list(dcfg(dataset)["views"])




def is_paper(dataset):
    """Paper datasets (Section 7.2) come with their own protocols and are loaded by mvl.data.paper."""
    return dcfg(dataset)["source"] in PAPER_SOURCES


def prepared_path(dataset, seed):
    """The loaded raw data a run needs: one per Caltech-101 split (its own kernel files), else one."""
    part = int(seed) if dcfg(dataset)["source"] == "caltech101" else 0
    return f"{RES}/{dataset}/prepared/part{part}.pkl"


def unit_input(w):
    """What a unit reads: the prepared paper dataset (per Caltech-101 split), or the dataset npz."""
    if is_paper(w.dataset):
        return prepared_path(w.dataset, w.seed)
    return f"{RES}/{w.dataset}/dataset.npz"


def families(dataset):
    """Method families with at least one run for this dataset (one job per family and split)."""
    return [f for f in FAMILIES if unit_tasks(dcfg(dataset), f)]


def run_targets(dataset):
    """One job per (method family, split seed): every l_c, u_c and method of the family (mvl.workflow.runner)."""
    return [f"{RES}/{dataset}/runs/{f}/seed{s}.csv" for f in families(dataset) for s in dcfg(dataset)["seeds"]]


# Where raw data come from (cache, mirror, URLs) does not change what they are (files are verified): the jobs
# read the download options from the config their script receives (mvl.workflow.jobs), not from params, which
# would trigger reruns.


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


COREG = config.get("coreg", {})
COREG_DATASETS = list(COREG.get("datasets", []))


def coreg_targets():
    """The co-regularization report (Sindhwani & Rosenberg 2008 Tables 2-3), if any dataset is configured."""
    if not COREG_DATASETS or not COREG.get("seeds"):
        return []
    return [f"{RES}/coreg/report.ipynb", f"{RES}/coreg/summary.csv"]


def check_raw_data():
    """The raw files of every paper dataset still to be prepared (and of the SSL benchmarks) can be obtained.

    Offline (data.offline or $MVL_OFFLINE) without a file in the mirror or the cache, this raises a
    WorkflowError with one message naming every missing file, its URL and the mirror option. It only reads
    the mirror and the cache.
    """
    todo = sorted(
        {
            dcfg(d)["source"]
            for d in DATASETS
            if is_paper(d) and not all(os.path.exists(prepared_path(d, s)) for s in dcfg(d)["seeds"])
        }
    )
    if set(COREG_DATASETS) - {"lines"} and COREG.get("seeds"):
        todo.append("ssl_benchmarks")
    if not todo:
        return
    from mvl.data import download

    options = download.DataOptions.from_config({"data": config["data"]}, base_dir=workflow.basedir)
    try:
        download.check_available(todo, options)
    except download.DataError as err:
        hint = (
            "To run without them, leave out the datasets that need them, e.g. --config 'datasets=[mfeat]' "
            "(datasets=[] runs only the co-regularization benchmarks)."
        )
        raise WorkflowError(f"\nRaw data missing; no job was started.\n\n{err}\n{hint}\n") from None
