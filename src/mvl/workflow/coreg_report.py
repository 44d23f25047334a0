"""The co-regularization report: MR vs CoMR under three ways of choosing (gamma_1, gamma_2).

Sindhwani & Rosenberg (ICML 2008, "SR"), Section 4.3 and Tables 2-4: manifold regularization (MR, Laplacian
RLS) against manifold co-regularization (CoMR) on LINES, G50C, USPST, COIL20 and PCMAC. SR choose (gamma_1,
gamma_2) "with respect to validation error" on the grid {1e-6, 1e-4, 1e-2, 1, 10, 100} and print one pair per
dataset and method (Table 4), which leaves open whether the pair was chosen per split or once per dataset.
The functions here read the tidy table of every grid row (:func:`mvl.workflow.coreg_runner.run_split` with ``all_grid``;
one row per dataset, seed, method, graph_weights, gamma1, gamma2 with validation_error, validation_loss,
test_error, unlabelled_error and the per-split choice ``selected``) and evaluate three protocols:

(a) ``"a"``: per-split validation selection (the ``selected`` rows: smallest validation error of the split,
    ties by the smaller validation squared loss, then grid order);
(b) ``"b"``: one pair per dataset, method and graph weights, chosen on the validation error averaged over the
    splits (ties: smaller mean validation squared loss, then grid order), then used on every split;
(c) ``"c"``: SR's Table-4 pair of the dataset and method, read from the published parameters
    (:func:`mvl.data.published.load_published` ``("sindhwani2008_parameters")``).

None of them looks at test or unlabelled errors to choose. Each is evaluated for both kNN graph weight
conventions (``graph_weights`` "binary" and "kernel", :func:`mvl.coreg.knn_graph_laplacian`).

Functions (all pure, on DataFrames): :func:`protocol_rows` (the row of each split under each protocol),
:func:`protocol_table` (mean and std over splits, SR Tables 2-3 layout), :func:`published_comparison`
(beside SR Tables 2-3, within one published std or not), :func:`judged` (MR against CoMR by the rule of
:mod:`mvl.workflow.verdict`), :func:`verdicts` (one generated sentence per dataset), :func:`reproduction` and
:func:`reproduction_summary` (which published cells some setting reproduces, as generated sentences), and
display helpers :func:`format_mean_std`, :func:`error_table`, :func:`pair_table`. Grid order means ascending (gamma_1,
gamma_2), the order of :data:`mvl.coreg.GAMMA_GRID`. Standard deviations use ddof = 1 (MATLAB's std).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .methods import methods_for
from .verdict import ALPHA, MIN_PAIRS, judge
from .verdict import format_p as _fmt_p

__all__ = [
    "PROTOCOLS",
    "METHODS",
    "METRICS",
    "published_pairs",
    "published_errors",
    "per_dataset_choice",
    "protocol_rows",
    "protocol_table",
    "published_comparison",
    "judged",
    "verdicts",
    "reproduction",
    "reproduction_summary",
    "format_gamma",
    "format_mean_std",
    "error_table",
    "pair_table",
]

PROTOCOLS = {
    "a": "per-split validation selection",
    "b": "one pair per dataset (mean validation error over splits)",
    "c": "SR Table 4 pair",
}
"""Protocol code -> description."""

METRICS = {"test_error": "test", "unlabelled_error": "unlabelled"}
"""Error columns of the rows -> the error_type of the published tables (Table 2: test, Table 3: unlabelled)."""

_KEYS = ["dataset", "method", "graph_weights"]
METHODS = tuple(m.name for m in methods_for("coreg"))  # MR, CoMR (the method registry)
_TIE = 1e-9  # mean validation errors closer than this are a tie (they are means of multiples of 100/v)


def _grid_sorted(df):
    return df.sort_values(["gamma1", "gamma2"], kind="stable")


def _lower(df, col="dataset"):
    df = df.copy()
    df[col] = df[col].str.lower()
    return df


# ----------------------------------------------------------------------------- published numbers


def published_pairs(parameters=None):
    """SR Table 4's (gamma_1, gamma_2) per dataset and method: DataFrame dataset (lower case), method, gamma1,
    gamma2. ``parameters`` defaults to ``load_published("sindhwani2008_parameters")``."""
    if parameters is None:
        from ..data.published import load_published

        parameters = load_published("sindhwani2008_parameters")
    p = parameters[parameters["parameter"].str.contains("/gamma_")].copy()
    parts = p["parameter"].str.split("/", expand=True)
    p["method"], p["which"] = parts[0], parts[1].map({"gamma_1": "gamma1", "gamma_2": "gamma2"})
    wide = p.pivot_table(index=["dataset", "method"], columns="which", values="value", aggfunc="first")
    wide = wide.reset_index()[["dataset", "method", "gamma1", "gamma2"]]
    wide.columns.name = None
    return _lower(wide)


def published_errors(results=None):
    """SR Tables 2 (test) and 3 (unlabelled): DataFrame dataset (lower case), method, error ("test" or
    "unlabelled"), table, published_mean, published_std. ``results`` defaults to
    ``load_published("sindhwani2008_results")``."""
    if results is None:
        from ..data.published import load_published

        results = load_published("sindhwani2008_results")
    out = results.rename(columns={"error_type": "error", "mean": "published_mean", "std": "published_std"})
    return _lower(out[["dataset", "method", "error", "table", "published_mean", "published_std"]])


# ----------------------------------------------------------------------------- protocols


def per_dataset_choice(rows):
    """Protocol (b): for each dataset, method and graph_weights, the pair with the smallest validation error
    averaged over the splits (only pairs present in every split count), ties (closer than 1e-9) broken by the
    smaller mean validation squared loss, then by grid order. Returns dataset, method, graph_weights, gamma1,
    gamma2, mean_validation_error, mean_validation_loss, n_splits."""
    out = []
    for key, g in rows.groupby(_KEYS, sort=False):
        n = g["seed"].nunique()
        agg = (g.groupby(["gamma1", "gamma2"])
               .agg(mean_validation_error=("validation_error", "mean"),
                    mean_validation_loss=("validation_loss", "mean"), n_splits=("seed", "nunique"))
               .reset_index())
        agg = _grid_sorted(agg[agg["n_splits"] == n])
        if agg.empty:
            continue
        tied = agg[agg["mean_validation_error"] <= agg["mean_validation_error"].min() + _TIE]
        best = tied.iloc[int(np.argmin(tied["mean_validation_loss"].to_numpy()))]  # first minimum: grid order
        out.append(dict(zip(_KEYS, key, strict=True), **best.to_dict()))
    out = pd.DataFrame(out, columns=_KEYS + ["gamma1", "gamma2", "mean_validation_error", "mean_validation_loss",
                                             "n_splits"])
    return out.astype({"n_splits": int})


def _match_pairs(rows, pairs):
    """The rows whose (dataset, method, graph_weights or any, gamma1, gamma2) match ``pairs`` (gammas
    compared with a relative tolerance of 1e-9)."""
    on = [c for c in _KEYS if c in pairs]
    m = rows.merge(pairs[on + ["gamma1", "gamma2"]], on=on, suffixes=("", "_chosen"))
    ok = (np.isclose(m["gamma1"], m["gamma1_chosen"], rtol=1e-9, atol=0)
          & np.isclose(m["gamma2"], m["gamma2_chosen"], rtol=1e-9, atol=0))
    return m[ok].drop(columns=["gamma1_chosen", "gamma2_chosen"])


def protocol_rows(rows, pairs=None):
    """One row per dataset, method, graph_weights, seed and protocol: the grid row each protocol uses on that
    split (a column ``protocol`` in "a", "b", "c" is added). ``pairs`` (protocol c) defaults to
    :func:`published_pairs`; a dataset or method without a published pair, or whose pair is not in the grid,
    has no protocol-c rows."""
    rows = rows.copy()
    rows["selected"] = rows["selected"].astype(bool)
    a = rows[rows["selected"]].assign(protocol="a")
    b = _match_pairs(rows, per_dataset_choice(rows)).assign(protocol="b")
    c = _match_pairs(rows, published_pairs() if pairs is None else _lower(pairs)).assign(protocol="c")
    out = pd.concat([a, b, c], ignore_index=True)
    if out.duplicated(_KEYS + ["seed", "protocol"]).any():
        raise ValueError("more than one row per dataset, method, graph_weights, seed and protocol")
    return out


def _pairs_text(g):
    counts = g.groupby(["gamma1", "gamma2"]).size().reset_index(name="n")
    counts = _grid_sorted(counts).sort_values("n", ascending=False, kind="stable")
    if len(counts) == 1:
        r = counts.iloc[0]
        return f"({format_gamma(r.gamma1)}, {format_gamma(r.gamma2)})"
    return ", ".join(f"({format_gamma(r.gamma1)}, {format_gamma(r.gamma2)}) x{r.n}" for r in counts.itertuples())


def protocol_table(rows, pairs=None):
    """Mean and std (ddof = 1) over splits per dataset, method, graph_weights and protocol.

    Columns: dataset, method, graph_weights, protocol, protocol_description, n_splits, test_error_mean,
    test_error_std, unlabelled_error_mean, unlabelled_error_std, validation_error_mean, gamma1 and gamma2 (the
    pair of protocols b and c; NaN for a, whose pair varies), pairs (text: the pair, or for a every chosen pair
    with its number of splits, most frequent first).
    """
    pr = protocol_rows(rows, pairs)
    out = []
    for key, g in pr.groupby(_KEYS + ["protocol"], sort=False):
        single = g[["gamma1", "gamma2"]].drop_duplicates()
        one = len(single) == 1 and key[-1] != "a"
        out.append(dict(
            zip(_KEYS + ["protocol"], key, strict=True), protocol_description=PROTOCOLS[key[-1]],
            n_splits=int(g["seed"].nunique()),
            test_error_mean=g["test_error"].mean(), test_error_std=g["test_error"].std(ddof=1),
            unlabelled_error_mean=g["unlabelled_error"].mean(), unlabelled_error_std=g["unlabelled_error"].std(ddof=1),
            validation_error_mean=g["validation_error"].mean(),
            gamma1=float(single["gamma1"].iloc[0]) if one else np.nan,
            gamma2=float(single["gamma2"].iloc[0]) if one else np.nan,
            pairs=_pairs_text(g),
        ))
    out = pd.DataFrame(out)
    return _ordered(out)


def _ordered(df, extra=()):
    """Rows in the order dataset (as first seen), graph_weights, protocol, method (MR first)."""
    if df.empty:
        return df
    order = {d: i for i, d in enumerate(dict.fromkeys(df["dataset"]))}
    keys = df.assign(_d=df["dataset"].map(order))
    sort = ["_d"] + [c for c in ("graph_weights", "protocol", *extra) if c in df]
    if "method" in df:
        keys["_m"] = keys["method"].map({m: i for i, m in enumerate(METHODS)}).fillna(len(METHODS))
        sort.append("_m")
    return df.loc[keys.sort_values(sort, kind="stable").index].reset_index(drop=True)


def published_comparison(table, published=None):
    """Our means beside SR Tables 2-3 for every row of :func:`protocol_table` and both error types.

    Columns: dataset, method, graph_weights, protocol, error ("test", "unlabelled"), table (2 or 3), ours_mean,
    ours_std, n_splits, published_mean, published_std, difference (ours - published) and within_one_std
    (``|difference|`` <= published std; False where nothing is published). ``published`` defaults to
    :func:`published_errors`.
    """
    pub = published_errors() if published is None else _lower(published)
    out = []
    for metric, err in METRICS.items():
        part = table[_KEYS + ["protocol", "n_splits"]].copy()
        part["error"] = err
        part["ours_mean"] = table[f"{metric}_mean"].to_numpy()
        part["ours_std"] = table[f"{metric}_std"].to_numpy()
        out.append(part)
    out = pd.concat(out, ignore_index=True).merge(pub, on=["dataset", "method", "error"], how="left")
    out["difference"] = out["ours_mean"] - out["published_mean"]
    out["within_one_std"] = (out["difference"].abs() <= out["published_std"]).fillna(False).astype(bool)
    cols = _KEYS + ["protocol", "error", "table", "ours_mean", "ours_std", "n_splits", "published_mean",
                    "published_std", "difference", "within_one_std"]
    return _ordered(out[cols], extra=("error",))


# ----------------------------------------------------------------------------- verdicts


def _join(items):
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def judged(rows, pairs=None, alpha=None, min_pairs=None):
    """MR against CoMR, paired over the splits, for every dataset, error type, graph weights and protocol, judged
    together as one family by the rule of :mod:`mvl.workflow.verdict` (the smaller error is better; errors are
    in %, differences in percentage points). Returns a DataFrame with dataset, metric, graph_weights, protocol and
    verdict (a :class:`mvl.workflow.verdict.Verdict`, ``a`` = MR, ``b`` = CoMR)."""
    pr = protocol_rows(rows, pairs)
    keys, family = [], []
    for (ds, weights, proto), g in pr.groupby(["dataset", "graph_weights", "protocol"], sort=False):
        for metric, err in METRICS.items():
            by = {m: gg.set_index("seed")[metric] for m, gg in g.groupby("method")}
            if not set(METHODS) <= set(by):
                continue
            keys.append(dict(dataset=ds, metric=metric, graph_weights=weights, protocol=proto))
            family.append(dict(a="MR", b="CoMR", x=by["MR"], y=by["CoMR"],
                               context=f"{ds.upper()}, {err} error, {proto}/{weights}"))
    found = judge(family, alpha=ALPHA if alpha is None else alpha,
                  min_pairs=MIN_PAIRS if min_pairs is None else min_pairs, scale=1.0, lower_is_better=True)
    out = pd.DataFrame(keys, columns=["dataset", "metric", "graph_weights", "protocol"])
    out["verdict"] = found
    return _ordered(out, extra=("metric",))


def _lower_of(outcome):
    """Which method has the smaller error by the rule's outcome of MR (a) against CoMR (b), or None."""
    return {"better": "MR", "worse": "CoMR"}.get(outcome)


