"""The config section ``peers`` of the peers study (:mod:`mvl.workflow.peers`): data sets, seeds, methods.

Light on purpose (no numpy): :mod:`mvl.workflow.settings` parses the section through :func:`parse_settings`
while the Snakefile is parsed. No paper section (workflow configuration).
"""

from __future__ import annotations

from typing import NamedTuple

from .methods import methods_for
from .sections import SettingsError, as_tuple

__all__ = ["PEER_METHODS", "INDUCTIVE_METHODS", "DEFAULT_METHODS", "PEER_DATASETS", "PeersSettings", "parse_settings"]

PEER_METHODS = tuple(m.name for m in methods_for("peers"))
"""Methods of the peers study (:mod:`mvl.workflow.peers`; :func:`mvl.workflow.methods.methods_for` ("peers")): MVL-LS
with the squared loss and the package defaults (on the views, and on the concatenated views as one view) and with the
graph-regime setting, MVL-LS with the Poisson-type data term (``loss="poisson"``), graphlearning's Laplace and Poisson
learning on the kNN graph of the concatenated views and on the sum of the per-view kNN graphs (``_sum``),
scikit-learn's LabelSpreading."""
INDUCTIVE_METHODS = tuple(m.name for m in methods_for("peers") if m.inductive)
"""The methods that predict points outside their graph (the inductive setting); the graph methods cannot."""
DEFAULT_METHODS = tuple(m.name for m in methods_for("peers") if m.by_default)
"""The methods run when the config names none."""
PEER_DATASETS = ("mfeat", "uspst", "mvmnist")
"""Data sets of the peers study: UCI Multiple Features (embedded), USPST (Sindhwani's file, the BNS-2006 splits),
multi-view MNIST (through the data options)."""


class PeersSettings(NamedTuple):
    """The config section ``peers``: MVL-LS against Laplace and Poisson learning on real data,
    transductive. Data sets, seeds (one labelled draw each), labelled points per class, methods, k of the kNN
    graphs, and ``points_per_class`` (None: every point of the data set; an integer: a seeded stratified subset of
    at most that many points per class, for the quick profiles)."""

    datasets: tuple
    seeds: tuple
    labels_per_class: tuple
    methods: tuple
    n_neighbors: int = 10
    points_per_class: int | None = None
    inductive: bool = False

    def runs(self):
        """(dataset, seed) of every job."""
        return [(d, s) for d in self.datasets for s in self.seeds]

    def for_run(self, dataset, seed):
        """The settings one job reads: these, with its one data set and seed (a job's params then change only with
        what changes its result, not when data sets or seeds are added)."""
        return self._replace(datasets=(dataset,), seeds=(int(seed),))


def parse_settings(sc):
    """The :class:`PeersSettings` of the config section ``peers`` (None without data sets or seeds)."""
    if not sc or not sc.get("datasets") or not sc.get("seeds"):
        return None
    for key, allowed in (("datasets", PEER_DATASETS), ("methods", PEER_METHODS)):
        bad = [v for v in sc.get(key) or [] if v not in allowed]
        if bad:
            raise SettingsError(f"peers.{key}: unknown {bad}; one of {allowed}")
    methods = as_tuple(sc.get("methods") or DEFAULT_METHODS)
    lcs = as_tuple(int(v) for v in sc.get("labels_per_class") or [1, 5])
    k = int(sc.get("n_neighbors", 10))
    ppc = sc.get("points_per_class")
    ppc = None if ppc is None else int(ppc)
    if k < 1:
        raise SettingsError(f"peers.n_neighbors: must be >= 1, got {k}")
    if min(lcs) < 1:
        raise SettingsError(f"peers.labels_per_class: must be >= 1, got {list(lcs)}")
    if ppc is not None and ppc <= max(lcs):
        raise SettingsError(f"peers.points_per_class: {ppc} leaves no unlabelled point of a class at l_c = "
                            f"{max(lcs)} (labels_per_class); use more points per class or null (every point)")
    return PeersSettings(as_tuple(sc["datasets"]), as_tuple(int(s) for s in sc["seeds"]), lcs, methods, k, ppc,
                         bool(sc.get("inductive", False)))
