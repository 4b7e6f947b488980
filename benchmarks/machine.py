"""What every benchmark records of the machine it ran on: the CPU's model name and the instruction sets its times
and bytes depend on."""

from __future__ import annotations

import platform
from pathlib import Path

ISA_FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8")  # the kernels naus pins or onnxruntime picks


def cpu_name() -> str:
    """The CPU's model name (Linux), else the platform's word for it."""
    try:
        return next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                    if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or "unknown CPU"


def isa() -> list[str]:
    """Which of ISA_FLAGS the CPU has (Linux; empty elsewhere)."""
    try:
        flags = next((line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags")), "")
    except OSError:
        return []
    return sorted(set(flags.split()) & set(ISA_FLAGS))
