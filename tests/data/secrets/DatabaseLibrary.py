"""A stand-in for DatabaseLibrary 2.x's Query keyword (tests/test_known_secrets.py): the
same library name and keyword, run on an in-memory SQLite table, logging what DatabaseLibrary
logs (``query._log_query_results``): the statement, then the result as an HTML table, a
header row of column names over rows of values. A column named like a secret (``api_token``)
has its name and its values in different rows."""

import sqlite3

from robot.api import logger

_CELL = "border: 1px solid rgb(160 160 160);padding: 8px 10px;text-align: center;"
_HEAD = "position: sticky; top: 0;"
_NUMBER = "color:black; background-color: #d6ecd4;"


def query(select_statement, log_results=True):
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE users (id INTEGER, name TEXT, api_token TEXT)")
    db.executemany("INSERT INTO users VALUES (?, ?, ?)",
                   [(1, "L37-user-alice", "S87-db-column-Tk"), (2, "bob", "S88-db-column-Tk")])
    logger.info(f'Executing sql:<br><code style="font-weight: bold;">{select_statement}</code>',
                html=True)
    cursor = db.execute(select_statement)
    rows = cursor.fetchall()
    if log_results:
        names = [column[0] for column in cursor.description]
        msg = '<div style="max-width: 100%; overflow-x: auto; max-height: 500px; overflow-y: auto;">'
        msg += ('<table style="width: auto; border-collapse: collapse;'
                ' border: 2px solid rgb(140 140 140)">')
        msg += ('<caption style="text-align: left; font-weight: bold; padding: 5px;">'
                f"Query returned {len(rows)} rows</caption>")
        msg += f'<tr><th scope="col" style="{_HEAD} {_NUMBER} {_CELL}">Row</th>'
        for name in names:
            msg += (f'<th scope="col" style="{_HEAD} background-color: #505050; color: #fff;{_CELL}">'
                    f"{name}</th>")
        msg += "</tr>"
        for i, row in enumerate(rows):
            msg += "<tr>" if i % 2 else '<tr style="background-color: var(--secondary-color, #eee)">'
            msg += f'<th scope="row" style="{_NUMBER}{_CELL}">{i}</th>'
            msg += "".join(f'<td style="{_CELL}">{cell}</td>' for cell in row)
            msg += "</tr>"
        msg += "</table></div>"
        logger.info(msg, html=True)
    return rows
