"""Memory estimates made before large allocations (implements no section of the paper).

A dense solver that would need more memory than the machine has should say so before it allocates,
naming the size and what to do instead, rather than fail inside numpy with a raw allocation error.
:func:`check_memory` is that check; :func:`available_memory` is what it compares against (the
smaller of the kernel's available memory and a cgroup limit, so that containers and batch jobs see
their own limit).
"""

from __future__ import annotations

import os

__all__ = ["InsufficientMemoryError", "available_memory", "check_memory", "format_bytes"]


class InsufficientMemoryError(MemoryError):
    """A computation would need more memory than is available; raised before anything is allocated."""


def format_bytes(nbytes):
    """``nbytes`` in human units, e.g. ``"6.2 GB"`` (powers of 1000, as ``free -h --si`` prints)."""
    n = float(nbytes)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000.0
    return f"{n:.1f} TB"  # pragma: no cover


def _cgroup_limit():
    """The memory limit of this process's cgroup (v2 ``memory.max`` or v1 ``limit_in_bytes``), or None."""
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as fh:
                text = fh.read().strip()
        except OSError:
            continue
        if text.isdigit() and int(text) < (1 << 60):  # v1 reports "no limit" as a huge number
            return int(text)
    return None


def available_memory():
    """Bytes this process can still allocate without swapping: ``MemAvailable`` of /proc/meminfo (Linux), else
    the free physical pages (``os.sysconf``), capped by a cgroup limit if one is set; None if unknown."""
    avail = None
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
                    break
    except OSError:
        pass
    if avail is None:
        try:
            avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (AttributeError, ValueError, OSError):
            avail = None
    limit = _cgroup_limit()
    if limit is not None:
        avail = limit if avail is None else min(avail, limit)
    return avail


def check_memory(nbytes, what, advice="", available=None):
    """Raise :class:`InsufficientMemoryError` if ``nbytes`` exceed the available memory (``available``, bytes; None:
    :func:`available_memory`). ``what`` names the computation, ``advice`` says what to do instead. Does nothing
    when the available memory cannot be determined."""
    avail = available_memory() if available is None else int(available)
    if avail is None or nbytes <= avail:
        return
    msg = f"{what} needs about {format_bytes(nbytes)} of memory, but only {format_bytes(avail)} is available"
    if advice:
        msg += f"; {advice}"
    raise InsufficientMemoryError(msg)
