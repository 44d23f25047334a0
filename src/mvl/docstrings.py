"""Shared numpydoc parameter descriptions of the estimators, written once.

The parameters the MVL estimators share (the gammas of eq 10, the combination c of eq 52, the graph of
eq 60-63, the classes) and those every estimator shares (how X becomes per-view kernels) read the same in
every class docstring: :data:`PARAMETERS` holds each one's type and description. A class docstring names
them in a placeholder line, ``{name, name, ...}`` at the indentation of the entries, and the decorator
:func:`shared_parameters` replaces that line by the numpydoc entries ``name : type, default value`` with
their descriptions; the default is read from the class's ``__init__`` signature, so it is each class's own
and cannot drift from the code::

    @shared_parameters
    class MyEstimator(MVLClassifier):
        '''...

        Parameters
        ----------
        {gamma_A, gamma_B, gamma_W}
        tol : float > 0, default 1e-3
            An option of this estimator alone.
        {kernel, views, bandwidth}
        '''

Entries shared as written (:data:`SECTIONS`: the attributes of the views, the References section of the
MVL estimators, the Examples heading with the examples' data set-up, ``{mfeat_example}``) are placed the
same way, ``{view_attributes}``. Only whole lines holding one placeholder are replaced, so other braces of a
docstring are left alone.
"""

from __future__ import annotations

import inspect
import re
import textwrap

__all__ = ["PARAMETERS", "SECTIONS", "AUTO_GAMMA_A", "AUTO_GAMMA_B", "default_text", "fill_parameters",
           "parameter_entry", "shared_parameters"]

PARAMETERS = {
    # ---------------------------------------------------------------- the MVL estimators
    "gamma_A": ("float > 0", """\
RKHS regularisation weight (gamma_A ||f||^2 in eq 10). Typical range 1e-7 to 1e-1; the paper uses 1e-5."""),
    "gamma_B": ("float >= 0", """\
Between-view consistency weight (gamma_B <f, M_B f>, eq 53-58). Typical range 0 to 1e-4 (the paper: 1e-6);
0 leaves the between-view term out."""),
    "gamma_W": ("float >= 0", """\
Within-view manifold regularisation weight (gamma_W <f, M_W f>, eq 53, 60-64) on the graph of
``n_neighbors``. Typical range 0 to 1; 0 leaves the graph (and the unlabelled samples, unless gamma_B > 0)
out, the choice for purely supervised data. With the paper's dense graph (``n_neighbors=None``) keep it at
1e-6 or below."""),
    "c": ("array of shape (m,) or None", """\
Combination vector of C = c^T (x) I (eq 52); None is the average 1/m (eq 50-51, the paper's choice). Any
real values are allowed, negative ones too, but not all zeros."""),
    "laplacian": ('"normalized", "unnormalized" or array (n_samples, n_samples, n_views)', """\
L^i = I - D^-1/2 W D^-1/2 (the authors' code) or D - W of each view's graph W (built from the view's Gram
matrix, see ``n_neighbors``), or the Laplacians themselves, sample-first like the kernels (then
``n_neighbors`` is not used, ``graph_weights`` must be "kernel", and ``laplacian_power`` None means 1)."""),
    "n_neighbors": ('int >= 1, "auto" or None', """\
The graph: a symmetrised kNN graph of each view's kernel with this many neighbours (typical 5 to 20), or
None for the paper's dense kernel weights W = K (Section 7.1; with ``laplacian_power`` None then meaning 1).
"auto" takes 0.5 % of the training samples within [10, 500] (:func:`mvl.graph.auto_neighbors`): with many
unlabelled samples a fixed k makes the neighbourhoods shrink as n grows."""),
    "laplacian_power": ("int >= 1 or None", """\
p of the iterated Laplacian (L^i)^p in M_W (Belkin, Niyogi & Sindhwani 2006) in place of L of
eq (60)-(63). None: 2 for a kNN graph, 1 for the paper's dense graph and for an explicit ``laplacian``.
Typical 1 to 4; each power costs n x n products."""),
    "graph_weights": ('"kernel" or "binary"', """\
Edge weights of the kNN graph: the kernel value K^i_jk (0 where negative), or 1 (the default of the
manifold-regularization code). "binary" needs ``n_neighbors``."""),
    "n_classes": ("int >= 2 or None", """\
Number of classes P. If given, labels must be integers in 0..P-1 and each class needs a labelled sample;
if None, the classes are the distinct labels."""),
    # ---------------------------------------------------------------- every estimator: X to per-view kernels
    "kernel": ('"precomputed", "rbf", "linear" or "chi2"', """\
"precomputed": X holds per-view Gram matrices, sample-first (n_samples, n_samples_fit, m) (the diagonal
matrix-valued kernel of Section 7.1, eq 93-94; a 2-D X is one view), each symmetric positive semi-definite
(an indefinite one gives an IndefiniteKernelWarning). Otherwise X is a feature matrix (n_samples,
n_features) cut into views by ``views`` (or a list of per-view arrays), and each view gets a Gaussian
("rbf", exp(-||x - z||^2 / (2 sigma^2))), linear or chi2 (exp(-D_chi2 / s), non-negative features) kernel
with parameters from the training samples only."""),
    "views": ("None, sequence of int or sequence of index arrays", """\
The column blocks of X that form the views: sizes (adding up to n_features, in column order) or one array
of column indices per view (as scikit-multimodallearn's ``views_ind``). None: all columns are one view.
Ignored with "precomputed" and with a list of per-view arrays."""),
    "bandwidth": ('None, "median", "mean", float > 0, or a sequence with one of these per view', """\
sigma of "rbf" or the scale s of "chi2": a rule over the pairwise (chi2) distances of the view's training
samples, or a value, or one of these per view. None: "median" for "rbf", "mean" for "chi2" (Gehler &
Nowozin 2009). A view whose kernel comes out constant or diagonal gives a DegenerateKernelWarning."""),
}

