"""A variable file that raises while robot imports it (tests/test_agent_answers.py)."""

raise RuntimeError("vault unreachable: cannot read the test variables")
