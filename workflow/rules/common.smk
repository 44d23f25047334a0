import json
import sys

# The interpreter that runs Snakemake also runs every step (the venv or conda env of the package).
PYTHON = sys.executable
DATASET = config["dataset"]
VIEWS = list(config["views"])
RES = "results"


wildcard_constraints:
    dataset="[a-z0-9_]+",
    seed=r"\d+",
    lc=r"\d+",
    uc=r"\d+",
    view="[A-Za-z0-9_]+",
    method="[a-z0-9_]+",


def u_max():
    """Largest unlabelled count per class: fixes the nested layout of every draw."""
    return max(list(config["unlabelled_per_class"]) + list(config["ablation"]["unlabelled_per_class"]) + [0])


def run_params():
    """Parameters of every run, as JSON for the command line."""
    return json.dumps(
        {
            "gammas": config["gammas"],
            "grid": config["grid"],
            "laplacian": config["graph"]["laplacian"],
            "n_neighbors": config["graph"].get("n_neighbors"),
            "n_val_per_class": config["n_val_per_class"],
            "u_max": u_max(),
            "svc_C": config["svc_C"],
            "optc": config["optc"],
        },
        sort_keys=True,
    )


def selected_input(w):
    """mvl_ls_cv runs use gammas selected once per split and u_c at l_c = grid_labels_per_class."""
    if w.method != "mvl_ls_cv":
        return []
    lc = config.get("grid_labels_per_class") or w.lc
    return [f"{RES}/{w.dataset}/selected/u{w.uc}/l{lc}/seed{w.seed}.json"]


def method_views(method):
    return [method[len("view_"):]] if method.startswith("view_") else VIEWS


def run_targets(dataset=DATASET):
    """One job per (split seed, l_c, u_c, method); u_c = 0 is the supervised setting."""
    out = []
    for seed in config["seeds"]:
        for lc in config["labels_per_class"]:
            # single_views: each view alone, one job writing one row per view
            for method in ["mvl_ls", "svc_sum", "single_views"]:
                out.append(f"{RES}/{dataset}/runs/u0/l{lc}/{method}/seed{seed}.csv")
            for uc in config["unlabelled_per_class"]:
                for method in ["mvl_ls", "mvl_ls_cv"]:
                    out.append(f"{RES}/{dataset}/runs/u{uc}/l{lc}/{method}/seed{seed}.csv")
        for lc in config["optc"]["labels_per_class"]:
            for it in config["optc"]["iterations"]:
                out.append(f"{RES}/{dataset}/runs/u0/l{lc}/mvl_ls_optc{it}/seed{seed}.csv")
        for lc in config["ablation"]["labels_per_class"]:
            for uc in config["ablation"]["unlabelled_per_class"]:
                out.append(f"{RES}/{dataset}/runs/u{uc}/l{lc}/mvl_ls_ablation/seed{seed}.csv")
    return sorted(set(out))


def report_targets(dataset=DATASET):
    return [
        f"{RES}/{dataset}/report.ipynb",
        f"{RES}/{dataset}/figures/accuracy_vs_labels.png",
        f"{RES}/{dataset}/figures/accuracy_vs_labels.pdf",
        f"{RES}/{dataset}/figures/optc_weights.png",
        f"{RES}/{dataset}/figures/optc_objective.png",
        f"{RES}/{dataset}/summary.csv",
    ]
