"""The one rule by which a report states that one method is better than another.

Every verdict sentence of the reports comes from :func:`judge`, applied to all the comparisons a report makes
(its *family*):

1. The test is the two-sided paired t-test (``scipy.stats.ttest_rel``) over the splits or draws that both methods
   ran on (pairs with a missing side are dropped). Differences that are all equal and non-zero give p = 0; all zero
   give p = 1.
2. A comparison with fewer than :data:`MIN_PAIRS` pairs is not tested: its verdict is "too few splits to tell",
   whatever its numbers, and it does not count in the family.
3. The p-values of the tested comparisons are corrected for their number by Holm's step-down procedure (Holm 1979):
   with the m p-values sorted ascending, p_(i) is adjusted to max_{j <= i} min(1, (m - j + 1) p_(j)).
4. A comparison whose adjusted p is below :data:`ALPHA` is a verdict of "better" or "worse" by the sign of the mean
   difference (a larger score is better; for errors, ``lower_is_better=True`` of :func:`judge` turns it round);
   otherwise "no difference shown".

The sentence of each comparison is generated from these numbers (:meth:`Verdict.sentence`); no report writes a
verdict as fixed text.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

__all__ = ["ALPHA", "MIN_PAIRS", "Verdict", "paired_test", "holm", "judge", "verdict_table", "format_p"]

ALPHA = 0.05
"""Level of the test after Holm's correction."""

MIN_PAIRS = 6
"""Fewest splits or draws under which no verdict is given ("too few splits to tell")."""

OUTCOMES = ("better", "worse", "no difference shown", "too few splits to tell")


@dataclass(frozen=True)
class Verdict:
    """One paired comparison, ``a`` against ``b``, and what the rule concludes.

    ``mean_a``, ``mean_b`` and ``difference`` (mean of a - b) are in the unit of the inputs times ``scale`` of
    :func:`judge` (points of accuracy by default); ``p`` is the paired t-test's p-value (NaN when not tested),
    ``p_holm`` the Holm-adjusted one, ``family`` the number of tested comparisons it was corrected over.
    ``wins`` / ``losses`` count the pairs where ``a`` is better / worse than ``b`` (above / below, or below /
    above when ``lower_is_better``).
    """

    a: str
    b: str
    context: str
    n: int
    mean_a: float
    mean_b: float
    difference: float
    wins: int
    losses: int
    p: float
    p_holm: float = np.nan
    family: int = 0
    outcome: str = "too few splits to tell"
    unit: str = "splits"
    alpha: float = ALPHA
    min_pairs: int = MIN_PAIRS
    lower_is_better: bool = False

    @property
    def tested(self):
        return self.n >= self.min_pairs

    def sentence(self):
        """The verdict as one sentence, every number in it from this comparison."""
        where = f"{self.context}: " if self.context else ""
        nums = (f"{self.a} {self.mean_a:.2f} against {self.b} {self.mean_b:.2f}"
                f"{' (lower is better)' if self.lower_is_better else ''}, {self.difference:+.2f} points "
                f"over {self.n} {self.unit} (better on {self.wins}, worse on {self.losses})")
        if not self.tested:
            return (f"{where}{nums}: too few {self.unit} to tell (the rule needs at least {self.min_pairs}).")
        corr = (f"Holm-adjusted over {self.family} comparisons p = {format_p(self.p_holm)}" if self.family > 1
                else "the only comparison tested")
        test = f"paired t p = {format_p(self.p)}, {corr}"
        if self.outcome == "better":
            end = f"{self.a} is better than {self.b} (adjusted p < {self.alpha:g})"
        elif self.outcome == "worse":
            end = f"{self.a} is worse than {self.b} (adjusted p < {self.alpha:g})"
        else:
            end = f"no difference shown at the {self.alpha:g} level"
        return f"{where}{nums}; {test}: {end}."


def format_p(p):
    """A p-value as the verdict sentences print it (two significant digits, n/a when undefined)."""
    if not np.isfinite(p):
        return "n/a"
    if p == 0:
        return "0"
    return f"{p:.2g}" if p >= 1e-4 else f"{p:.1e}"


