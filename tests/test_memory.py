"""mvl.memory: the estimate-before-allocate check."""

import pytest

from mvl.memory import InsufficientMemoryError, available_memory, check_memory, format_bytes


def test_available_memory_matches_proc_meminfo():
    with open("/proc/meminfo") as fh:
        kb = next(int(line.split()[1]) for line in fh if line.startswith("MemAvailable:"))
    avail = available_memory()
    assert avail is not None and avail > 0
    # read a moment apart: the same order of magnitude, never more than MemAvailable plus drift
    assert 0.5 * kb * 1024 < avail < 1.5 * kb * 1024


def test_check_memory_names_size_available_and_advice():
    check_memory(10, "tiny", available=100)  # fits: nothing happens
    with pytest.raises(InsufficientMemoryError,
                       match=r"the solve needs about 6\.2 GB .* only 1\.0 GB .* use cg") as exc:
        check_memory(6.2e9, "the solve", advice="use cg", available=1e9)
    assert isinstance(exc.value, MemoryError)  # callers catching MemoryError still catch it


def test_format_bytes():
    assert format_bytes(512) == "512 B"
    assert format_bytes(1.5e6) == "1.5 MB"
    assert format_bytes(2.0e12) == "2.0 TB"
