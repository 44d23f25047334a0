"""The incomplete-views study: accuracy against the fraction q of missing views.

One rule job takes one (data set, split seed) (:func:`run_seed`): a stratified draw of ``labels_per_class``
labelled, ``unlabelled_per_class`` unlabelled and ``test_per_class`` test samples per class (:func:`draw_split`),
then for every pattern and q one presence mask over the training and test samples together
(:func:`presence_mask`, every sample keeps at least one view; the test samples are masked like the training
samples, so a test point is predicted from the views it has), written into the feature views as NaN rows by the
package's convention (:func:`mvl.data.missing.apply_mask`), and the methods:

- ``mvl_ls_incomplete``: MVL-LS on the incomplete views, package defaults but the configured gamma_B (config
  ``incomplete.gamma_B``; 1e-4 in the profiles, selected on validation draws by ``benchmarks/bench_incomplete.py``;
  the package default is ``gamma_B="auto"``, :func:`package_defaults`), each view standardised on the training
  samples that have it (``Pipeline(StandardScaler(), MVLLeastSquares(views=...))``: the scaler ignores NaN when it
  fits and passes them through, so a missing view stays a NaN row; :mod:`mvl.solvers.incomplete` is the model);
- ``mean_imputation``: scikit-learn's ``SimpleImputer`` (feature means of the training samples) then the same
  pipeline (``keep_empty_features=True``: a column no training sample has is filled with 0, not dropped); where
  more than ~71 % of the training samples lack a view, over half of the pairs sit on the imputed point and the
  median bandwidth is 0, which the estimator refuses: that fit is redone with the mean distance as every view's
  bandwidth, as the estimator's message suggests, and its row says so (``note``);
- ``view_<name>``: each view alone (MVL-LS with one view, Laplacian RLS), fitted on the training samples that have
  it; a test sample lacking that view is predicted as the most frequent class of the labelled training samples
  (ties: the smallest label; with l_c labels in every class that is the first class); the report keeps the best
  view per (pattern, q), chosen on its mean *test* accuracy, like the main report's "best single view";
- ``complete``: the same MVL-LS on the complete data (no mask), once per seed: the reference line, equal to the
  q = 0 rows of ``mvl_ls_incomplete`` (nothing missing).

Every random choice comes from the seed: the split from ``[seed]``, each mask from ``[seed, pattern, 1000 q]``
(:func:`mask_rng`), so a mask does not depend on which other q or patterns are configured. Results: one row per
(pattern, q, method) (:func:`run_seed`), the summary over seeds (:func:`summarize`), the figure
(:func:`accuracy_figure`) and the report ``notebooks/incomplete_report.py``. No paper section (an experiment on the
package's extension of the paper's model to incomplete views; the solver is Theorem 10 restricted to the present
views, :mod:`mvl.solvers.incomplete`).
"""

from __future__ import annotations

import json
import time

import numpy as np

from ..data.missing import apply_mask, mask_at_random
from .figures import new_figure
from .runtime import data_options, execute_notebook, logged
from .incomplete_settings import INCOMPLETE_PATTERNS, IncompleteSettings, parse_settings
from .methods import method as registry_method, methods_for

__all__ = ["INCOMPLETE_PATTERNS", "IncompleteSettings", "parse_settings", "METHODS",
           "draw_split", "mask_rng", "presence_mask", "fit_predict", "fit_complete", "fit_masked", "fit_view",
           "run_seed", "write_seed", "summarize",
           "best_views", "package_defaults", "settings_text", "verdicts", "accuracy_table", "accuracy_figure",
           "incomplete_run", "incomplete_summary", "incomplete_report"]

METHODS = {m.name: (m.label, m.color) for m in methods_for("incomplete")}
"""Method -> (label, colour) of the tables and the figure (``view_<name>`` rows enter as ``best_single_view``), from
the method registry (:func:`mvl.workflow.methods.methods_for`)."""