def _direction_clause(err, table_no, pm, found):
    """SR's direction on one error type (which method has the smaller published error) and, per setting, what
    the rule finds in ours: the same method lower, the other lower, no difference shown, or too few splits."""
    same, reverse, none, few = [], [], [], []
    if pm["MR"] == pm["CoMR"]:
        sr = None
        head = f"{err} error: SR Table {table_no} has MR and CoMR equal ({pm['MR']:.2f})"
    else:
        sr = "MR" if pm["MR"] < pm["CoMR"] else "CoMR"
        head = (f"{err} error: SR Table {table_no} has {sr} lower (MR {pm['MR']:.2f}, CoMR {pm['CoMR']:.2f})")
    for r in found.itertuples():
        v = r.verdict
        item = f"{r.protocol}/{r.graph_weights} (MR {v.mean_a:.2f}, CoMR {v.mean_b:.2f}"
        if not v.tested:
            few.append(item + f", {v.n} {v.unit})")
            continue
        item += f", adjusted p = {_fmt_p(v.p_holm)})"
        lower = _lower_of(v.outcome)
        if lower is None:
            none.append(item)
        elif sr is None or lower == sr:
            same.append((lower, item))
        else:
            reverse.append((lower, item))
    parts = []
    for group, how in ((same, "as SR" if sr else "where SR have them equal"), (reverse, "the reverse of SR")):
        for lower in METHODS:
            items = [i for m, i in group if m == lower]
            if items:
                parts.append(f"ours has {lower} lower, {how}, under {_join(items)}")
    if none:
        parts.append(f"no difference shown under {_join(none)}")
    if few:
        parts.append(f"too few splits to tell under {_join(few)}")
    return head + "; " + ("; ".join(parts) if parts else "ours has no setting to compare")


