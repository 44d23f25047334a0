"""The one convention of the report figures: a study's ``*_figure`` functions return a matplotlib Figure, and
:func:`save_figure` writes it, atomically and with its checksum sidecar (:mod:`mvl.workflow.io`), to the paths its
rule declares.

Figures are built with :func:`new_figure` (a :class:`matplotlib.figure.Figure`, not pyplot: nothing global to close,
no backend to select), so a report notebook shows the same object it saves. No paper section (workflow
infrastructure).
"""

from __future__ import annotations

import os

__all__ = ["new_figure", "save_figure"]


def new_figure(nrows, ncols, width, height, layout="constrained", **kw):
    """A Figure of ``width`` x ``height`` inches and its (nrows, ncols) array of axes (``squeeze=False``).

    Parameters
    ----------
    nrows, ncols : int
        The grid of axes.
    width, height : float
        The figure size in inches.
    layout : str or None
        Matplotlib's layout engine ("constrained", "tight" or None).
    **kw
        Passed on to :meth:`matplotlib.figure.Figure.subplots` (e.g. ``sharey``).

    Returns
    -------
    fig : matplotlib.figure.Figure
    axes : numpy.ndarray of matplotlib.axes.Axes, shape (nrows, ncols)
    """
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout=layout)
    axes = fig.subplots(nrows, ncols, squeeze=False, **kw)
    return fig, axes


def save_figure(fig, *paths, dpi=150, bbox_inches=None):
    """Write ``fig`` to every path atomically (temporary file beside it, then rename), each with its SHA-256 sidecar
    ``<path>.sha256`` (:func:`mvl.workflow.io.atomic_path`), so that the workflow's start-up check finds a figure
    whose content changed (e.g. truncated) and its report is recomputed, as for the tables; the format from the
    suffix.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    *paths : str or os.PathLike
        The files to write (``.png``, ``.pdf``, ...); a ``None`` path is skipped.
    dpi : int
        Resolution of raster formats.
    bbox_inches : str or None
        ``"tight"`` keeps artists outside the axes grid (a legend below the panels) in the saved file.
    """
    from .io import atomic_path

    for path in paths:
        if path is None:
            continue
        with atomic_path(path, checksum=True) as tmp:
            fig.savefig(tmp, dpi=dpi, format=os.path.splitext(str(path))[1][1:] or "png", bbox_inches=bbox_inches)