def draw_split(y, seed, labels_per_class, unlabelled_per_class, test_per_class):
    """Stratified draw of one split: per class (sorted labels) a random permutation of its samples (from the
    generator of ``[seed]``); its first ``labels_per_class`` are labelled, the next ``unlabelled_per_class``
    unlabelled, the next ``test_per_class`` test. Returns (train, y_train, test): indices of the training samples
    (labelled and unlabelled, class by class), their labels with -1 for the unlabelled ones, the test indices."""
    y = np.asarray(y)
    rng = np.random.default_rng([int(seed)])
    need = labels_per_class + unlabelled_per_class + test_per_class
    train, y_train, test = [], [], []
    for k in np.unique(y):
        idx = np.flatnonzero(y == k)
        if idx.size < need:
            raise ValueError(f"class {k} has {idx.size} samples, the split needs {need} (labelled "
                             f"{labels_per_class} + unlabelled {unlabelled_per_class} + test {test_per_class})")
        idx = rng.permutation(idx)
        train.append(idx[:labels_per_class + unlabelled_per_class])
        y_train.append(np.r_[np.full(labels_per_class, k), np.full(unlabelled_per_class, -1)])
        test.append(idx[labels_per_class + unlabelled_per_class:need])
    return np.concatenate(train), np.concatenate(y_train).astype(y.dtype), np.concatenate(test)


def mask_rng(seed, pattern, q):
    """The generator of one mask: seeded by ``[seed, pattern's index, round(1000 q)]``."""
    return np.random.default_rng([int(seed), INCOMPLETE_PATTERNS.index(pattern), int(round(1000 * q))])


def presence_mask(pattern, y, m, q, rng, n_blocks=10):
    """(n, m) presence mask (True: view present) of the samples with labels ``y``, every sample keeping >= 1 view.

    - "random": round(q n m) of the (sample, view) entries missing (:func:`mvl.data.missing.mask_at_random`);
    - "class": round(q C m) of the C x m (class, view) cells missing (the same function on the class x view grid),
      a missing cell removing that view from every sample of the class (every class keeps >= 1 view);
    - "block": the samples, in a random order, cut into ``n_blocks`` blocks of (nearly) equal size, and round(q B m)
      of the (block, view) cells missing in the same way (a sensor down for a batch of samples).

    With equal class sizes the "class" fraction is exactly round(q C m) / (C m)."""
    y = np.asarray(y)
    n = y.size
    if pattern == "random":
        return mask_at_random(n, m, q, rng)
    if pattern == "class":
        _, group = np.unique(y, return_inverse=True)
    elif pattern == "block":
        group = np.empty(n, dtype=np.int64)
        for b, part in enumerate(np.array_split(rng.permutation(n), int(n_blocks))):
            group[part] = b
    else:
        raise ValueError(f"unknown pattern {pattern!r}; one of {INCOMPLETE_PATTERNS}")
    cells = mask_at_random(int(group.max()) + 1, m, q, rng)
    return cells[group]


def _estimator(sizes, impute=False, bandwidth=None, gamma_B=0.0):
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from .. import MVLLeastSquares

    steps = [SimpleImputer(strategy="mean", keep_empty_features=True)] if impute else []
    return make_pipeline(*steps, StandardScaler(), MVLLeastSquares(views=list(sizes), bandwidth=bandwidth,
                                                                   gamma_B=gamma_B, loss="squared"))


IMPUTED_BANDWIDTH_NOTE = "bandwidth mean"
"""The ``note`` of a mean-imputation fit whose median bandwidth was 0 (see :func:`fit_predict`)."""


def fit_predict(method, views, mask, train, y_train, test, gamma_B=0.0):
    """Test predictions of one method (``mvl_ls_incomplete``, ``mean_imputation``, ``view_<p>`` with p the view's
    position, or ``complete``) on the feature ``views`` (list of (N, d_p) arrays) with the presence ``mask`` (N, m)
    over all samples, trained on the samples ``train`` (labels ``y_train``, -1 unlabelled), predicting ``test``;
    ``gamma_B`` of the multi-view fits (a single view has no between-view term), the rest the package defaults.
    Returns (predictions, note): the note says what departed from the protocol ("" for nothing; "bandwidth mean":
    a mean-imputation fit whose median bandwidth was 0, refitted with the mean distance as the bandwidth). The fit
    function of each method comes from the method registry."""
    try:
        m = registry_method(method, "incomplete")
    except ValueError:
        m = None
    if m is None or m.fit is None:
        raise ValueError(f"unknown method {method!r}")
    return m.fit_function()(views, mask, train, y_train, test, gamma_B=gamma_B)


def fit_complete(views, mask, train, y_train, test, gamma_B=0.0):
    """``complete``: MVL-LS on the complete views (``mask`` unused)."""
    sizes = [V.shape[1] for V in views]
    X = np.hstack(views)
    return _estimator(sizes, gamma_B=gamma_B).fit(X[train], y_train).predict(X[test]), ""