def verdicts(rows, pairs=None, published=None, alpha=None, min_pairs=None):
    """One sentence per dataset, generated from the rule's verdicts (:func:`judged`).

    For test and then unlabelled error: which method SR's table has lower and, per setting (protocol/graph
    weights), whether the rule finds the same method lower in ours, the other one, no difference or too few
    splits, with both means and the adjusted p. Every setting is listed under the direction its own verdict
    has. Returns a DataFrame with dataset and verdict.
    """
    found = judged(rows, pairs, alpha, min_pairs)
    pub = published_errors() if published is None else _lower(published)
    out = []
    for ds in dict.fromkeys(found["dataset"]):
        clauses = []
        for metric, err in METRICS.items():
            p = pub[(pub["dataset"] == ds) & (pub["error"] == err)].set_index("method")
            pm = p["published_mean"].dropna()
            if not set(METHODS) <= set(pm.index):
                clauses.append(f"{err} error: SR publish no errors to compare with")
                continue
            f = found[(found["dataset"] == ds) & (found["metric"] == metric)]
            clauses.append(_direction_clause(err, int(p["table"].iloc[0]), pm, f))
        out.append(dict(dataset=ds, verdict=f"{ds.upper()}: " + ". ".join(c[0].upper() + c[1:] for c in clauses)
                        + "."))
    return pd.DataFrame(out, columns=["dataset", "verdict"])