AUTO_GAMMA_A = ('float > 0 or "auto"', """\
RKHS regularisation weight (gamma_A ||f||^2 in eq 10). Typical range 1e-7 to 1e-1; the paper uses 1e-5.
"auto": 1e-5 (:data:`mvl.estimators.base.AUTO_GAMMA_A`) for every solver but "vecchia_direct" (what
``solver="auto"`` picks in the measured graph regime beyond 5,000 points, ``regime_``), which takes the
gamma_A at which the kernel term is 1e-3 of the objective at the graph term's limit
(:func:`mvl.solvers.vecchia_direct.share_gamma_A`: in the graph regime the validated gamma_A falls as n
grows), measured on the fit's own graphs and Vecchia factors, unless that limit is degenerate
(:func:`mvl.solvers.vecchia_direct.limit_margin_ratio` below 0.3 or
:func:`~mvl.solvers.vecchia_direct.limit_class_balance` below 0.5: then 1e-5). With ``loss="poisson"`` (and
"auto" at few labels) a fit whose kernel term outweighs the graph term at the solution is solved again at a smaller
gamma_A, from the graph limit's energies (:mod:`mvl.estimators.poisson_fit`). ``gamma_A_`` holds the value used;
a number is used as given.""")
"""The ``gamma_A`` entry of MVL-LS, whose default "auto" follows the graph regime's rule."""

AUTO_GAMMA_B = ('float >= 0 or "auto"', """\
Between-view consistency weight (gamma_B <f, M_B f>, eq 53-58). Typical range 0 to 1e-4 (the paper: 1e-6);
0 leaves the between-view term out. "auto": 0 on complete views; when training views are missing,
:data:`mvl.estimators.base.INCOMPLETE_GAMMA_B` (3e-4, chosen on validation draws), since the between-view
term is then what carries the labels to the samples and views without labels (``gamma_B_`` holds the value
used). gamma_B = 0 with a view that no labelled sample has warns (RegularizationWarning).""")
"""The ``gamma_B`` entry of MVL-LS, whose default "auto" adapts to incomplete views."""