def fit_masked(views, mask, train, y_train, test, gamma_B=0.0, impute=False):
    """``mvl_ls_incomplete`` (the incomplete views as NaN rows) or, with ``impute``, ``mean_imputation``."""
    sizes = [V.shape[1] for V in views]
    X = apply_mask(np.hstack(views), mask, views=sizes)
    try:
        return _estimator(sizes, impute=impute, gamma_B=gamma_B).fit(X[train], y_train).predict(X[test]), ""
    except ValueError as err:
        # Mean imputation puts every sample lacking a view on one point: when more than ~71 % of the training
        # samples lack it, over half of the pairs are at distance 0 and the median bandwidth is 0, which the
        # estimator refuses; then, as its message suggests, every view's bandwidth is the mean distance.
        if not (impute and "pairwise distance" in str(err)):
            raise
        est = _estimator(sizes, impute=True, bandwidth="mean", gamma_B=gamma_B).fit(X[train], y_train)
        return est.predict(X[test]), IMPUTED_BANDWIDTH_NOTE


def fit_view(views, mask, train, y_train, test, gamma_B=0.0, position=0):
    """``view_<p>``: the view at ``position`` alone (``gamma_B`` unused), on the training samples that have it; a
    test sample lacking it gets the most frequent labelled class."""
    p = position
    sizes = [V.shape[1] for V in views]
    labelled = y_train[y_train != -1]
    classes, counts = np.unique(labelled, return_counts=True)
    fallback = classes[np.argmax(counts)]  # the most frequent labelled class (ties: the smallest label)
    pred = np.full(test.size, fallback, dtype=y_train.dtype)
    has_tr, has_te = mask[train, p], mask[test, p]
    view_classes = np.unique(y_train[has_tr][y_train[has_tr] != -1])
    if view_classes.size == 1:  # one class among the view's labelled samples: the constant classifier
        pred[has_te] = view_classes[0]
    elif view_classes.size >= 2 and has_te.any():
        V = views[p]
        est = _estimator([sizes[p]]).fit(V[train[has_tr]], y_train[has_tr])
        pred[has_te] = est.predict(V[test[has_te]])
    return pred, ""


def run_seed(dataset, views, view_names, y, seed, settings):
    """Every (pattern, q, method) of one split ``seed`` of one data set (``views``: list of (N, d_p) feature
    arrays, ``y`` (N,) labels; ``settings``: :class:`IncompleteSettings`). Returns a
    DataFrame, one row per run: dataset, seed, pattern, q, method, view, accuracy, missing fractions realised on
    the training and test samples, seconds, note (:func:`fit_predict`)."""
    import pandas as pd

    s = settings
    y = np.asarray(y)
    train, y_train, test = draw_split(y, seed, s.labels_per_class, s.unlabelled_per_class, s.test_per_class)
    m = len(views)
    rows = []
    cache = {}  # (method, mask of the split's samples) -> (accuracy, seconds): q = 0 is the same for every pattern

    def record(pattern, q, method, mask):
        key = (method, mask[train].tobytes(), mask[test].tobytes())
        if key not in cache:
            t0 = time.perf_counter()
            pred, note = fit_predict(method, views, mask, train, y_train, test, gamma_B=s.gamma_B)
            cache[key] = (float(np.mean(pred == y[test])), time.perf_counter() - t0, note)
        acc, sec, note = cache[key]
        view = view_names[int(method[5:])] if method.startswith("view_") else ""
        rows.append(dict(dataset=dataset, seed=int(seed), pattern=pattern, q=float(q),
                         method="view_" + view if view else method, view=view, accuracy=acc,
                         missing_train=float(1 - mask[train].mean()), missing_test=float(1 - mask[test].mean()),
                         n_train=int(train.size), n_labelled=int(np.sum(y_train != -1)), n_test=int(test.size),
                         gamma_B=0.0 if view else s.gamma_B, seconds=sec, note=note))

    full = np.ones((y.size, m), dtype=bool)
    fitted = [e for e in methods_for("incomplete") if not e.derived]
    for e in fitted:  # the reference on the complete data (no mask)
        if "incomplete" not in e.data:
            record("none", 0.0, e.name, full)
    methods = [e.name for e in fitted if "incomplete" in e.data] + [f"view_{p}" for p in range(m)]
    for pattern in s.patterns:
        for q in s.q:
            mask = presence_mask(pattern, y, m, q, mask_rng(seed, pattern, q), n_blocks=s.n_blocks)
            for method in methods:
                record(pattern, q, method, mask)
    return pd.DataFrame(rows)


