"""Our results beside the published ones (JMLR 2016, Tables 2-11).

:func:`published_comparison` matches every published row of one paper dataset with the mean (std)
over splits of the corresponding runs of the workflow (``results.csv``) and returns a tidy table with
the difference, for the report notebooks. Published rows without a counterpart here (other authors'
methods, settings we do not run) keep empty "ours" columns; illegible published cells (see
``mvl/data/published``) keep an empty published mean.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ..data.published import load_published
from ..data.sources import SOURCES
from .methods import REGISTRY, Method, lookup, method_attribute

__all__ = ["published_comparison", "published_name", "ours_of"]


def published_name(source):
    """The name in the published tables of our dataset ``source`` (the data-source registry), or None."""
    src = SOURCES.get(source)
    return None if src is None else src.published


def ours_of(published_method):
    """Our method of a published method name (the registry's ``Method.published``; one name per method), or
    None."""
    for entry in REGISTRY:
        if isinstance(entry, Method) and published_method in entry.published:
            return entry.name
    return None


def _norm(name):
    return re.sub(r"[^a-z0-9]", "", str(name).lower())


def _our_rows(res, pub):
    """Boolean mask of the rows of ``res`` that correspond to the published row ``pub``."""
    lc = pub["labels_per_class"]
    uc = 0 if pd.isna(pub["unlabelled_per_class"]) else int(pub["unlabelled_per_class"])
    mask = (res["l_c"] == lc) & (res["u_c"] == uc)
    method, setting = pub["method"], str(pub["setting"])
    if method == "single view":  # view names compared without case, spaces or punctuation
        view = pd.Series(method_attribute(res["method"], "view"), index=res.index)
        return mask & view.notna() & (view.map(_norm, na_action="ignore") == _norm(pub["views"]))
    try:
        n_views = int(pub["views"])
    except (TypeError, ValueError):
        return None
    mask &= res["n_views"] == n_views
    iterations = pd.Series(method_attribute(res["method"], "optc_iterations"), index=res.index, dtype=object)
    optc_names = {p for n in res["method"][iterations.notna()].unique() for p in lookup(n).published}
    if method in optc_names:
        # optC: one method per iteration count; not printed (Tables 10-11): our run with the most iterations
        its = iterations.dropna().astype(int).max() if pd.isna(pub["iterations"]) else int(pub["iterations"])
        return mask & (iterations == its)
    ours = ours_of(method)
    if ours is not None and "gamma_B" in setting:  # Table 2: the gamma_B / gamma_W ablation of that solver
        b_on, w_on = "gamma_B>0" in setting, "gamma_W>0" in setting
        ablation = [n for n in res["method"].unique() if (m := lookup(n)) is not None and m.run == "ablation"
                    and m.estimator == lookup(ours).estimator]
        return (mask & res["method"].isin(ablation) & ((res["gamma_B"].fillna(0) > 0) == b_on)
                & ((res["gamma_W"].fillna(0) > 0) == w_on))
    if ours is not None:
        return mask & (res["method"] == ours)
    return None


def published_comparison(results, source, tables=None):
    """Published rows of ``source``'s paper dataset with our mean/std/n over splits and the difference.

    ``results``: the workflow's ``results.csv`` (DataFrame or path), accuracies as fractions.
    ``source``: our dataset source (``flowers17``, ``caltech101``, ``cub``). Returns columns
    table, method, setting, views, l_c, u_c, iterations, published_mean, published_std, ours_mean,
    ours_std, n_splits, difference (ours - published, percentage points), note.
    """
    res = pd.read_csv(results) if not isinstance(results, pd.DataFrame) else results
    name = published_name(source)
    if name is None:
        known = sorted(s.name for s in SOURCES.values() if s.published)
        raise ValueError(f"no published numbers for source {source!r} (known: {known})")
    pub = load_published("jmlr2016_results")
    pub = pub[pub["dataset"] == name]
    if tables is not None:
        pub = pub[pub["table"].isin(list(tables))]
    rows = []
    for _, p in pub.iterrows():
        mask = _our_rows(res, p)
        acc = res.loc[mask, "accuracy"] * 100 if mask is not None else pd.Series(dtype=float)
        ours = float(acc.mean()) if len(acc) else np.nan
        rows.append(dict(table=int(p["table"]), method=p["method"], setting=p["setting"], views=p["views"],
                         l_c=p["labels_per_class"], u_c=p["unlabelled_per_class"], iterations=p["iterations"],
                         published_mean=p["mean"], published_std=p["std"], ours_mean=ours,
                         ours_std=float(acc.std()) if len(acc) > 1 else np.nan, n_splits=int(len(acc)),
                         difference=ours - p["mean"] if len(acc) else np.nan, note=p.get("note", "")))
    return pd.DataFrame(rows)
