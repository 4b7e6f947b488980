"""Where models run: a device named by the user, checked against this machine, or the best one it has."""

from __future__ import annotations

import platform
from pathlib import Path

import torch

from naus import NausError

ISA_FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8")  # the kernels naus pins or onnxruntime picks


def pick_device(name: str | None) -> torch.device:
    """`name` (cpu, cuda, cuda:1, ...) checked against this machine, or CUDA when it has it."""
    if not name:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except RuntimeError:
        raise NausError(f"--device {name}: not a device (cpu, cuda, cuda:1, ...)") from None
    if device.type not in ("cpu", "cuda"):
        raise NausError(f"--device {name}: naus runs on cpu or cuda")
    if device.type == "cuda" and not torch.cuda.is_available():
        raise NausError(f"--device {name}: CUDA is not available on this machine")
    if device.type == "cuda" and device.index is not None and device.index >= torch.cuda.device_count():
        raise NausError(f"--device {name}: this machine has {torch.cuda.device_count()} CUDA device(s)")
    return device


def _cpuinfo(field: str) -> str | None:
    """A field of /proc/cpuinfo's first CPU (Linux), or None."""
    try:
        return next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                    if line.startswith(field))
    except (OSError, StopIteration):
        return None


def cpu_name() -> str:
    """The CPU's model name (Linux), else the platform's word for it."""
    return _cpuinfo("model name") or platform.processor() or "unknown CPU"


def cpu_vendor() -> str:
    """The CPU's vendor string (GenuineIntel, AuthenticAMD): MKL picks its kernels by it as much as by the ISA."""
    return _cpuinfo("vendor_id") or "unknown"


def isa() -> list[str]:
    """Which of ISA_FLAGS the CPU has (Linux; empty elsewhere)."""
    try:
        flags = next((line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags")), "")
    except OSError:
        return []
    return sorted(set(flags.split()) & set(ISA_FLAGS))


def device_label(device: torch.device) -> str:
    """The device with the chip that made a timing: the card's name, or the CPU's with the instruction sets its
    times depend on."""
    if device.type == "cuda":
        return f"cuda ({torch.cuda.get_device_name(device)})"
    return f"cpu ({', '.join([cpu_name(), *isa()])})"


def freed_memory_returned() -> None:
    """For a process that reads a long input a chunk at a time: blocks of 1 MiB and more mapped of their own, so that
    freeing one gives it back. glibc's default raises that threshold as large blocks are freed, then serves them from
    a heap that grew with each chunk (`naus summarize` of 8,192 sentences peaked at 983 MB after the first 1,024 and
    1,196 MB after the last; now 886 and 925). Not for training, whose steps would map and unmap their buffers each
    time. Elsewhere than glibc, nothing."""
    import ctypes
    import ctypes.util

    libc = ctypes.util.find_library("c")
    mallopt = getattr(ctypes.CDLL(libc), "mallopt", None) if libc else None
    if mallopt is not None:
        mallopt(-3, 1 << 20)  # M_MMAP_THRESHOLD