def write_seed(dataset, seed, settings, out, data_config=None):
    """:func:`run_seed` on the embedded source ``dataset`` (loaded with the download options of ``data_config``,
    the config key ``data``), written atomically with its checksum sidecar to ``out``."""
    from ..data.sources import load_dataset
    from . import io

    t0 = time.perf_counter()
    ds = load_dataset(dataset, options=data_options(data_config))
    views = [np.asarray(V, dtype=np.float64) for V in ds.views]
    table = run_seed(dataset, views, list(ds.view_names), ds.y, seed, settings)
    io.save_csv(out, table, checksum=True)
    inc = table[table["method"] == "mvl_ls_incomplete"]
    line = ", ".join(f"{r.pattern} q={r.q:g}: {100 * r.accuracy:.1f}" for r in inc.itertuples())
    print(f"[incomplete] {dataset} seed {seed}: {len(table)} rows, MVL-LS incomplete {line} "
          f"({time.perf_counter() - t0:.1f} s) -> {out}")
    return table


# ------------------------------------------------------------------ summary, table, figure


def summarize(results):
    """Mean, std and count of the accuracy over seeds per (dataset, pattern, q, method), with one
    ``best_single_view`` group per (dataset, pattern, q): the view with the best mean test accuracy there (its
    name in ``view``). ``results``: the rows of :func:`run_seed` (a DataFrame)."""
    import pandas as pd

    g = (results.groupby(["dataset", "pattern", "q", "method", "view"], dropna=False)["accuracy"]
         .agg(mean="mean", std="std", n_seeds="count").reset_index())
    g["view"] = g["view"].fillna("")
    views = g[g["method"].str.startswith("view_")]
    best = views.loc[views.groupby(["dataset", "pattern", "q"])["mean"].idxmax()].assign(method="best_single_view")
    out = pd.concat([g, best], ignore_index=True)
    return out.sort_values(["dataset", "pattern", "q", "method"]).reset_index(drop=True)


def best_views(summary):
    """(dataset, pattern, q) -> the name of the best single view (from :func:`summarize`)."""
    b = summary[summary["method"] == "best_single_view"]
    return {(r.dataset, r.pattern, r.q): r.view for r in b.itertuples()}


def package_defaults():
    """MVL-LS's defaults as the estimator has them: a dict with gamma_A, gamma_B and gamma_W (the constructor's
    values, e.g. "auto"), gamma_A_value (what ``gamma_A="auto"`` resolves to outside the graph regime),
    gamma_B_complete and gamma_B_incomplete (what the default gamma_B resolves to on complete views and when a
    training view is missing), n_neighbors and kernel. Read from :class:`mvl.MVLLeastSquares` itself (its
    parameters and the resolution it applies in a fit), not restated here."""
    from .. import MVLLeastSquares

    est = MVLLeastSquares()
    params = est.get_params()
    complete_B = est._gamma_B()  # no view_mask_: complete views
    est.view_mask_ = np.ones((1, 2), dtype=bool)  # a fit on incomplete views sets a presence mask
    incomplete_B = est._gamma_B()
    return dict(gamma_A=params["gamma_A"], gamma_A_value=est._gamma_A(), gamma_B=params["gamma_B"],
                gamma_B_complete=float(complete_B), gamma_B_incomplete=float(incomplete_B),
                gamma_W=params["gamma_W"], n_neighbors=params["n_neighbors"], kernel=params["kernel"])


def _gamma_text(name, value, resolved):
    if isinstance(value, str):
        return f'{name} = "{value}" ({resolved})'
    return f"{name} = {value:g}"


