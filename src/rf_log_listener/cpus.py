"""What this process may run on (capture side: the listener and the importer decide by it
whether a second process can work beside them)."""

from __future__ import annotations

import os


def one_cpu() -> bool:
    """This process may run on one CPU only (``taskset``, a container's cpuset, a one-core
    machine). A second process cannot overlap with it there; it only adds the hand-offs.
    The listener then writes in robot's process (a one-test suite on one core: 1.22x plain
    robot's wall with a writer process, 1.11x without; 20,000 keywords at TRACE: the same
    either way), and an import parses in its own process."""
    try:
        return len(os.sched_getaffinity(0)) == 1
    except (AttributeError, OSError):  # not Linux
        return (os.cpu_count() or 1) == 1
