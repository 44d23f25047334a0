"""What the config section parsers share (mvl.workflow.sections): the error type and list conversion."""

from __future__ import annotations

from mvl.workflow import sections, settings


def test_settings_error_is_a_value_error_and_the_one_of_the_settings():
    assert issubclass(sections.SettingsError, ValueError)
    assert settings.SettingsError is sections.SettingsError


def test_as_tuple_keeps_order_and_reads_none_as_empty():
    assert sections.as_tuple(None) == ()
    assert sections.as_tuple([3, 1, 2]) == (3, 1, 2)
    assert sections.as_tuple(x * 2 for x in (1, 2)) == (2, 4)
    assert sections.as_tuple([]) == ()