def paired_test(x, y, scale=100.0):
    """Paired t-test of ``x`` against ``y`` (Series indexed by split or draw; pairs with a missing side dropped).

    Returns a dict with n, mean_a, mean_b, difference (mean of x - y), wins, losses (pairs where x is above /
    below y), all times ``scale``, and p (two-sided; NaN with fewer than two pairs).
    """
    from scipy import stats

    joined = pd.concat({"a": pd.Series(x, dtype=float), "b": pd.Series(y, dtype=float)}, axis=1).dropna()
    a, b = joined["a"].to_numpy(float) * scale, joined["b"].to_numpy(float) * scale
    d = a - b
    n = int(d.size)
    if n < 2:
        p = np.nan
    elif np.ptp(d) <= 1e-9 * max(1.0, float(np.abs(d).max())):  # no spread (up to rounding): t is 0/0 or infinite
        p = 1.0 if np.abs(d).max() <= 1e-9 else 0.0
    else:
        p = float(stats.ttest_rel(a, b).pvalue)
    mean = (lambda v: float(v.mean())) if n else (lambda v: np.nan)
    return dict(n=n, mean_a=mean(a), mean_b=mean(b), difference=mean(d), wins=int(np.sum(d > 0)),
                losses=int(np.sum(d < 0)), p=p)


def holm(pvalues):
    """Holm's step-down adjusted p-values, in the input order (NaN entries stay NaN and are not counted)."""
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    idx = np.flatnonzero(np.isfinite(p))
    m = idx.size
    if m == 0:
        return out
    order = idx[np.argsort(p[idx], kind="stable")]
    adj = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out[order] = np.maximum.accumulate(adj)
    return out


def judge(comparisons, alpha=ALPHA, min_pairs=MIN_PAIRS, unit="splits", scale=100.0, lower_is_better=False):
    """Apply the rule to one report's family of comparisons.

    ``comparisons``: iterable of dicts with keys ``a`` and ``b`` (labels), ``x`` and ``y`` (Series of the two
    methods' scores indexed by split or draw) and optionally ``context`` (where, e.g. "l_c = 5"). Scores are
    accuracies (larger is better) unless ``lower_is_better`` (errors): then ``a`` is "better" when its mean is
    below ``b``'s. Returns one :class:`Verdict` per comparison, in the input order.
    """
    if alpha <= 0 or alpha >= 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if int(min_pairs) < 2:
        raise ValueError(f"min_pairs must be at least 2 (a paired t-test needs two pairs), got {min_pairs}")
    base = []
    for c in comparisons:
        missing = {"a", "b", "x", "y"} - set(c)
        if missing:
            raise ValueError(f"a comparison needs keys a, b, x, y; missing {sorted(missing)}")
        r = paired_test(c["x"], c["y"], scale=scale)
        if lower_is_better:
            r["wins"], r["losses"] = r["losses"], r["wins"]
        base.append(Verdict(a=str(c["a"]), b=str(c["b"]), context=str(c.get("context", "")), unit=unit,
                            alpha=float(alpha), min_pairs=int(min_pairs), lower_is_better=bool(lower_is_better),
                            **r))
    tested = [v.n >= min_pairs and np.isfinite(v.p) for v in base]
    adj = holm([v.p if t else np.nan for v, t in zip(base, tested, strict=True)])
    m = int(sum(tested))
    out = []
    for v, t, q in zip(base, tested, adj, strict=True):
        if not t:
            out.append(replace(v, outcome="too few splits to tell"))
            continue
        ahead = v.difference < 0 if lower_is_better else v.difference > 0
        outcome = ("better" if ahead else "worse") if q < alpha else "no difference shown"
        out.append(replace(v, p_holm=float(q), family=m, outcome=outcome))
    return out


def verdict_table(verdicts):
    """The verdicts as a table: context, a, b, n, means, difference, wins / losses, p, adjusted p, verdict."""
    return pd.DataFrame([{"where": v.context, "method": v.a, "against": v.b, v.unit: v.n,
                          "mean": round(v.mean_a, 2), "mean (against)": round(v.mean_b, 2),
                          "difference (points)": v.difference, "better / worse": f"{v.wins} / {v.losses}",
                          "p (paired t)": v.p, "p (Holm)": v.p_holm, "verdict": v.outcome} for v in verdicts])
