"""The method registry (mvl.workflow.methods): names to methods, their studies, families and the report's order."""

from __future__ import annotations

from dataclasses import fields

import pytest

from mvl.workflow import coreg_report, incomplete, methods, peers, peers_settings, scale, scale_settings

# The method names of every study, in the order of its results, tables and colours, written out: the registry's
# queries must give exactly these (the studies' outputs depend on the names and their order).
EXPECTED = {
    "main": ("mvl_ls", "mvl_ls_cv", "mvl_ls_cvgraph", "mvl_ls_kfold", "mvl_svm", "mvl_binsvm", "svc_sum",
             "single_views", "mvl_ls_ablation", "mvl_ls_ablation_cv", "mvl_ls_ablation_cvgraph", "mvl_svm_ablation",
             "mvl_binsvm_ablation", "perceptron_matrix", "perceptron_orth"),
    "scale": ("auto", "structured", "cg", "nystrom", "graph", "vecchia_direct", "labelonly", "transductive",
              "graphlimit", "labelspreading", "laplace", "poisson", "ridge"),
    "peers": ("mvl_ls", "mvl_ls_concat", "mvl_ls_graph", "mvl_poisson", "laplace", "poisson", "laplace_sum",
              "poisson_sum", "poisson_priors", "poisson_priors_true", "poisson_mbo", "poisson_mbo_true", "volume_mbo",
              "volume_mbo_true", "labelspreading"),
    "incomplete": ("mvl_ls_incomplete", "mean_imputation", "best_single_view", "complete"),
    "coreg": ("MR", "CoMR"),
}


def names(study):
    return tuple(m.name for m in methods.methods_for(study))


def test_every_study_draws_its_methods_from_the_registry_query():
    for study, expected in EXPECTED.items():
        assert names(study) == expected, study
    assert scale.METHODS == scale_settings.METHODS == tuple(scale.REGISTRY) == names("scale")
    assert {n: label for n, (_, label) in scale.REGISTRY.items()} == {m.name: m.label for m in
                                                                      methods.methods_for("scale")}
    assert scale.CENTRED == ("cg", "nystrom", "graph")
    assert peers_settings.PEER_METHODS == peers.PEER_METHODS == tuple(peers.LABELS) == names("peers")
    assert peers.INDUCTIVE_METHODS == peers.MVL_METHODS == ("mvl_ls", "mvl_ls_concat", "mvl_ls_graph", "mvl_poisson")
    assert peers.GRAPH_METHODS == ("laplace", "poisson", "laplace_sum", "poisson_sum", "poisson_priors", "poisson_mbo",
                                   "volume_mbo")
    assert peers_settings.DEFAULT_METHODS == ("mvl_ls", "mvl_ls_concat", "laplace", "poisson", "laplace_sum",
                                              "poisson_sum", "labelspreading")
    assert peers.MVL_GRAPH_SETTING == dict(gamma_A=1e-6, gamma_W=1.0, n_neighbors=10, laplacian_power=2)
    assert tuple(incomplete.METHODS) == names("incomplete")
    assert incomplete.METHODS["complete"] == ("complete data (q = 0)", "0.35")
    assert coreg_report.METHODS == names("coreg")


def test_names_are_unique_within_each_study_and_resolve_to_themselves():
    for study in methods.STUDIES:
        listed = names(study)
        assert listed and len(set(listed)) == len(listed), study
        for name in listed:
            m = methods.method(name, study)
            assert m.name == name and study in m.studies
    assert methods.method("mvl_ls").label == "MVL-LS"  # the same name in two studies: two methods
    assert methods.method("mvl_ls", "peers").label == "MVL-LS (squared loss, package defaults)"
    assert methods.method("view_2", "incomplete").fit_params == (("position", 2),)
    with pytest.raises(ValueError, match="unknown method 'auto'"):
        methods.method("auto")


