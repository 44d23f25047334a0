"""The scale study's config section (mvl.workflow.scale_settings): runs, fit settings and unknown methods."""

from __future__ import annotations

import pytest

from mvl.workflow.scale_settings import parse_settings
from mvl.workflow.settings import SettingsError


def test_settings_runs_and_errors():
    s = parse_settings({"sizes": [300, 5000, 20000], "methods": ["structured", "cg", "nystrom_1000"],
                "structured_max": 8000})
    assert s.runs() == [("structured", 300), ("cg", 300), ("structured", 5000), ("cg", 5000),
                        ("nystrom_1000", 5000), ("cg", 20000), ("nystrom_1000", 20000)]
    assert s.fit_settings("nystrom_1000")["n_components"] == 1000 and s.fit_settings("cg")["n_components"] == 1000
    assert parse_settings({}) is None and parse_settings(None) is None
    for bad in (["nystrom"], ["cg_5"], ["svm"]):
        with pytest.raises(SettingsError, match="scale.methods"):
            parse_settings({"sizes": [10], "methods": bad})
