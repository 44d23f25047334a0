"""The incomplete-views study's config section (mvl.workflow.incomplete_settings): defaults, runs, the job's
settings and errors naming the key."""

from __future__ import annotations

import pytest

from mvl.workflow.incomplete_settings import IncompleteSettings, parse_settings
from mvl.workflow.settings import SettingsError


def test_settings_defaults_runs_and_job():
    s = parse_settings({"datasets": ["mfeat", "mvmnist"], "seeds": [3, 4]})
    assert s == IncompleteSettings(datasets=("mfeat", "mvmnist"), q=(0.0, 0.2, 0.4, 0.6), patterns=("random", "class"),
                                   seeds=(3, 4), labels_per_class=5, unlabelled_per_class=50, test_per_class=100,
                                   n_blocks=10)
    assert s.runs() == [("mfeat", 3), ("mfeat", 4), ("mvmnist", 3), ("mvmnist", 4)]
    assert s.job().datasets == () and s.job().seeds == () and s.job().q == s.q  # the wildcards are not params
    assert parse_settings(None) is None and parse_settings({"datasets": []}) is None


@pytest.mark.parametrize("section, key", [
    ({"datasets": ["nosuch"]}, "incomplete.datasets"),
    ({"datasets": ["flowers17"]}, "incomplete.datasets"),  # a paper source (precomputed kernels), not embedded
    ({"datasets": ["mfeat"], "q": [0.2, 1.0]}, "incomplete.q"),
    ({"datasets": ["mfeat"], "q": [-0.1]}, "incomplete.q"),
    ({"datasets": ["mfeat"], "q": [0.2, 0.2]}, "incomplete.q"),
    ({"datasets": ["mfeat"], "patterns": ["diagonal"]}, "incomplete.patterns"),
    ({"datasets": ["mfeat"], "seeds": [-1]}, "incomplete.seeds"),
    ({"datasets": ["mfeat"], "labels_per_class": 0}, "incomplete.labels_per_class"),
    ({"datasets": ["mfeat"], "n_blocks": 0}, "incomplete.n_blocks"),
    ({"datasets": ["mfeat"], "gamma_B": -1e-4}, "incomplete.gamma_B"),
])
def test_settings_bad_values_name_the_key(section, key):
    with pytest.raises(SettingsError, match=key.replace(".", r"\.")):
        parse_settings(section)
