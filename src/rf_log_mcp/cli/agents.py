"""Commands about agents: usage (what the usage record says about how the tools are used)
and skill (the Agent Skill that teaches the triage flow)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rf_log_listener.errors import FILE_NOT_FOUND, ResultError

from ..render_across import figures as usage_figures
from ..render_text import Style
from .common import connect, print_json


def cmd_usage(args: argparse.Namespace) -> int:
    from ..usage_report import parse_since, report

    figures = report(connect(args), parse_since(args.since), args.source)
    if args.json:
        print_json(figures.model_dump(mode="json", exclude_none=True))
    else:
        usage_figures(figures, Style())
    return 0


SKILL_NAME = "rf-log-triage"


def skill_text() -> str:
    from importlib.resources import files

    return files(__package__.rpartition(".")[0]).joinpath("skill", "SKILL.md").read_text("utf-8")


def cmd_skill(args: argparse.Namespace) -> int:
    """Print the Agent Skill, or install it as <folder>/rf-log-triage/SKILL.md."""
    text = skill_text()
    if not args.install:
        sys.stdout.write(text)
        return 0
    target = Path(args.install).expanduser() / SKILL_NAME / "SKILL.md"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ResultError(FILE_NOT_FOUND, f"Cannot write {target}: {exc}",
                          "Pass a folder this user can write, e.g. ~/.claude/skills.") from None
    print(f"installed {target}")
    return 0
