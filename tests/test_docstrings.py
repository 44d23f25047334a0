"""The shared parameter descriptions (:mod:`mvl.docstrings`) and the decorator that puts them in docstrings."""

import inspect

import pytest

from mvl.docstrings import PARAMETERS, SECTIONS, default_text, fill_parameters, parameter_entry, shared_parameters


def test_placeholder_lines_become_entries_with_the_signatures_defaults():
    @shared_parameters
    class Example:
        """Summary with braces {k=1..P} left alone.

        Parameters
        ----------
        {gamma_A, views}
        own : int, default 1
            Its own text.

        Attributes
        ----------
        {view_attributes}
        """

        def __init__(self, *, gamma_A=1e-5, views=None, own=1):
            pass

    doc = inspect.cleandoc(Example.__doc__)
    assert "{k=1..P}" in doc and "{gamma_A" not in doc and "{view_attributes}" not in doc
    kind, text = PARAMETERS["gamma_A"]
    expected = f"gamma_A : {kind}, default 1e-5\n" + "\n".join("    " + t for t in text.split("\n"))
    assert expected + "\nviews : " in doc
    assert "own : int, default 1\n    Its own text." in doc
    assert SECTIONS["view_attributes"] in doc


def test_an_unknown_placeholder_is_an_error():
    class Misspelt:
        """Summary.

        Parameters
        ----------
        {gama_A}
        """

    with pytest.raises(KeyError, match="gama_A"):
        shared_parameters(Misspelt)


def test_a_documented_parameter_missing_from_the_signature_is_an_error():
    class Missing:
        """Summary.

        Parameters
        ----------
        {gamma_A}
        """

        def __init__(self, *, gamma_B=0.0):
            pass

    with pytest.raises(TypeError, match="gamma_A"):
        shared_parameters(Missing)


def test_a_missing_docstring_is_left_missing():
    class Bare:
        pass

    Bare.__doc__ = None
    assert shared_parameters(Bare) is Bare and Bare.__doc__ is None


@pytest.mark.parametrize("value,text", [(1e-5, "1e-5"), (0.0, "0.0"), (1e-2, "0.01"), ("rbf", '"rbf"'),
                                        (None, "None"), (5, "5"), (False, "False")])
def test_defaults_read_as_python_literals(value, text):
    import ast

    assert default_text(value) == text and ast.literal_eval(text) == value


def test_parameter_entry_is_a_numpydoc_entry():
    entry = parameter_entry("views", None).split("\n")
    assert entry[0] == f"views : {PARAMETERS['views'][0]}, default None"
    assert all(line.startswith("    ") for line in entry[1:]) and len(entry) > 1


def test_fill_parameters_takes_descriptions_of_its_own():
    @fill_parameters({**PARAMETERS, "own": ("int", "An option of a few estimators.")})
    def example(own=1, views=None):
        """Summary.

        Parameters
        ----------
        {own, views}
        """

    assert "        own : int, default 1\n            An option of a few estimators.\n" in example.__doc__


def test_descriptions_are_concise():
    """At most six lines each, and within the line length once indented under their entry."""
    texts = [text.split("\n") for _, text in PARAMETERS.values()]
    assert all(0 < len(lines) <= 6 and max(map(len, lines)) <= 112 for lines in texts)
    assert all(max(map(len, text.split("\n"))) <= 116 for text in SECTIONS.values())


def test_a_whole_entry_may_hold_placeholders_itself():
    @fill_parameters({**PARAMETERS, "section": "Parameters\n----------\n{gamma_A}"})
    class Nested:
        """Summary.

        {section}
        """

        def __init__(self, *, gamma_A=1e-3):
            pass

    doc = inspect.cleandoc(Nested.__doc__)
    assert "{" not in doc and "Parameters\n----------\ngamma_A : float > 0, default 0.001\n" in doc
