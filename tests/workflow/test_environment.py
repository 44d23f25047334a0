"""environment.yml lists the same packages and version ranges as pyproject.toml."""

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _norm(spec):
    spec = spec.replace(" ", "")
    name = re.match(r"[A-Za-z0-9_.\-]+", spec).group(0).lower().replace("_", "-")
    return name, spec[len(name):]


def test_environment_yml_in_step_with_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = dict(_norm(s) for s in project["dependencies"] + project["optional-dependencies"]["test"])
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    listed = dict(_norm(s) for s in env["dependencies"] if isinstance(s, str) and not s.startswith(("python", "pip")))
    # packages only on PyPI (graphlearning) are in the pip list: they count too, the package itself (-e .) not
    pip = [s for d in env["dependencies"] if isinstance(d, dict) for s in d.get("pip", []) if not s.startswith("-")]
    assert not set(dict(_norm(s) for s in pip)) & set(listed), "a package listed twice (conda and pip)"
    listed.update(_norm(s) for s in pip)
    assert listed == wanted


def test_rule_environment_agrees_with_pyproject():
    """workflow/envs/mvl.yaml (every rule's conda env) lists a subset of the package's dependencies, with the
    same version ranges, including what the report rules run (papermill, nbconvert, jupytext)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = dict(_norm(s) for s in project["dependencies"])
    env = yaml.safe_load((ROOT / "workflow" / "envs" / "mvl.yaml").read_text())
    listed = dict(_norm(s) for s in env["dependencies"] if isinstance(s, str) and not s.startswith(("python", "pip")))
    assert {k: wanted.get(k) for k in listed} == listed
    assert {"papermill", "nbconvert", "jupytext", "ipykernel"} <= set(listed)
