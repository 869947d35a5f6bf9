"""A library that hands out and uses credentials (tests/test_known_secrets.py)."""

import os

from robot.api import logger


def get_token_from_vault():
    return "vault-tok-6Hq2Lw9Zr"


def login(user, password):
    logger.info(f"login request sent for {user}")
    return f"session for {user}"


def echo(value):
    logger.info(f"echo: {value}")


def fetch_api_key():
    return "S43-fetched-key-Vx"


def fetch_api_keys():
    return ["S44-key-one-Aa", "S44-key-two-Bb"]


class _Session(dict):
    def __repr__(self):  # RF's TRACE "Return:" line does not show (and register) the token
        return "<session of bob>"


def get_session_info():
    """What an API returned, compared with what was expected: its token is known only from
    the comparison's failure."""
    return _Session(user="bob", api_token="S76-returned-Tk")


def get_user_row():
    return ["bob", "S77-row-Pw"]


def provision_ci_environment():
    """A CI system's secret in the environment, as robot's process inherits it: set without
    a word in the log, so only what reads it can show it."""
    os.environ["DEPLOY_PASSWORD"] = "S81-ci-env-Pw"
