"""What a run's surroundings say about it: the CI build (a short whitelist of CI variables)
and, under pabot, the execution its process belongs to. Capture side: read by the listener
at the run's start and by an import, stored on the run's row.

Only the variables below are read, never any other part of the environment.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
from collections.abc import Callable, Mapping
from pathlib import Path

# provider: (the variable that says we are in it, {field: variable or a function of env})
_Env = Mapping[str, str]
_Rule = dict[str, "str | Callable[[_Env], str | None]"]


def _github_url(env: _Env) -> str | None:
    if env.get("GITHUB_SERVER_URL") and env.get("GITHUB_REPOSITORY") and env.get("GITHUB_RUN_ID"):
        return (f"{env['GITHUB_SERVER_URL']}/{env['GITHUB_REPOSITORY']}/actions/runs/"
                f"{env['GITHUB_RUN_ID']}")
    return None


def _azure_url(env: _Env) -> str | None:
    if env.get("SYSTEM_TEAMFOUNDATIONCOLLECTIONURI") and env.get("BUILD_BUILDID"):
        return (f"{env['SYSTEM_TEAMFOUNDATIONCOLLECTIONURI']}{env.get('SYSTEM_TEAMPROJECT', '')}"
                f"/_build/results?buildId={env['BUILD_BUILDID']}")
    return None


def _first(*names: str) -> Callable[[_Env], str | None]:
    return lambda env: next((env[name] for name in names if env.get(name)), None)


PROVIDERS: dict[str, tuple[str, _Rule]] = {
    "github": ("GITHUB_ACTIONS", {
        "commit": "GITHUB_SHA", "branch": _first("GITHUB_HEAD_REF", "GITHUB_REF_NAME"),
        "build": "GITHUB_RUN_NUMBER", "build_url": _github_url,
        "job": _first("GITHUB_JOB", "GITHUB_WORKFLOW")}),
    "gitlab": ("GITLAB_CI", {
        "commit": "CI_COMMIT_SHA", "branch": _first("CI_COMMIT_BRANCH", "CI_COMMIT_REF_NAME"),
        "build": _first("CI_PIPELINE_IID", "CI_PIPELINE_ID"),
        "build_url": _first("CI_JOB_URL", "CI_PIPELINE_URL"), "job": "CI_JOB_NAME"}),
    "azure": ("TF_BUILD", {
        "commit": "BUILD_SOURCEVERSION",
        "branch": _first("BUILD_SOURCEBRANCHNAME", "BUILD_SOURCEBRANCH"),
        "build": "BUILD_BUILDNUMBER", "build_url": _azure_url,
        "job": _first("SYSTEM_JOBDISPLAYNAME", "AGENT_JOBNAME")}),
    "circleci": ("CIRCLECI", {
        "commit": "CIRCLE_SHA1", "branch": "CIRCLE_BRANCH", "build": "CIRCLE_BUILD_NUM",
        "build_url": "CIRCLE_BUILD_URL", "job": "CIRCLE_JOB"}),
    # Jenkins last: its variables are the most generic (GIT_COMMIT may be set elsewhere).
    "jenkins": ("JENKINS_URL", {
        "commit": "GIT_COMMIT", "branch": _first("BRANCH_NAME", "GIT_BRANCH"),
        "build": "BUILD_NUMBER", "build_url": "BUILD_URL", "job": "JOB_NAME"}),
}
MAX_VALUE = 500


def ci_context(env: _Env | None = None) -> str | None:
    """The CI build this process runs in, as JSON (None outside the CI systems known)."""
    env = os.environ if env is None else env
    for provider, (marker, rule) in PROVIDERS.items():
        if not env.get(marker):
            continue
        found = {"provider": provider}
        for field, source in rule.items():
            value = env.get(source) if isinstance(source, str) else source(env)
            if value:
                found[field] = value[:MAX_VALUE]
        return json.dumps(found, ensure_ascii=False, sort_keys=True)
    return None


PABOT_VARIABLES = ("${CALLER_ID}", "${PABOTQUEUEINDEX}")


def pabot_group(variable: Callable[[str], object], output_dir: str | None) -> str | None:
    """The pabot execution this robot process belongs to, or None when pabot did not start it.

    pabot starts every process itself (no shell between) and gives each its own ``CALLER_ID``
    and queue index, so what the processes of one execution share is their parent: the pabot
    process (its pid, and on Linux its start time, so a reused pid is another execution) on
    this host, and the ``pabot_results`` folder they write into.
    """
    if any(variable(name) in (None, "") for name in PABOT_VARIABLES):
        return None
    parent = os.getppid()
    parts = [socket.gethostname(), str(parent), _process_started(parent), _results_root(output_dir)]
    return "pabot-" + hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def _process_started(pid: int) -> str:
    """A process's start time since boot (Linux), with the boot's id: '' elsewhere."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""
    return f"{boot}:{stat.rsplit(')', 1)[1].split()[19]}"


def _results_root(output_dir: str | None) -> str:
    if not output_dir:
        return ""
    path = Path(output_dir)
    for folder in (path, *path.parents):
        if folder.name == "pabot_results":
            return str(folder)
    return str(path.parent)