def reproduction(comparison):
    """Per published cell (dataset, method, error type): is SR's number reproduced, i.e. does some setting's mean
    lie within one published std of it (:func:`published_comparison`)?

    Columns: dataset, method, error, table, published_mean, published_std, settings (how many were run),
    within (how many lie within one published std), closest (the setting whose mean is nearest), closest_mean,
    closest_difference (ours - published), reproduced (within > 0) and sentence (generated from these numbers).
    Cells SR do not publish are left out."""
    cmp = comparison.dropna(subset=["published_mean"])
    cmp = cmp.assign(setting=cmp["protocol"] + "/" + cmp["graph_weights"])
    out = []
    for (ds, method, err), g in cmp.groupby(["dataset", "method", "error"], sort=False):
        near = g.loc[g["difference"].abs().idxmin()]
        inside = g[g["within_one_std"]]
        pm, ps, t = float(near["published_mean"]), float(near["published_std"]), int(near["table"])
        where = f"{ds.upper()}, {method} {err} error"
        lo, hi = int(g["n_splits"].min()), int(g["n_splits"].max())
        splits = f"{lo} splits" if lo == hi else f"{lo} to {hi} splits"
        spread = (f"ours {g['ours_mean'].min():.2f} to {g['ours_mean'].max():.2f} over the {len(g)} settings "
                  f"({splits} each)" if len(g) > 1 else f"ours {g['ours_mean'].iloc[0]:.2f} (one setting, {splits})")
        if len(inside):
            items = _join(f"{r.setting} ({r.ours_mean:.2f})" for r in inside.itertuples())
            sentence = (f"{where}: reproduced: SR Table {t} has {pm:.2f} (std {ps:.2f}); {spread}, within one "
                        f"published std under {items}.")
        else:
            d = float(near["difference"])
            sentence = (f"{where}: not reproduced: SR Table {t} has {pm:.2f} (std {ps:.2f}); {spread}, none "
                        f"within one published std (closest: {near['setting']} {near['ours_mean']:.2f}, "
                        f"{abs(d):.2f} points {'below' if d < 0 else 'above'}, {abs(d) / ps:.1f} published stds).")
        out.append(dict(dataset=ds, method=method, error=err, table=t, published_mean=pm, published_std=ps,
                        settings=len(g), within=len(inside), closest=near["setting"],
                        closest_mean=float(near["ours_mean"]), closest_difference=float(near["difference"]),
                        reproduced=bool(len(inside)), sentence=sentence))
    cols = ["dataset", "method", "error", "table", "published_mean", "published_std", "settings", "within",
            "closest", "closest_mean", "closest_difference", "reproduced", "sentence"]
    return pd.DataFrame(out, columns=cols)


