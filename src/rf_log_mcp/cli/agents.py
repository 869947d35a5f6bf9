"""Commands about agents: usage (what the usage record says about how the tools are used)
and skill (the Agent Skill that teaches the triage flow)."""

from __future__ import annotations

import argparse

from .. import render
from ..render import Style
from .common import connect, print_json


def cmd_usage(args: argparse.Namespace) -> int:
    from ..usage_report import parse_since, report

    figures = report(connect(args), parse_since(args.since), args.source)
    if args.json:
        print_json(figures.model_dump(mode="json", exclude_none=True))
    else:
        render.figures(figures, Style())
    return 0
