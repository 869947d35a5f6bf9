"""Short digests, shared by both sides: test ids across runs (``history``), a cursor's
query and the usage record's sessions and targets (read side). BLAKE2 from CPython's own
module: ``hashlib`` starts OpenSSL first, 4-5 ms of a reading command that makes one digest
(issue #19). It is the algorithm ``hashlib.blake2b`` gives, so the digests are the same."""

from __future__ import annotations

try:
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a CPython built without its own hashes (FIPS builds)
    from hashlib import blake2b


def digest(data: bytes, *, key: bytes = b"", size: int = 8) -> bytes:
    """``size`` bytes of BLAKE2b of ``data``, keyed with ``key`` (at most 64 bytes)."""
    return blake2b(data, digest_size=size, key=key).digest()
