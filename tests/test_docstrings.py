"""The shared parameter descriptions (:mod:`mvl.docstrings`) and the decorator that puts them in docstrings."""

import inspect

import pytest

from mvl.docstrings import PARAMETERS, fill_parameters, parameter_entry, shared_parameters


def test_placeholder_lines_become_the_indented_shared_description():
    @shared_parameters
    class Example:
        """Summary with braces {k=1..P} left alone.

        Parameters
        ----------
        gamma_A : float > 0, default 1e-5
            {gamma_A}
        """

    doc = inspect.cleandoc(Example.__doc__)
    assert "{k=1..P}" in doc and "{gamma_A}" not in doc
    body = doc.split("gamma_A : float > 0, default 1e-5\n", 1)[1]
    assert body == "\n".join("    " + line for line in PARAMETERS["gamma_A"].split("\n"))


def test_an_unknown_placeholder_is_an_error():
    class Misspelt:
        """Summary.

        Parameters
        ----------
        gama_A : float
            {gama_A}
        """

    with pytest.raises(KeyError, match="gama_A"):
        shared_parameters(Misspelt)


def test_a_missing_docstring_is_left_missing():
    class Bare:
        pass

    Bare.__doc__ = None
    assert shared_parameters(Bare) is Bare and Bare.__doc__ is None


def test_parameter_entry_is_a_numpydoc_entry():
    entry = parameter_entry("views", "None or sequence, default None").split("\n")
    assert entry[0] == "    views : None or sequence, default None"
    assert all(line.startswith("        ") for line in entry[1:]) and len(entry) > 1


def test_descriptions_are_concise():
    assert all(0 < len(text.split("\n")) <= 6 and max(map(len, text.split("\n"))) <= 110
               for text in PARAMETERS.values())


def test_fill_parameters_takes_descriptions_of_its_own():
    @fill_parameters({**PARAMETERS, "own": "An option of a few estimators."})
    class Example:
        """Summary.

        Parameters
        ----------
        own : int, default 1
            {own}
        views : None, default None
            {views}
        """

    assert "        An option of a few estimators.\n" in Example.__doc__
    assert PARAMETERS["views"].split("\n")[0] in Example.__doc__
