"""The form of the public API: keyword-only estimator parameters."""

import inspect

import pytest

import mvl
from mvl import (
    MVML,
    KernelMultiViewPerceptron,
    MVLBinarySVM,
    MVLLeastSquares,
    MVLLeastSquaresCV,
    MVLLeastSquaresOptC,
    MVLSVM,
    OrthogonalMultiViewPerceptron,
    SemiSupervisedCV,
)

ESTIMATORS = [MVLLeastSquares, MVLLeastSquaresCV, MVLLeastSquaresOptC, MVLSVM, MVLBinarySVM, MVML,
              KernelMultiViewPerceptron, OrthogonalMultiViewPerceptron]
PARAMETRISED = ESTIMATORS + [SemiSupervisedCV]


def test_every_public_estimator_is_listed():
    from sklearn.base import BaseEstimator

    public = {getattr(mvl, name) for name in mvl.__all__}
    found = {c for c in public if isinstance(c, type) and issubclass(c, BaseEstimator)}
    assert found == set(ESTIMATORS)


@pytest.mark.parametrize("cls", PARAMETRISED, ids=lambda c: c.__name__)
def test_parameters_are_keyword_only(cls):
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    assert params, cls
    assert [p.name for p in params if p.kind is not inspect.Parameter.KEYWORD_ONLY] == []


@pytest.mark.parametrize("cls", PARAMETRISED, ids=lambda c: c.__name__)
def test_a_positional_argument_raises_type_error(cls):
    first = list(inspect.signature(cls.__init__).parameters.values())[1]
    with pytest.raises(TypeError, match="positional argument"):
        cls(first.default)
    assert getattr(cls(**{first.name: first.default}), first.name) is first.default


# ------------------------------------------------------------------ docstrings (numpydoc, static)

SECTIONS = ["Parameters", "Attributes", "See Also", "References", "Examples"]
DIFFERENT = {
    # parameters whose name is shared but whose meaning differs between the estimators (each documents its own)
    "c": "learned by optC; the grid's fixed c in the CV; the SVMs' and MVL-LS's fixed c",
    "solver": "each estimator's own solvers",
    "gamma_B": "MVL-LS's default \"auto\" adapts to incomplete views; the other estimators take a number",
    "gamma_A": "MVL-LS's default \"auto\" follows the graph regime's rule; the other estimators take a number",
    "tol": "each solver's own stopping rule",
    "max_iter": "CG iterations in MVL-LS, dual iterations in the SVMs",
    "n_components": "MVL-LS: one fit; optC: shared by every restart",
    "max_memory": "MVL-LS: one fit; optC: shared by every restart",
    "random_state": "what is random differs (Nystrom centres, restarts, SMO order, sample order)",
    "n_iter": "optC alternations vs MVML iterations",
}
CV_OWN = {"laplacian", "graph_weights"}  # MVLLeastSquaresCV: strings only, applied to every graph of its grid


def _sections(doc):
    """{section title: its lines}, the summary under "" (numpydoc: a title line underlined with dashes)."""
    lines = inspect.cleandoc(doc).split("\n")
    out, title, i = {"": []}, "", 0
    while i < len(lines):
        if i + 1 < len(lines) and lines[i].strip() and set(lines[i + 1].strip()) == {"-"}:
            title = lines[i].strip()
            assert title not in out, title
            out[title] = []
            i += 2
            continue
        out[title].append(lines[i])
        i += 1
    return out


def _parameters(cls):
    """{name: (type line, description)} of the Parameters section; an entry is an unindented "name : type" line
    followed by its indented description."""
    entries, name = {}, None
    for line in _sections(cls.__doc__)["Parameters"]:
        if line and not line.startswith(" "):
            name, _, kind = line.partition(" : ")
            assert kind, f"{cls.__name__}: not a parameter entry: {line!r}"
            entries[name] = [kind, []]
        elif line.strip():
            assert name is not None, f"{cls.__name__}: text before the first parameter: {line!r}"
            entries[name][1].append(line.strip())
    return {k: (kind, " ".join(text)) for k, (kind, text) in entries.items()}


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_docstring_is_static_numpydoc(cls):
    """A literal docstring (no ``__doc__ = ... + ...``) with the numpydoc sections in order, the paper among the
    references of the MVL estimators, and exactly the __init__ parameters documented."""
    import ast
    import textwrap

    source = textwrap.dedent(inspect.getsource(cls))
    body = ast.parse(source).body[0].body
    assert isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant), cls
    assert not any(isinstance(s, ast.Assign) and any(getattr(t, "id", None) == "__doc__" for t in s.targets)
                   for s in body)
    titles = [t for t in _sections(cls.__doc__) if t]
    assert [t for t in titles if t in SECTIONS] == SECTIONS, titles
    assert set(titles) <= set(SECTIONS) | {"Notes"}, titles
    refs = "\n".join(_sections(cls.__doc__)["References"])
    if cls.__name__.startswith("MVL"):
        assert "Minh, H. Q., Bazzani, L., & Murino, V. (2016)" in refs
    params = list(inspect.signature(cls.__init__).parameters)[1:]
    assert sorted(_parameters(cls)) == sorted(params)


def test_shared_parameters_have_one_description():
    """A parameter documented by several estimators reads the same in each (the static text cannot drift), except
    those whose meaning differs by estimator (DIFFERENT) and the CV's graph options."""
    seen = {}
    for cls in ESTIMATORS:
        for name, entry in _parameters(cls).items():
            if name in DIFFERENT or (cls is MVLLeastSquaresCV and name in CV_OWN):
                continue
            seen.setdefault(name, {}).setdefault(entry, []).append(cls.__name__)
    drift = {name: list(variants.values()) for name, variants in seen.items() if len(variants) > 1}
    assert drift == {}
    shared = {name for name, variants in seen.items() if sum(len(v) for v in variants.values()) > 1}
    assert {"kernel", "views", "bandwidth", "gamma_W", "laplacian_power", "n_neighbors"} <= shared
    for name in ("gamma_A", "gamma_B"):  # MVL-LS's "auto" aside, the numeric entry reads the same everywhere
        entries = {_parameters(cls).get(name) for cls in (MVLLeastSquaresOptC, MVLSVM, MVLBinarySVM)}
        assert len(entries) == 1 and None not in entries
