"""The config section ``incomplete`` of the incomplete-views study (:mod:`mvl.workflow.incomplete`): data sets,
missing fractions, patterns, seeds and draw sizes.

Light on purpose (no numpy): :mod:`mvl.workflow.settings` parses the section through :func:`parse_settings`
while the Snakefile is parsed. No paper section (workflow configuration).
"""

from __future__ import annotations

from typing import NamedTuple

from ..data.sources import source as data_source
from .sections import SettingsError, as_tuple

__all__ = ["INCOMPLETE_PATTERNS", "IncompleteSettings", "parse_settings"]

INCOMPLETE_PATTERNS = ("random", "class", "block")
"""Missing-view patterns of the incomplete-views study (:func:`mvl.workflow.incomplete.presence_mask`): "random"
(a fraction q of the (sample, view) entries), "class" (a fraction q of the (class, view) cells, each absent for every
sample of its class), "block" (the same on random blocks of samples instead of classes)."""


class IncompleteSettings(NamedTuple):
    """The config section ``incomplete``: MVL-LS on incomplete views against mean imputation and the
    best single view, for every data set (an embedded source), split seed, pattern and missing fraction q; the
    draw sizes per class (labelled, unlabelled, test), the number of sample blocks of the "block" pattern and the
    gamma_B of the multi-view MVL-LS fits (every other hyperparameter: the package defaults)."""

    datasets: tuple
    q: tuple
    patterns: tuple
    seeds: tuple
    labels_per_class: int = 5
    unlabelled_per_class: int = 50
    test_per_class: int = 100
    n_blocks: int = 10
    gamma_B: float = 0.0  # of the multi-view MVL-LS fits (0: no coupling across views)

    def runs(self):
        """(data set, seed) of every job."""
        return [(d, s) for d in self.datasets for s in self.seeds]

    def job(self):
        """What one job reads (the rule's params): these settings without the lists of data sets and seeds (its
        wildcards), so that adding a seed or a data set reruns no finished job."""
        return self._replace(datasets=(), seeds=())


def parse_settings(sec):
    """:class:`IncompleteSettings` of the config section ``incomplete`` (None: absent or no data set)."""
    if not sec or not sec.get("datasets"):
        return None
    where = "incomplete"
    for name in sec["datasets"]:
        try:
            src = data_source(name)
        except ValueError as err:
            raise SettingsError(f"{where}.datasets: {err}") from None
        if src.kind != "embedded":
            raise SettingsError(f"{where}.datasets: {name!r} is a {src.kind} source; the incomplete-views study "
                                "runs on the embedded multi-view sources (feature views), e.g. mfeat, mvmnist")
    q = as_tuple(float(v) for v in sec.get("q", [0.0, 0.2, 0.4, 0.6]))
    if not q or any(not 0.0 <= v < 1.0 for v in q) or len(set(q)) != len(q):
        raise SettingsError(f"{where}.q: missing fractions must be distinct values in [0, 1), got {list(q)}")
    patterns = as_tuple(sec.get("patterns", ["random", "class"]))
    unknown = [p for p in patterns if p not in INCOMPLETE_PATTERNS]
    if unknown or not patterns:
        raise SettingsError(f"{where}.patterns: unknown pattern(s) {unknown}; one of {INCOMPLETE_PATTERNS}")
    seeds = as_tuple(int(s) for s in sec.get("seeds", [0, 1, 2]))
    if not seeds or min(seeds) < 0:
        raise SettingsError(f"{where}.seeds: at least one seed, each >= 0, got {list(seeds)}")
    sizes = {k: int(sec.get(k, d)) for k, d in (("labels_per_class", 5), ("unlabelled_per_class", 50),
                                               ("test_per_class", 100), ("n_blocks", 10))}
    for k, lo in (("labels_per_class", 1), ("unlabelled_per_class", 0), ("test_per_class", 1), ("n_blocks", 1)):
        if sizes[k] < lo:
            raise SettingsError(f"{where}.{k}: must be >= {lo}, got {sizes[k]}")
    gamma_B = float(sec.get("gamma_B", 0.0))
    if not gamma_B >= 0:
        raise SettingsError(f"{where}.gamma_B: must be >= 0, got {gamma_B}")
    return IncompleteSettings(datasets=as_tuple(sec["datasets"]), q=q, patterns=patterns, seeds=seeds, **sizes,
                              gamma_B=gamma_B)
