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
    dataset="[a-z0-9_]+",
    seed=r"\d+",
    lc=r"\d+",
    uc=r"\d+",
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
    """Largest unlabelled count per class: fixes the nested layout of every draw."""
    d = dcfg(dataset)
    return max(list(d["unlabelled_per_class"]) + list(d["ablation"]["unlabelled_per_class"]) + [0])


def run_params(dataset):
    """Parameters of every run of one dataset, as JSON for the command line."""
    d = dcfg(dataset)
    return json.dumps(
        {
            "gammas": d["gammas"],
            "grid": d["grid"],
            "laplacian": d["graph"]["laplacian"],
            "n_neighbors": d["graph"].get("n_neighbors"),
            "n_val_per_class": d["n_val_per_class"],
            "u_max": u_max(dataset),
            "svc_C": d["svc_C"],
            "optc": d["optc"],
        },
        sort_keys=True,
    )


def data_options():
    """Download/mirror options of the dataset step, as JSON."""
    return json.dumps(config["data"], sort_keys=True)


def selected_input(w):
    """mvl_ls_cv runs use gammas selected once per split and u_c at l_c = grid_labels_per_class."""
    if w.method != "mvl_ls_cv":
        return []
    lc = dcfg(w.dataset).get("grid_labels_per_class") or w.lc
    return [f"{RES}/{w.dataset}/selected/u{w.uc}/l{lc}/seed{w.seed}.json"]


def method_views(dataset, method):
    return [method[len("view_"):]] if method.startswith("view_") else views(dataset)


def run_targets(dataset):
    """One job per (split seed, l_c, u_c, method); u_c = 0 is the supervised setting."""
    d = dcfg(dataset)
    out = []
    for seed in d["seeds"]:
        for lc in d["labels_per_class"]:
            # single_views: each view alone, one job writing one row per view
            for method in ["mvl_ls", "svc_sum", "single_views"]:
                out.append(f"{RES}/{dataset}/runs/u0/l{lc}/{method}/seed{seed}.csv")
            for uc in d["unlabelled_per_class"]:
                for method in ["mvl_ls", "mvl_ls_cv", "single_views"]:
                    out.append(f"{RES}/{dataset}/runs/u{uc}/l{lc}/{method}/seed{seed}.csv")
        for lc in d["optc"]["labels_per_class"]:
            for it in d["optc"]["iterations"]:
                out.append(f"{RES}/{dataset}/runs/u0/l{lc}/mvl_ls_optc{it}/seed{seed}.csv")
        for lc in d["ablation"]["labels_per_class"]:
            for uc in d["ablation"]["unlabelled_per_class"]:
                out.append(f"{RES}/{dataset}/runs/u{uc}/l{lc}/mvl_ls_ablation/seed{seed}.csv")
    return sorted(set(out))


def report_targets(dataset):
    return [
        f"{RES}/{dataset}/report.ipynb",
        f"{RES}/{dataset}/figures/accuracy_vs_labels.png",
        f"{RES}/{dataset}/figures/accuracy_vs_labels.pdf",
        f"{RES}/{dataset}/figures/optc_weights.png",
        f"{RES}/{dataset}/figures/optc_objective.png",
        f"{RES}/{dataset}/summary.csv",
    ]
