"""The config section ``scale`` of the scale study (:mod:`mvl.workflow.scale`): sizes, methods and the fit settings.

Light on purpose (no numpy): :mod:`mvl.workflow.settings` parses the section through :func:`parse_settings`
while the Snakefile is parsed. No paper section (workflow configuration).
"""

from __future__ import annotations

from typing import NamedTuple

from .methods import methods_for
from .sections import SettingsError, as_tuple

__all__ = ["METHODS", "ScaleSettings", "parse_settings", "split_name"]

METHODS = tuple(m.name for m in methods_for("scale"))
"""Methods of the scale study (:func:`mvl.workflow.methods.methods_for` ("scale")); "nystrom_<M>" names nystrom with M
centres."""


def split_name(name):
    """(method, M) of a config name: "nystrom_<M>" -> ("nystrom", "<M>"), any other name -> (name, "") (method
    names may hold an underscore, e.g. "vecchia_direct")."""
    base, _, M = name.rpartition("_")
    if base and M.isdigit():
        return base, M
    return name, ""


class ScaleSettings(NamedTuple):
    """The config section ``scale``: sizes, methods, the hyperparameter preset, the data seed, labelled
    points per class, cg's tolerance, iteration limit and preconditioner centres, the largest n of "structured",
    the kNN rule (:func:`mvl.workflow.scale.graph_neighbors`), the output folder under ``results/`` (one per study:
    the ``scale`` and ``scale_graph`` profiles keep their fits apart)."""

    sizes: tuple
    methods: tuple
    preset: str
    seed: int
    labels: int
    tol: float
    max_iter: int
    centres: int
    structured_max: int
    neighbors: str = "scaled"
    folder: str = "scale"

    def runs(self):
        """(method name, n) of every fit: "structured" only up to structured_max, nystrom_<M> only where M <= n."""
        out = []
        for n in self.sizes:
            for name in self.methods:
                base, M = split_name(name)
                if (base == "structured" and n > self.structured_max) or (M and int(M) > n):
                    continue
                out.append((name, n))
        return out

    def fit_settings(self, name):
        """Keyword arguments of :func:`mvl.workflow.scale.write_fit` for the method ``name``."""
        M = split_name(name)[1]
        return dict(preset=self.preset, seed=self.seed, labels=self.labels, tol=self.tol, max_iter=self.max_iter,
                    n_components=int(M) if M else self.centres, neighbors=self.neighbors)


def parse_settings(sc):
    """The :class:`ScaleSettings` of the config section ``scale`` (None without sizes)."""
    if not sc or not sc.get("sizes"):
        return None
    methods = as_tuple(sc.get("methods") or ["structured", "cg", "nystrom_1000", "labelonly", "labelspreading",
                                           "ridge"])
    for name in methods:
        base, M = split_name(name)
        if base not in METHODS or (base == "nystrom") != bool(M) or (M and not M.isdigit()):
            raise SettingsError(f"scale.methods: unknown method {name!r}; one of {METHODS} (nystrom as "
                                "nystrom_<M>, M the number of centres)")
    return ScaleSettings(as_tuple(int(n) for n in sc["sizes"]), methods, sc.get("preset", "graph"),
                         int(sc.get("seed", 1)), int(sc.get("labels_per_class", 5)), float(sc.get("tol", 1e-6)),
                         int(sc.get("max_iter", 300)), int(sc.get("centres", 1000)),
                         int(sc.get("structured_max", 8000)), sc.get("neighbors", "scaled"),
                         str(sc.get("folder", "scale")))