def settings_text(gamma_B, defaults=None):
    """The MVL-LS line of the report's settings: the configured gamma_B beside the package default as the code
    has it (``defaults``: :func:`package_defaults`), and the other hyperparameters' defaults."""
    d = package_defaults() if defaults is None else defaults
    b_default = (_gamma_text("gamma_B", d["gamma_B"], f"{d['gamma_B_complete']:g} on complete views, "
                                                      f"{d['gamma_B_incomplete']:g} with views missing")
                 if isinstance(d["gamma_B"], str) else f"gamma_B = {d['gamma_B']:g}")
    same = (not isinstance(d["gamma_B"], str) and float(gamma_B) == float(d["gamma_B"]))
    head = (f"gamma_B = {float(gamma_B):g} " + ("(the package default)" if same else
                                               f"(configured; the package default is {b_default})"))
    gamma_A = _gamma_text("gamma_A", d["gamma_A"], f"{d['gamma_A_value']:g}")
    return (f"{head}, on the complete data, the incomplete views and the imputed data alike; otherwise the package "
            f"defaults ({'Gaussian' if d['kernel'] == 'rbf' else d['kernel']} kernel, median bandwidth per view, "
            f"{gamma_A}, gamma_W = {d['gamma_W']:g}, {d['n_neighbors']}-NN graph); views standardised on the "
            "training samples; single views: the package defaults (one view has no between-view term)")


def verdicts(results, alpha=None, min_pairs=None):
    """The comparisons the report concludes on, judged together by :func:`mvl.workflow.verdict.judge` (one
    family, paired over the split seeds): per (data set, pattern, q > 0), MVL-LS on the incomplete views against
    mean imputation + MVL-LS and against the best single view (the view with the best mean test accuracy there,
    :func:`summarize`). ``results``: the rows of :func:`run_seed`. Returns a list of
    :class:`mvl.workflow.verdict.Verdict`."""
    from .verdict import ALPHA, MIN_PAIRS, judge

    best = best_views(summarize(results))
    family = []
    inc = results[(results["pattern"] != "none") & (results["q"] > 0)]
    for (d, pattern, q), g in inc.groupby(["dataset", "pattern", "q"], sort=False):
        by = {m: gg.set_index("seed")["accuracy"] for m, gg in g.groupby("method")}
        if "mvl_ls_incomplete" not in by:
            continue
        where = f"{d}, {pattern} pattern, q = {q:g}"
        ours = METHODS["mvl_ls_incomplete"][0]
        if "mean_imputation" in by:
            family.append(dict(a=ours, b=METHODS["mean_imputation"][0], x=by["mvl_ls_incomplete"],
                               y=by["mean_imputation"], context=where))
        view = best.get((d, pattern, q))
        if view and f"view_{view}" in by:
            family.append(dict(a=ours, b=f"the best single view ({view})", x=by["mvl_ls_incomplete"],
                               y=by[f"view_{view}"], context=where))
    return judge(family, alpha=ALPHA if alpha is None else alpha,
                 min_pairs=MIN_PAIRS if min_pairs is None else min_pairs)


def _fmt(mean, std):
    return f"{100 * mean:.1f} ± {100 * std:.1f}" if np.isfinite(std) else f"{100 * mean:.1f}"


def accuracy_table(summary, dataset):
    """Accuracy (%, mean ± std over seeds) of one data set: rows (pattern, method), columns q; the complete fit
    as its own row; the best single view's name per q in a row of its own."""
    import pandas as pd

    s = summary[summary["dataset"] == dataset]
    qs = sorted(s.loc[s["pattern"] != "none", "q"].unique())
    rows = []
    comp = s[s["method"] == "complete"]
    if len(comp):
        c = comp.iloc[0]
        rows.append({"pattern": "none", "method": METHODS["complete"][0], **{f"q = {q:g}": (_fmt(c["mean"], c["std"])
                                                                                         if q == 0 else "")
                                                                            for q in qs}})
    for pattern in [p for p in INCOMPLETE_PATTERNS if p in set(s["pattern"])]:
        sp = s[s["pattern"] == pattern]
        for method in ("mvl_ls_incomplete", "mean_imputation", "best_single_view"):
            r = sp[sp["method"] == method].set_index("q")
            rows.append({"pattern": pattern, "method": METHODS[method][0],
                         **{f"q = {q:g}": _fmt(r.loc[q, "mean"], r.loc[q, "std"]) if q in r.index else ""
                            for q in qs}})
        r = sp[sp["method"] == "best_single_view"].set_index("q")
        rows.append({"pattern": pattern, "method": "  (which view)",
                     **{f"q = {q:g}": r.loc[q, "view"] if q in r.index else "" for q in qs}})
    return pd.DataFrame(rows).set_index(["pattern", "method"])


