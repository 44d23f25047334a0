"""The command-line steps are a user tool too: every subcommand and option has help text."""

from __future__ import annotations

import argparse
import subprocess
import sys

from mvl.workflow import cli


def test_every_step_and_option_has_help():
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {c.dest: c.help for c in sub._choices_actions}
    assert set(helps) == set(sub.choices) == {"dataset", "prepare", "collect", "aggregate", "coreg", "check"}
    assert all(helps.values()), helps
    for name, step in sub.choices.items():
        for action in step._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            assert action.help, f"{name} {action.option_strings or action.dest} has no help"


def test_help_runs_and_is_plain_text():
    out = subprocess.run([sys.executable, "-m", "mvl.workflow.cli", "-h"], capture_output=True, text=True,
                         check=True).stdout
    assert "STEP" in out and "coreg" in out and "``" not in out and ":func:" not in out