def reproduction_summary(repro):
    """One sentence over every published cell of :func:`reproduction`: how many are reproduced, and which not."""
    if repro.empty:
        return "No published cell to compare with."
    bad = repro[~repro["reproduced"]]
    head = (f"{int(repro['reproduced'].sum())} of the {len(repro)} published cells (SR Tables 2-3) are within one "
            f"published std of our mean under at least one setting")
    if bad.empty:
        return head + "."
    names = _join(f"{r.dataset.upper()} {r.method} {r.error}" for r in bad.itertuples())
    return head + f"; not reproduced under any setting: {names}."


# ----------------------------------------------------------------------------- display helpers


def format_gamma(g):
    """A grid value as printed in tables: 1e-6, 1e-4, 0.01, 1, 10, 100."""
    g = float(g)
    if g != 0 and abs(g) < 1e-2:
        mant, exp = f"{g:.0e}".split("e")
        return f"{mant}e{int(exp)}"
    return f"{g:g}"


def format_mean_std(mean, std, decimals=2):
    """'mean (std)' with ``decimals`` decimals; '' for a missing mean, 'mean (-)' for a missing std."""
    if mean is None or not np.isfinite(mean):
        return ""
    s = "-" if std is None or not np.isfinite(std) else f"{std:.{decimals}f}"
    return f"{mean:.{decimals}f} ({s})"


