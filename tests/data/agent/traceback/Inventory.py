"""A library whose keyword fails deep in its own code (tests/test_agent_answers.py)."""


def _parse_stock(line, password):
    count = line.split("=")[1]
    return int(count) if password else 0


def reserve(item):
    stock = {"apples": "apples=3", "pears": "pears=none"}
    return _parse_stock(stock[item], password="Inv-Secret-9931")
