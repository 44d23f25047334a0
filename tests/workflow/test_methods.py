"""The method registry (mvl.workflow.methods): names to methods, their families and the report's order."""

from __future__ import annotations

import pytest

from mvl.workflow import methods


def test_every_named_method_resolves_to_itself_with_a_known_family():
    named = [e for e in methods.REGISTRY if isinstance(e, methods.Method)]
    assert named
    for entry in named:
        m = methods.method(entry.name)
        assert m.name == entry.name and m.family in methods.FAMILIES


def test_unknown_names_raise_or_are_no_method_and_sort_last():
    with pytest.raises(ValueError, match="unknown method 'nope'"):
        methods.method("nope")
    assert methods.lookup("nope") is None
    assert methods.method_attribute(["nope", methods.REFERENCE], "name", default="-") == ["-", methods.REFERENCE]
    assert sorted(["nope", methods.REFERENCE], key=methods.rank) == [methods.REFERENCE, "nope"]


def test_sections_list_their_methods_in_registry_order():
    for section in methods.SECTIONS:
        names = methods.methods_in(section)
        assert names == sorted(names, key=methods.rank)
    assert methods.REFERENCE in methods.methods_in("main")
