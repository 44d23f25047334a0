"""What the parsers of the config sections share: the error they raise and the conversions of list values.

:mod:`mvl.workflow.settings` parses the shared run settings and hands each study's section to that study's
``parse_settings`` (:data:`mvl.workflow.settings.STUDY_SECTIONS`); every parser raises :class:`SettingsError`
naming the config key. No paper section (workflow configuration).
"""

from __future__ import annotations

__all__ = ["SettingsError", "as_tuple"]


class SettingsError(ValueError):
    """A config value that the schema cannot judge: an unknown method or source, a missing key."""


def as_tuple(values):
    """``values`` (any iterable, or None) as a tuple (None: empty)."""
    return tuple(values) if values is not None else ()
