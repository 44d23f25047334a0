import copy
import json
import sys

from snakemake.utils import validate

# The interpreter that runs Snakemake also runs every step (the venv or conda env of the package).
PYTHON = sys.executable
RES = "results"
DATASETS = list(config["datasets"])
_SHARED = ("datasets", "data", "dataset_settings", "profile")
_DATASET_SCHEMA = os.path.join(workflow.basedir, "workflow", "schemas", "dataset.schema.yaml")


wildcard_constraints:
    dataset="(?!coreg/)[a-z0-9_]+",  # results/coreg/ belongs to the co-regularization rules
    seed=r"\d+",
    lc=r"\d+",
    uc=r"\d+|all",
    view="[A-Za-z0-9_]+",
    method="[a-z0-9_]+",


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


def u_max(dataset):
    """Largest unlabelled count per class: fixes the nested layout of every draw ("all", the whole remaining
    pool, takes that block and everything after the labelled samples)."""
    d = dcfg(dataset)
    counts = list(d["unlabelled_per_class"]) + list(d["ablation"]["unlabelled_per_class"]) + [0]
    return max(u for u in counts if u != "all")


PAPER_SOURCES = ("flowers17", "caltech101", "cub")


def is_paper(dataset):
    """Paper datasets (Section 7.2) come with their own protocols and are loaded by mvl.paper_datasets."""
    return dcfg(dataset)["source"] in PAPER_SOURCES


def prepared_path(dataset, seed):
    """The loaded raw data a run needs: one per Caltech-101 split (its own kernel files), else one."""
    part = int(seed) if dcfg(dataset)["source"] == "caltech101" else 0
    return f"{RES}/{dataset}/prepared/part{part}.pkl"


def run_inputs(w):
    """Inputs of run/select: the prepared paper dataset, or dataset npz + split + per-view kernels."""
    if is_paper(w.dataset):
        return {"prepared": prepared_path(w.dataset, w.seed)}
    method = getattr(w, "method", "")
    return {
        "data": f"{RES}/{w.dataset}/dataset.npz",
        "split": f"{RES}/{w.dataset}/splits/seed{w.seed}.json",
        "kernels": [f"{RES}/{w.dataset}/kernels/seed{w.seed}/{v}.npz" for v in method_views(w.dataset, method)],
    }


def run_args(w, input):
    """Command-line arguments for the inputs of :func:`run_inputs`."""
    if is_paper(w.dataset):
        d = dcfg(w.dataset)
        return f"--prepared {input.prepared} --source {d['source']} --views '{json.dumps(d['views'])}'"
    return f"--dataset-npz {input.data} --split {input.split} --kernels {' '.join(input.kernels)}"


def run_params(dataset):
    """Parameters of every run of one dataset, as JSON for the command line."""
    d = dcfg(dataset)
    return json.dumps(
        {
            "gammas": d["gammas"],
            "grid": d["grid"],
            "graph": d["graph"],
            "n_val_per_class": d["n_val_per_class"],
            "u_max": u_max(dataset),
            "svc_C": d["svc_C"],
            "optc": d["optc"],
            "draw_seed": d.get("draw_seed", 0),
            "comparison": d.get("comparison", {}),
        },
        sort_keys=True,
    )


# Where raw data come from (cache, mirror, URLs) does not change what they are (files are verified),
# so the options reach the jobs through the environment, not as params that would trigger reruns.
os.environ.update(MVL_DATA_OPTIONS=json.dumps(config["data"], sort_keys=True))


SELECTED_METHODS = ("mvl_ls_cv", "mvl_ls_cvgraph", "mvl_ls_ablation_cv", "mvl_ls_ablation_cvgraph")


def selected_input(w):
    """Runs with validation-selected graph/gammas use the selection made once per split and u_c at
    l_c = grid_labels_per_class (rule select_gammas)."""
    if w.method not in SELECTED_METHODS:
        return []
    lc = dcfg(w.dataset).get("grid_labels_per_class") or w.lc
    return [f"{RES}/{w.dataset}/selected/u{w.uc}/l{lc}/seed{w.seed}.json"]


def method_views(dataset, method):
    return [method[len("view_"):]] if method.startswith("view_") else views(dataset)


DEFAULT_METHODS = {
    "supervised": ["mvl_ls", "mvl_svm", "mvl_binsvm", "svc_sum", "single_views"],
    "semi": ["mvl_ls", "mvl_ls_cv", "mvl_ls_cvgraph", "mvl_svm", "mvl_binsvm", "single_views"],
}


def run_targets(dataset):
    """One job per (split seed, l_c, u_c, method); u_c = 0 is the supervised setting."""
    d = dcfg(dataset)
    out = []
    methods = dict(DEFAULT_METHODS, **d.get("methods", {}))
    semi_lc = d.get("semi_labels_per_class") or d["labels_per_class"]
    for seed in d["seeds"]:
        for lc in d["labels_per_class"]:
            # single_views: each view alone, one job writing one row per view
            for method in methods["supervised"]:
                out.append(f"{RES}/{dataset}/runs/u0/l{lc}/{method}/seed{seed}.csv")
            for uc in d["unlabelled_per_class"] if lc in semi_lc else []:
                for method in methods["semi"]:
                    out.append(f"{RES}/{dataset}/runs/u{uc}/l{lc}/{method}/seed{seed}.csv")
        for lc in d["optc"]["labels_per_class"]:
            for it in d["optc"]["iterations"]:
                out.append(f"{RES}/{dataset}/runs/u0/l{lc}/mvl_ls_optc{it}/seed{seed}.csv")
        comparison = d.get("comparison") or {}
        for lc in comparison.get("labels_per_class", []):
            for method in comparison.get("methods", []):
                out.append(f"{RES}/{dataset}/runs/u0/l{lc}/{method}/seed{seed}.csv")
        for lc in d["ablation"]["labels_per_class"]:
            for uc in d["ablation"]["unlabelled_per_class"]:
                for method in d["ablation"].get("methods", ["mvl_ls_ablation"]):
                    out.append(f"{RES}/{dataset}/runs/u{uc}/l{lc}/{method}/seed{seed}.csv")
    return sorted(set(out))


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


def _check_raw_data():
    """Before any job: the raw files of every paper dataset still to be prepared can be obtained.

    Offline (data.offline or $MVL_OFFLINE) without a file in the mirror or the cache, this stops the run
    with one message naming the missing files, their URLs and the mirror option.
    """
    todo = sorted(
        {
            dcfg(d)["source"]
            for d in DATASETS
            if is_paper(d) and not all(os.path.exists(prepared_path(d, s)) for s in dcfg(d)["seeds"])
        }
    )
    coreg = config.get("coreg", {})
    if set(coreg.get("datasets", [])) - {"lines"} and coreg.get("seeds"):
        todo.append("ssl_benchmarks")
    if not todo:
        return
    from mvl import download

    options = download.DataOptions.from_config({"data": config["data"]}, base_dir=workflow.basedir)
    try:
        download.check_available(todo, options)
    except download.DataError as err:
        hint = (
            "To run without them, leave out the datasets that need them, e.g. --config 'datasets=[mfeat]' "
            "(datasets=[] runs only the co-regularization benchmarks)."
        )
        sys.stderr.write(f"\nRaw data missing; no job was started.\n\n{err}\n{hint}\n\n")
        sys.exit(1)


# Before the DAG is built: outputs whose content no longer matches their checksum sidecar (mvl.io) are
# deleted, one line each on stderr, so that they and everything downstream are recomputed.
if workflow.is_main_process:
    from mvl.io import verify_outputs

    verify_outputs(RES, stream=sys.stderr)
_check_raw_data()
