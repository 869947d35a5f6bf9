"""The one writer's sibling rotation: a test's or keyword's setup first, its teardown last.

Robot writes a test's and a user keyword's children in the order they ran. A listener that
runs keywords (``BuiltIn().run_keyword``) in ``start_test`` or ``start_keyword`` runs them
before the setup, in ``end_test`` or ``end_keyword`` after the teardown; RF's model has the
setup first and the teardown last (its readers of output.xml and output.json, log.html, and
live capture, which follows the model). The writer numbers a node when it opens, so when such
a setup ends, or such a teardown's parent, it swaps the two runs of siblings: their rows'
positions, parents' positions, sequence numbers and ids, and their messages' node.

Message keys stay as they are: the store numbers messages in execution order, finer than the
model's (a keyword's return value is logged after its teardown), and each subtree's messages
stay one key range, ``[msg_lo, msg_hi)``.

A rotation is a plain tuple (it crosses the parser process's pipe):
``(parent_pre, id_prefix, a_pre, b_pre, end_pre, a_children, b_children, a_numbers,
b_numbers)``: the siblings in ``[a_pre, b_pre)`` (``a_children`` children of the parent,
taking ``a_numbers`` of its ``-kN``/``-rN`` numbers) go after those in ``[b_pre, end_pre]``.
"""

from __future__ import annotations

from typing import Any

Rotation = tuple[int, str, int, int, int, int, int, int, int]


def _shifts(pre: int, rotation: Rotation) -> tuple[int, int, int]:
    """How a node at ``pre`` moves: its position, its sequence (if a child of the parent)
    and its number among the parent's."""
    _, _, a_pre, b_pre, end_pre, a_children, b_children, a_numbers, b_numbers = rotation
    if pre < b_pre:
        return end_pre + 1 - b_pre, b_children, b_numbers
    return a_pre - b_pre, -a_children, -a_numbers


def renumbered(node_id: str, prefix: str, delta: int) -> str:
    """``node_id`` with its number right after ``prefix`` (``-k3``, ``-r3``, ``-r3.2``)
    moved by ``delta``; the ids below it carry it too."""
    rest = node_id[len(prefix):]
    end = 1
    while end < len(rest) and rest[end].isdigit():
        end += 1
    return f"{prefix}{rest[0]}{int(rest[1:end]) + delta}{rest[end:]}"


def rotated_node(row: tuple[Any, ...], base: int, rotation: Rotation) -> tuple[Any, ...]:
    """A node row (``rows.NODE_COLUMNS``) of the rotated range as it is afterwards."""
    parent_pre, prefix = rotation[0], rotation[1]
    moved, seq_delta, number_delta = _shifts(row[0] - base, rotation)
    parent, seq = row[2], row[3]
    if parent == parent_pre:
        seq += seq_delta
    else:
        parent += moved
    return (row[0] + moved, row[1] + moved, parent, seq, row[4],
            renumbered(row[5], prefix, number_delta), *row[6:])


def rotated_message(row: tuple[Any, ...], rotation: Rotation) -> tuple[Any, ...]:
    """A message row (``rows.MESSAGE_COLUMNS``) with its node where the rotation put it."""
    node_pre = row[1]
    if rotation[2] <= node_pre <= rotation[4]:
        return (row[0], node_pre + _shifts(node_pre, rotation)[0], *row[2:])
    return row


def rotate_stored(conn: Any, base: int, rotation: Rotation, msg_from: int,
                  columns: tuple[str, ...], insert: str) -> None:
    """The same rotation on the rows already written (a batch was committed between the
    siblings' start and the rotation: a large setup, a live run's flush). Called in a
    transaction; rows are read, deleted and written again, as a position is a key."""
    _, _, a_pre, b_pre, end_pre, *_ = rotation
    rows = conn.execute(f"SELECT {', '.join(columns)} FROM nodes WHERE key BETWEEN ? AND ?",
                        (base + a_pre, base + end_pre)).fetchall()
    if rows:
        conn.execute("DELETE FROM nodes WHERE key BETWEEN ? AND ?", (base + a_pre, base + end_pre))
        conn.executemany(insert, [rotated_node(tuple(row), base, rotation) for row in rows])
    conn.execute(
        "UPDATE messages SET node_pre = node_pre + CASE WHEN node_pre < ? THEN ? ELSE ? END"
        " WHERE key >= ? AND key < ? AND node_pre BETWEEN ? AND ?",
        (b_pre, end_pre + 1 - b_pre, a_pre - b_pre, msg_from, base + (1 << 32), a_pre, end_pre))
