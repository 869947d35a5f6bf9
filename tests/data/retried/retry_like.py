"""Runs a failed test once more and, when robot has written the output file, keeps each
test's last attempt in it: what RetryFailed (MarketSquare's robotframework-retryfailed)
does, in a few lines, so the tests need not install it."""

from robot.api import ExecutionResult, ResultVisitor

ROBOT_LISTENER_API_VERSION = 3
_retried: set[str] = set()


def end_test(data, result):
    if result.status == "FAIL" and data.name not in _retried:
        _retried.add(data.name)
        data.parent.tests.insert(data.parent.tests.index(data) + 1, data)
        result.status = "SKIP"
        result.message += "\nSkipped for retry"


class _LastAttempts(ResultVisitor):
    def start_suite(self, suite):
        suite.tests = list({test.name: test for test in suite.tests}.values())


def output_file(path):
    result = ExecutionResult(str(path))
    result.visit(_LastAttempts())
    result.save()
