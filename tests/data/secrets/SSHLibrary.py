"""A stand-in for SSHLibrary's Login keyword (tests/test_known_secrets.py): the same library
name and argument order, ``Login  username  password``, whose password neither the keyword's
name nor the argument names. Logs what SSHLibrary logs, without a server to log into."""

from robot.api import logger


def login(username=None, password=None, allow_agent=False, look_for_keys=False):
    logger.info(f"Logging into 'build.example:22' as '{username}'.")
    return f"Last login: Fri Dec  4 08:00:00 2026 from 10.0.0.7 ({username})"
