"""Product text speaks of the product: no issue numbers, session talk or dates in the sources, notebooks, workflow,
configuration, README, docs (but the changelog), benchmarks and tests; such history belongs to commit messages and
the changelog."""

from __future__ import annotations

import re
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
PATTERN = re.compile(r"\bissues? #?\d+|\bsession|\b20\d\d-\d\d-\d\d\b", re.IGNORECASE)
FOLDERS = ("src", "notebooks", "workflow", "config", "profiles", "docs", "benchmarks", "tests")
FILES = ("README.md",)
SUFFIXES = {".py", ".md", ".rst", ".txt", ".yaml", ".yml", ".smk", ".ipynb", ".csv", ".toml", ".cfg", ".json", ".sh",
            ".html"}
SKIP_PARTS = {"__pycache__", "_build", ".ipynb_checkpoints"}


def _text_files():
    for name in FILES:
        if (ROOT / name).is_file():
            yield ROOT / name
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            rel = path.relative_to(ROOT)
            if not path.is_file() or SKIP_PARTS.intersection(rel.parts):
                continue
            if path.suffix not in SUFFIXES and path.name not in ("Snakefile",):
                continue
            if rel.parts[0] == "docs" and path.name.startswith("changelog"):
                continue
            if path == Path(__file__).resolve():
                continue
            yield path


def _matches(path):
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".ipynb":  # embedded images are base64, not text
        text = re.sub(r'"image/[a-z+]+": "[^"]*"', "", text)
    for i, line in enumerate(text.splitlines(), 1):
        for m in PATTERN.finditer(line):
            yield f"{path.relative_to(ROOT)}:{i}: {m.group(0)!r} in {line.strip()[:100]!r}"


def test_no_issue_numbers_session_talk_or_dates():
    found = [hit for path in _text_files() for hit in _matches(path)]
    assert not found, "\n".join(found[:50]) + (f"\n... {len(found) - 50} more" if len(found) > 50 else "")


def test_the_pattern_catches_what_it_is_for():
    for text in ("see issue 28", "Issues #30", "the last session", "measured 2026-11-25"):
        assert PATTERN.search(text), text
    for text in ("Minh, Bazzani & Murino (2016)", "start_new_session=True", "tissue 3"):
        assert not PATTERN.search(text), text
