"""Another listener that changes results while robot runs (tests/test_differential.py).

Runs before rf_log_listener (default priority); what it changes, and when, decides what the
output files hold: names are written to output.xml at the start, to output.json at the end;
a message is written when it is logged; a test's status when the test ends.
"""


class Editor:
    ROBOT_LISTENER_API_VERSION = 3

    def __init__(self):
        self.first_test = None

    def start_suite(self, data, result):
        if result.name == "Shapes":
            result.name = "Shapes (renamed at start)"

    def end_suite(self, data, result):
        result.doc = "doc set at the end"
        for test in result.tests:  # too late for the test's own record, not for <statistics>
            if test.name == "Status Changed After Its End":
                test.status = "FAIL"
                test.message = "failed by a listener in end_suite"

    def start_test(self, data, result):
        if result.name == "Renamed At Start":
            result.name = "Renamed At Start (new)"
        if self.first_test is None:
            self.first_test = result

    def end_test(self, data, result):
        if result.name == "Renamed At End":
            result.name = "Renamed At End (new)"
        if result.name == "Status Changed":
            result.status = "FAIL"
            result.message = "failed by a listener in end_test"
        if result.name == "Edits An Earlier Test":  # logged and written long ago: no effect
            for item in self.first_test.body:
                for message in getattr(item, "body", ()):
                    if getattr(message, "type", "") == "MESSAGE":
                        message.message = "edited a test later"

    def log_message(self, message):
        if "mask me" in message.message:
            message.message = message.message.replace("mask me", "***")

    def end_keyword(self, data, result):
        if result.args and "secret-arg" in result.args:
            result.args = tuple("***" if a == "secret-arg" else a for a in result.args)
