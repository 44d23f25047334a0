"""Published numbers transcribed from the papers, and the reference numbers the reports quote, as pandas DataFrames.

The CSV files live in ``mvl/data/published/`` and are read with :mod:`importlib.resources`:

``jmlr2016_results``
    Tables 2-11 of Minh, Bazzani & Murino (JMLR 2016), long format: one row per printed cell
    (table, dataset, method, setting, views, labels_per_class, unlabelled_per_class, iterations,
    metric, mean, std, note). Accuracies are in percent, as printed.
``jmlr2016_parameters``
    Table 1 of the same paper (gamma_A, gamma_B, gamma_W per method and dataset) and the MVL-LS-optC
    settings and learned weight vectors stated in Section 7.6 (dataset, parameter, value, note).
``sindhwani2008_results``
    Tables 2 (test) and 3 (unlabelled) of Sindhwani & Rosenberg (ICML 2008): error rates in percent,
    mean and std over 10 splits (table, dataset, method, error_type, mean, std, note).
``sindhwani2008_parameters``
    Tables 1 (split sizes d, c, l, u, t, v) and 4 (nn, sigma, p, gamma_1, gamma_2, mu) of the same paper
    (table, dataset, parameter, value, note).

The reference numbers the study reports quote beside their own, read with :func:`load_reference`, in the same
folder; each row names its source (a paper and its protocol):

``peers_reference``
    The accuracies (%) the peers study's report shows beside its own (dataset, setting, labels_per_class,
    method, accuracy, source): the literature, cited in ``source`` with its protocol.

The text versions of the papers are PDF-to-text conversions, and some JMLR tables are garbled. A note starting
with ``[illegible]`` marks a cell whose number could not be read (its mean/value is left empty), ``[reconstructed]``
a number recovered from a garbled cell (the note says how and what corroborates it) and ``[N/A]`` a cell printed
as N/A or '-'. Every other number is as printed; the CSV files keep the printed digits (e.g. ``73.00``).
"""

from __future__ import annotations

from importlib import resources

import pandas as pd

__all__ = ["PUBLISHED", "REFERENCES", "load_published", "load_reference"]

PUBLISHED = ("jmlr2016_results", "jmlr2016_parameters", "sindhwani2008_results", "sindhwani2008_parameters")
REFERENCES = ("peers_reference",)

# columns read as text (everything else is left to pandas: integers, floats with NaN for empty cells)
_TEXT_COLUMNS = ("dataset", "method", "setting", "views", "parameter", "metric", "error_type", "note", "pattern",
                 "source")
_INT_COLUMNS = ("table", "labels_per_class", "unlabelled_per_class", "iterations")


def load_published(name: str) -> pd.DataFrame:
    """Return the published table ``name`` (one of :data:`PUBLISHED`) as a DataFrame.

    Integer columns with empty cells (labels_per_class, unlabelled_per_class, iterations) use the nullable
    ``Int64`` dtype; text columns are strings with empty cells as ``""``; mean, std and value are floats
    with NaN where the paper prints nothing (or the cell is illegible, see the note column).
    """
    if name not in PUBLISHED:
        raise ValueError(f"unknown published table {name!r}; expected one of {', '.join(PUBLISHED)}")
    return _read(name)


def load_reference(name: str) -> pd.DataFrame:
    """Return the reference table ``name`` (one of :data:`REFERENCES`) as a DataFrame.

    Parameters
    ----------
    name : str
        ``"peers_reference"``.

    Returns
    -------
    pandas.DataFrame
        One row per quoted number, with its ``source``; ``accuracy`` is a float, ``labels_per_class`` an
        ``Int64`` column.
    """
    if name not in REFERENCES:
        raise ValueError(f"unknown reference table {name!r}; expected one of {', '.join(REFERENCES)}")
    return _read(name)


def _read(name: str) -> pd.DataFrame:
    path = resources.files("mvl").joinpath("data", "published", f"{name}.csv")
    with path.open("r", encoding="utf-8") as fh:
        df = pd.read_csv(fh, dtype={c: str for c in _TEXT_COLUMNS}, keep_default_na=False, na_values=[""])
    for col in df.columns:
        if col in _TEXT_COLUMNS:
            df[col] = df[col].fillna("")
        elif col in _INT_COLUMNS:
            df[col] = df[col].astype("Int64")
        else:
            df[col] = df[col].astype(float)
    return df