SECTIONS = {
    # whole entries, placed at the entries' indentation
    "view_attributes": """\
n_views_ : int
    Views m of the fit: the views of X, less ``dropped_views_``.
n_train_ : int
    Training samples n (columns of the kernels at prediction).
n_features_in_ : int
    Columns of X at fit.
feature_names_in_ : array of str
    The column names of X, when X was a DataFrame with string column names.
bandwidths_ : list or None
    Per-view sigma ("rbf") or scale ("chi2") computed at fit.
view_columns_ : list of arrays
    Column indices of each view (feature matrix input).
view_n_features_ : tuple of int
    Features of each view (feature input: a feature matrix cut by ``views``, or a list of per-view arrays).
view_mask_ : bool array (n, m) or None
    Which training samples have which view (True: present); None when no view is missing.
dropped_views_ : tuple of int
    The views (positions in X's views) missing in every training sample, dropped with a MissingViewWarning: the
    fit is that on the other views, and prediction ignores them; () when none was.""",
    "fit_attributes": """\
classes_ : array (P,)
    The class labels, in the order of the decision columns (-1, the unlabelled marker, is never a class).
n_labelled_ : int
    Labelled training samples l (labels other than -1).
fit_seconds_ : float
    Wall-clock seconds of ``fit``.""",
    "solve_attributes": """\
solver_ : str
    The solver used ("auto" resolved).
n_iter_ : int, or array (P,) with one per binary problem (MVLBinarySVM)
    Iterations of the solve: 1 for a direct solve ("structured", "dense", "nystrom"), conjugate-gradient
    iterations for "cg" and "graph"; MVL-LS-optC: iterations of the alternation of the kept restart; the SVMs:
    the dual solver's iterations (SMO block updates, ADMM / L-BFGS-B / APG iterations).
residual_ : float, or array (P,) with one per binary problem (MVLBinarySVM)
    The final residual of the system solved, measured at the returned coefficients (never an estimate):
    MVL-LS with "structured", "dense", "cg" or "graph", the true relative residual ||r - (B + l gamma_A I) a|| /
    ||r|| of Theorem 10's system (68), the largest over the output columns; "nystrom", that of its restricted
    system; MVL-LS-optC, that of the f-step that gave the returned coefficients; the SVMs, the largest violation
    of the dual's optimality (KKT) conditions, Lemma 31, at the returned alpha (``kkt_violation_``).
converged_ : bool, or array (P,) with one per binary problem (MVLBinarySVM)
    Whether the solve met its stopping rule (``tol``); MVL-LS's direct solves ("structured", "dense",
    "vecchia_direct", "vecchia"; every loss): whether ``residual_`` <= ``tol``, the tolerance of "cg". False comes
    with a ConvergenceWarning that says why (max_iter reached, a conjugate-gradient breakdown on an indefinite
    kernel, or a direct solve of a system too ill-conditioned for float64, naming the gamma that makes it so) and
    what to do.""",
    "mvl_references": """\
References
----------
.. [1] Minh, H. Q., Bazzani, L., & Murino, V. (2016). A unifying framework in vector-valued reproducing kernel
   Hilbert spaces for manifold regularization and co-regularized multi-view learning. Journal of Machine
   Learning Research, 17(25), 1-72.
.. [2] Sindhwani, V., & Rosenberg, D. S. (2008). An RKHS for multi-view learning and manifold co-regularization.
   Proceedings of the 25th International Conference on Machine Learning (ICML), Helsinki.
.. [3] Belkin, M., Niyogi, P., & Sindhwani, V. (2006). Manifold regularization: a geometric framework for learning
   from labeled and unlabeled examples. Journal of Machine Learning Research, 7, 2399-2434.""",
    # the Examples heading and their data: 2000 handwritten digits (class order), views of 76, 64 and 6 features
    "mfeat_example": """\
Examples
--------
>>> import numpy as np
>>> from mvl.data.embedded import load_mfeat
>>> ds = load_mfeat(["fou", "kar", "mor"])
>>> X, rng = np.hstack(ds.views), np.random.default_rng(0)
>>> idx = rng.permutation(2000)""",
}

_PLACEHOLDER = re.compile(r"^(?P<indent>[ \t]*)\{(?P<names>\w+(?:, *\w+)*)\}[ \t]*$", flags=re.M)


def default_text(value):
    """A default as the docstring states it: strings in double quotes, floats without exponent padding (1e-5)."""
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, float):
        return re.sub(r"e([+-])0*(\d)", r"e\1\2", repr(value))
    return repr(value)


def parameter_entry(name, default, descriptions=None):
    """The numpydoc entry ``name : type, default <default>`` and its description (indented by four spaces)
    from ``descriptions`` (name -> (type, description); default :data:`PARAMETERS`)."""
    kind, text = (PARAMETERS if descriptions is None else descriptions)[name]
    return f"{name} : {kind}, default {default_text(default)}\n" + textwrap.indent(text, "    ")


def fill_parameters(descriptions):
    """Decorator (of a class or function) that replaces every docstring line holding only ``{name, ...}`` by
    the entries of these names, indented as the placeholder: a parameter (``descriptions[name]`` a (type,
    description) pair) with its default from the signature (``__init__`` for a class), or a whole entry
    (``descriptions[name]`` a string, whose own placeholder lines are filled the same way). An unknown name,
    or a parameter missing from the signature, is an error, so a misspelt placeholder cannot reach the
    rendered documentation."""

    def fill(obj):
        doc = obj.__doc__
        if not doc:  # None under python -OO
            return obj
        signature = inspect.signature(obj.__init__ if isinstance(obj, type) else obj).parameters

        def entries(match):
            out = []
            for name in (n.strip() for n in match.group("names").split(",")):
                entry = descriptions[name]
                if isinstance(entry, str):
                    entry = _PLACEHOLDER.sub(entries, entry)  # a whole entry may hold placeholders itself
                else:
                    if name not in signature:
                        raise TypeError(f"{obj.__qualname__} documents {name!r}, not one of its parameters")
                    entry = parameter_entry(name, signature[name].default, descriptions)
                out.append(textwrap.indent(entry, match.group("indent")))
            return "\n".join(out)

        obj.__doc__ = _PLACEHOLDER.sub(entries, doc)
        return obj

    return fill


def shared_parameters(obj=None, **overrides):
    """Class (or function) decorator: fill the placeholders of its docstring with the shared parameters
    :data:`PARAMETERS` and the shared entries :data:`SECTIONS` (:func:`fill_parameters`). Returns ``obj``.
    With keyword arguments only (``@shared_parameters(gamma_B=AUTO_GAMMA_B)``) those (type, description) pairs
    replace the shared ones of the same name for this class."""
    if obj is None:
        return fill_parameters({**PARAMETERS, **SECTIONS, **overrides})
    return fill_parameters({**PARAMETERS, **SECTIONS, **overrides})(obj)