def accuracy_figure(summary):
    """Accuracy against q: one panel per (data set, pattern), the methods as lines with error bars (std over
    seeds), the complete fit as a horizontal line with its std band; the best single view's name beside each
    of its points.

    Parameters
    ----------
    summary : pandas.DataFrame
        The summary of :func:`summarize` (dataset, pattern, q, method, view, mean, std).

    Returns
    -------
    matplotlib.figure.Figure
        Saved by :func:`mvl.workflow.figures.save_figure`.
    """
    datasets = list(dict.fromkeys(summary["dataset"]))
    patterns = [p for p in INCOMPLETE_PATTERNS if p in set(summary["pattern"])]
    fig, axes = new_figure(len(datasets), len(patterns), 5.2 * len(patterns), 4.2 * len(datasets), layout=None,
                           sharey=True)
    for i, d in enumerate(datasets):
        s = summary[summary["dataset"] == d]
        comp = s[s["method"] == "complete"]
        for j, pattern in enumerate(patterns):
            ax = axes[i, j]
            sp = s[s["pattern"] == pattern]
            qs = sorted(sp["q"].unique())
            if len(comp):
                c = comp.iloc[0]
                ax.axhline(c["mean"], color=METHODS["complete"][1], ls="--", lw=1, label=METHODS["complete"][0])
                ax.axhspan(c["mean"] - np.nan_to_num(c["std"]), c["mean"] + np.nan_to_num(c["std"]),
                           color=METHODS["complete"][1], alpha=0.12, lw=0)
            for method in ("mvl_ls_incomplete", "mean_imputation", "best_single_view"):
                r = sp[sp["method"] == method].sort_values("q")
                label, color = METHODS[method]
                ax.errorbar(r["q"], r["mean"], yerr=np.nan_to_num(r["std"]), marker="o", capsize=3, color=color,
                            label=label)
                if method == "best_single_view":
                    for row in r.itertuples():
                        ax.annotate(row.view, (row.q, row.mean), textcoords="offset points", xytext=(4, -11),
                                    fontsize=7, color=color)
            what = {"random": "missing at random", "class": "views absent per class",
                    "block": "views absent per block of samples"}[pattern]
            ax.set(title=f"{d}: {what}", xlabel="missing fraction q", xticks=qs)
            if j == 0:
                ax.set_ylabel("test accuracy")
            ax.grid(True, alpha=0.3)
    handles = {}
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(lab, h)
    order = [METHODS[k][0] for k in ("mvl_ls_incomplete", "mean_imputation", "best_single_view", "complete")]
    labels = [k for k in order if k in handles] + [k for k in handles if k not in order]
    fig.legend([handles[k] for k in labels], labels, loc="lower center", ncol=min(len(labels), 3), fontsize=8,
               frameon=False)
    fig.tight_layout(rect=(0, 0.13 / len(datasets) + 0.02, 1, 1))
    return fig


# ------------------------------------------------------------------ rule entry points


def incomplete_run(smk):
    """Rule ``incomplete_run``: one (data set, seed) (wildcards), settings from params ``settings``."""
    from threadpoolctl import threadpool_limits


    with logged(smk), threadpool_limits(limits=max(1, int(smk.threads)), user_api="blas"):
        write_seed(smk.wildcards.idataset, int(smk.wildcards.seed), smk.params.settings, smk.output[0],
                   data_config=smk.config.get("data"))


def incomplete_summary(smk):
    """Rule ``incomplete_summary``: every job's rows in one table (``results``) and its summary (``summary``)."""
    import pandas as pd

    from . import io

    with logged(smk):
        table = pd.concat([pd.read_csv(f, keep_default_na=False, na_values=[""]) for f in smk.input],
                          ignore_index=True)
        table[["view", "note"]] = table[["view", "note"]].fillna("")
        io.save_csv(smk.output.results, table, checksum=True, inputs=list(smk.input))
        io.save_csv(smk.output.summary, summarize(table), checksum=True, inputs=[smk.output.results])
        print(f"[incomplete_summary] {len(smk.input)} files, {len(table)} rows -> {smk.output.summary}")


def incomplete_report(smk):
    """Rule ``incomplete_report``: the jupytext notebook executed with papermill (parameters: the results and
    summary CSVs, the figure paths, the settings as JSON)."""

    with logged(smk):
        out = smk.output.notebook
        parameters = {"results_csv": smk.input.results, "summary_csv": smk.input.summary,
                      "fig_png": smk.output.png, "fig_pdf": smk.output.pdf,
                      "settings": json.dumps(smk.params.settings._asdict())}
        execute_notebook(smk.input.notebook, out, parameters, outputs=list(smk.output))
        print(f"[incomplete_report] -> {out}")