def error_table(table, metric="test_error", published=None, decimals=2):
    """Display table of one metric: rows (dataset, setting), setting = "published" (SR Table 2 or 3) then the
    protocols; columns (graph_weights, method); cells 'mean (std)'. The published row holds SR's numbers under
    every graph_weights column (SR do not say which weights they used)."""
    err = METRICS[metric]
    pub = published_errors() if published is None else _lower(published)
    cells = {}
    weights = list(dict.fromkeys(table["graph_weights"]))
    for r in table.itertuples():
        cells[r.dataset, f"({r.protocol}) {PROTOCOLS[r.protocol]}", r.graph_weights, r.method] = \
            format_mean_std(getattr(r, f"{metric}_mean"), getattr(r, f"{metric}_std"), decimals)
    for ds in dict.fromkeys(table["dataset"]):
        for p in pub[(pub["dataset"] == ds) & (pub["error"] == err)].itertuples():
            for w in weights:
                cells[ds, f"published (SR Table {int(p.table)})", w, p.method] = \
                    format_mean_std(p.published_mean, p.published_std, decimals)
    s = pd.Series(cells)
    wide = s.unstack([2, 3]) if len(s) else pd.DataFrame()
    wide.index.names, wide.columns.names = ["dataset", "setting"], ["graph weights", "method"]
    rows = [(ds, st) for ds in dict.fromkeys(table["dataset"])
            for st in sorted({i[1] for i in wide.index if i[0] == ds}, key=lambda x: (not x.startswith("pub"), x))]
    cols = [(w, m) for w in weights for m in METHODS if (w, m) in wide.columns]
    return wide.loc[rows, cols].fillna("")


def pair_table(table, pairs=None):
    """Display table of the chosen (gamma_1, gamma_2): rows (dataset, method, graph weights), columns the
    protocols: (a) every pair chosen on some split with its number of splits, (b) the one pair, (c) SR's
    Table-4 pair."""
    pp = published_pairs() if pairs is None else _lower(pairs)
    cols = {"a": "(a) per-split choices", "b": "(b) one pair per dataset", "c": "(c) SR Table 4"}
    cells = {}
    for r in table.itertuples():
        cells[r.dataset, r.method, r.graph_weights, cols[r.protocol]] = r.pairs
    for r in pp.itertuples():
        for w in dict.fromkeys(table.loc[(table["dataset"] == r.dataset) & (table["method"] == r.method),
                                         "graph_weights"]):
            cells[r.dataset, r.method, w, cols["c"]] = f"({format_gamma(r.gamma1)}, {format_gamma(r.gamma2)})"
    wide = pd.Series(cells, dtype=object).unstack(3)
    wide.index.names = ["dataset", "method", "graph weights"]
    keys = table[_KEYS].drop_duplicates()
    keys = keys.assign(_m=keys["method"].map({m: i for i, m in enumerate(METHODS)}),
                       _d=keys["dataset"].map({d: i for i, d in enumerate(dict.fromkeys(table["dataset"]))}))
    rows = [tuple(k) for k in keys.sort_values(["_d", "_m", "graph_weights"])[_KEYS].itertuples(index=False)]
    return wide.reindex(index=rows, columns=[c for c in cols.values() if c in wide.columns]).fillna("")
