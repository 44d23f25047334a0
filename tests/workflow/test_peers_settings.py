"""The peers study's config section (mvl.workflow.peers_settings): defaults, runs and errors naming the key."""

from __future__ import annotations

import pytest

from mvl.workflow.peers_settings import parse_settings
from mvl.workflow.settings import SettingsError


def test_settings_parse_with_defaults_and_runs():
    s = parse_settings({"datasets": ["mfeat", "uspst"], "seeds": [0, 3]})
    assert s.labels_per_class == (1, 5) and s.n_neighbors == 10 and s.points_per_class is None
    assert s.methods == ("mvl_ls", "mvl_ls_concat", "laplace", "poisson", "laplace_sum", "poisson_sum",
                         "labelspreading")
    assert s.runs() == [("mfeat", 0), ("mfeat", 3), ("uspst", 0), ("uspst", 3)]
    one = s.for_run("uspst", "3")  # a job's params: its data set and seed, the rest unchanged
    assert (one.datasets, one.seeds) == (("uspst",), (3,)) and one._replace(datasets=s.datasets, seeds=s.seeds) == s
    assert parse_settings(None) is None and parse_settings({"datasets": [], "seeds": [0]}) is None
    s = parse_settings({"datasets": ["mvmnist"], "seeds": [1], "labels_per_class": [2], "methods": ["poisson"],
                "n_neighbors": 7, "points_per_class": 20})
    assert (s.labels_per_class, s.methods, s.n_neighbors, s.points_per_class) == ((2,), ("poisson",), 7, 20)
    assert s.inductive is False
    assert parse_settings({"datasets": ["mfeat"], "seeds": [0], "inductive": True}).inductive is True


@pytest.mark.parametrize("section, match", [
    ({"datasets": ["mnist"], "seeds": [0]}, "peers.datasets: unknown"),
    ({"datasets": ["mfeat"], "seeds": [0], "methods": ["laplace", "gcn"]}, "peers.methods: unknown"),
    ({"datasets": ["mfeat"], "seeds": [0], "points_per_class": 5}, "peers.points_per_class"),
    ({"datasets": ["mfeat"], "seeds": [0], "n_neighbors": 0}, "peers.n_neighbors"),
    ({"datasets": ["mfeat"], "seeds": [0], "labels_per_class": [0, 1]}, "peers.labels_per_class"),
])
def test_settings_errors_name_the_key(section, match):
    with pytest.raises(SettingsError, match=match):
        parse_settings(section)
