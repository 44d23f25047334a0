"""Shared numpydoc parameter descriptions of the estimators, written once.

The parameters the MVL estimators share (the gammas of eq 10, the combination c of eq 52, the graph of
eq 60-63, the classes) and those every estimator shares (how X becomes per-view kernels) read the same in
every class docstring. A class keeps its own ``name : type, default value`` line, since defaults may
differ between estimators, and puts the placeholder ``{name}`` on the line below it; the decorator
:func:`shared_parameters` replaces each placeholder line by the description, indented as the placeholder.
Whole entries shared the same way (:data:`SECTIONS`: the attributes of the views, the references) stand at
the indentation of the entries::

    @shared_parameters
    class MyEstimator(MVLClassifier):
        '''...

        Parameters
        ----------
        gamma_A : float > 0, default 1e-5
            {gamma_A}
        '''

Only whole lines holding one placeholder are replaced, so other braces of a docstring are left alone.
"""

from __future__ import annotations

import re
import textwrap

__all__ = ["PARAMETERS", "SECTIONS", "fill_parameters", "parameter_entry", "shared_parameters"]

PARAMETERS = {
    # ---------------------------------------------------------------- the MVL estimators
    "gamma_A": """\
RKHS regularisation weight (gamma_A ||f||^2 in eq 10). Typical range 1e-7 to 1e-1; the paper uses 1e-5.""",
    "gamma_B": """\
Between-view consistency weight (gamma_B <f, M_B f>, eq 53-58). Typical range 0 to 1e-4 (the paper: 1e-6);
0 leaves the between-view term out.""",
    "gamma_W": """\
Within-view manifold regularisation weight (gamma_W <f, M_W f>, eq 53, 60-64) on the graph of
``n_neighbors``. Typical range 0 to 1; 0 leaves the graph (and the unlabelled samples, unless gamma_B > 0)
out, the choice for purely supervised data. With the paper's dense graph (``n_neighbors=None``) keep it at
1e-6 or below.""",
    "c": """\
Combination vector of C = c^T (x) I (eq 52); None is the average 1/m (eq 50-51, the paper's choice). Any
real values are allowed, negative ones too, but not all zeros.""",
    "laplacian": """\
L^i = I - D^-1/2 W D^-1/2 (the authors' code) or D - W of each view's graph W (built from the view's Gram
matrix, see ``n_neighbors``), or the Laplacians themselves, sample-first like the kernels (then
``n_neighbors`` is not used, ``graph_weights`` must be "kernel", and ``laplacian_power`` None means 1).""",
    "n_neighbors": """\
The graph: a symmetrised kNN graph of each view's kernel with this many neighbours (typical 5 to 20), or
None for the paper's dense kernel weights W = K (Section 7.1; with ``laplacian_power`` None then meaning 1).
"auto" takes 0.5 % of the training samples within [10, 500] (:func:`mvl.graph.auto_neighbors`): with many
unlabelled samples a fixed k makes the neighbourhoods shrink as n grows.""",
    "laplacian_power": """\
p of the iterated Laplacian (L^i)^p in M_W (Belkin, Niyogi & Sindhwani 2006) in place of L of
eq (60)-(63). None: 2 for a kNN graph, 1 for the paper's dense graph and for an explicit ``laplacian``.
Typical 1 to 4; each power costs n x n products.""",
    "graph_weights": """\
Edge weights of the kNN graph: the kernel value K^i_jk (0 where negative), or 1 (the default of the
manifold-regularization code). "binary" needs ``n_neighbors``.""",
    "n_classes": """\
Number of classes P. If given, labels must be integers in 0..P-1 and each class needs a labelled sample;
if None, the classes are the distinct labels.""",
    # ---------------------------------------------------------------- every estimator: X to per-view kernels
    "kernel": """\
"precomputed": X holds per-view Gram matrices, sample-first (n_samples, n_samples_fit, m) (the diagonal
matrix-valued kernel of Section 7.1, eq 93-94; a 2-D X is one view), each symmetric positive semi-definite
(an indefinite one gives an IndefiniteKernelWarning). Otherwise X is a feature matrix (n_samples,
n_features) cut into views by ``views`` (or a list of per-view arrays), and each view gets a Gaussian
("rbf", exp(-||x - z||^2 / (2 sigma^2))), linear or chi2 (exp(-D_chi2 / s), non-negative features) kernel
with parameters from the training samples only.""",
    "views": """\
The column blocks of X that form the views: sizes (adding up to n_features, in column order) or one array
of column indices per view (as scikit-multimodallearn's ``views_ind``). None: all columns are one view.
Ignored with "precomputed" and with a list of per-view arrays.""",
    "bandwidth": """\
sigma of "rbf" or the scale s of "chi2": a rule over the pairwise (chi2) distances of the view's training
samples, or a value, or one of these per view. None: "median" for "rbf", "mean" for "chi2" (Gehler &
Nowozin 2009). A view whose kernel comes out constant or diagonal gives a DegenerateKernelWarning.""",
}

SECTIONS = {
    # whole entries, placed at the entries' indentation
    "view_attributes": """\
n_views_ : int
n_train_ : int
    Training samples n (columns of the kernels at prediction).
n_features_in_ : int
bandwidths_ : list or None
    Per-view sigma ("rbf") or scale ("chi2") computed at fit.
view_columns_ : list of arrays
    Column indices of each view (feature matrix input).""",
    "mvl_references": """\
.. [1] Minh, H. Q., Bazzani, L., & Murino, V. (2016). A unifying framework in vector-valued reproducing kernel
   Hilbert spaces for manifold regularization and co-regularized multi-view learning. Journal of Machine
   Learning Research, 17(25), 1-72.
.. [2] Sindhwani, V., & Rosenberg, D. S. (2008). An RKHS for multi-view learning and manifold co-regularization.
   Proceedings of the 25th International Conference on Machine Learning (ICML), Helsinki.
.. [3] Belkin, M., Niyogi, P., & Sindhwani, V. (2006). Manifold regularization: a geometric framework for learning
   from labeled and unlabeled examples. Journal of Machine Learning Research, 7, 2399-2434.""",
}

_PLACEHOLDER = re.compile(r"^(?P<indent>[ \t]*)\{(?P<name>\w+)\}[ \t]*$", flags=re.M)


def parameter_entry(name, kind, indent="    "):
    """The numpydoc entry ``name : kind`` with the shared description of ``name`` below it, indented by
    ``indent`` (the description by four spaces more); ``kind`` holds the type and the default."""
    return f"{indent}{name} : {kind}\n" + textwrap.indent(PARAMETERS[name], indent + "    ")


def fill_parameters(descriptions):
    """Decorator that replaces every docstring line holding only ``{name}`` by ``descriptions[name]``, indented
    as the placeholder; for descriptions shared by a few estimators only (the SVMs' solver options), on top of
    :data:`PARAMETERS`. An unknown name is an error (KeyError), so a misspelt placeholder cannot reach the
    rendered documentation."""

    def fill(obj):
        doc = obj.__doc__
        if doc:  # None under python -OO
            obj.__doc__ = _PLACEHOLDER.sub(
                lambda m: textwrap.indent(descriptions[m.group("name")], m.group("indent")), doc)
        return obj

    return fill


def shared_parameters(obj):
    """Class (or function) decorator: fill the placeholders ``{name}`` of its docstring with the shared
    parameter descriptions :data:`PARAMETERS` and the shared entries :data:`SECTIONS` (the attributes of the
    views, the references of the MVL estimators; :func:`fill_parameters`). Returns ``obj``."""
    return fill_parameters({**PARAMETERS, **SECTIONS})(obj)