def test_every_entry_has_the_fields_of_its_studies():
    for study in methods.STUDIES:
        for m in methods.methods_for(study):
            assert isinstance(m.label, str) and m.label, m.name
            assert set(m.studies) <= set(methods.STUDIES) and set(m.data) <= set(methods.DATA_KINDS), m.name
            if study == "main":
                assert m.family in methods.FAMILIES and m.run in methods.RUNS, m.name
                assert m.estimator in methods.ESTIMATORS or m.run == "single_views", m.name
            elif m.derived:
                assert m.fit is None
            else:
                assert callable(m.fit_function()), m.name


def test_fields_are_keyword_only_and_checked():
    ok = dict(name="toy", label="toy", studies=("main",), family="ls", estimator="MVLLeastSquares")
    assert methods.Method(**ok).needs_validation is False
    with pytest.raises(TypeError, match="positional"):
        methods.Method("toy", "ls", "toy", True, True)  # booleans must be named
    with pytest.raises(TypeError, match="tuple of names"):
        methods.Method(**{**ok, "studies": "main"})
    with pytest.raises(ValueError, match="studies must be some of"):
        methods.Method(**{**ok, "studies": ("nope",)})
    with pytest.raises(ValueError, match="data kinds"):
        methods.Method(**{**ok, "data": ("images",)})
    with pytest.raises(ValueError, match="needs an estimator"):
        methods.Method(**{**ok, "estimator": None})
    with pytest.raises(ValueError, match="need fit='module:function'"):
        methods.Method(name="toy", label="toy", studies=("scale",))
    with pytest.raises(ValueError, match="already registered in the study 'peers'"):
        methods.register(methods.Method(name="laplace", label="x", studies=("peers",), fit="peers:fit_labelspreading"))


def test_a_method_registered_for_a_study_joins_its_query():
    toy = methods.Method(name="toy_spreading", label="toy", studies=("peers",), fit="peers:fit_labelspreading")
    methods.register(toy, before="labelspreading")
    try:
        assert names("peers")[-2:] == ("toy_spreading", "labelspreading")
        assert methods.method("toy_spreading", "peers").fit_function() is peers.fit_labelspreading
    finally:
        methods.REGISTRY.remove(toy)
    assert names("peers") == EXPECTED["peers"]


def test_unknown_names_raise_or_are_no_method_and_sort_last():
    with pytest.raises(ValueError, match="unknown method 'nope'"):
        methods.method("nope")
    assert methods.lookup("nope") is None
    assert methods.method_attribute(["nope", methods.REFERENCE], "name", default="-") == ["-", methods.REFERENCE]
    assert sorted(["nope", methods.REFERENCE], key=methods.rank) == [methods.REFERENCE, "nope"]
    with pytest.raises(ValueError, match="unknown study"):
        methods.methods_for("nope")


def test_sections_list_their_methods_in_registry_order():
    for section in methods.SECTIONS:
        names_ = methods.methods_in(section)
        assert names_ == sorted(names_, key=methods.rank)
    assert methods.REFERENCE in methods.methods_in("main")


def test_patterns_build_keyword_methods():
    assert {f.name for f in fields(methods.Method)} >= {"name", "label", "studies", "data", "fit", "fit_params"}
    m = methods.method("mvl_ls_optc25")
    assert m.needs_validation and not m.uses_selection and m.fits == pytest.approx(22.0)


def test_the_extending_guide_lists_every_field_of_method_with_its_default():
    import ast
    import dataclasses
    import re
    from pathlib import Path

    from mvl.workflow.methods import Method

    text = (Path(__file__).resolve().parents[2] / "docs" / "guide" / "extending.md").read_text()
    section = text.split("### The fields of `Method`", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| `(\w+)` \| ([^|]+) \|", section, re.M))
    fields = dataclasses.fields(Method)
    assert sorted(rows) == sorted(f.name for f in fields)
    for f in fields:
        if f.default is dataclasses.MISSING:
            assert rows[f.name].strip() == "(required)", f.name
        else:
            assert ast.literal_eval(rows[f.name].strip().strip("`")) == f.default, (f.name, rows[f.name])
