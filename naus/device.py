"""Where models run: a device named by the user, checked against this machine, or the best one it has."""

from __future__ import annotations

import torch

from naus import NausError


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


def device_label(device: torch.device) -> str:
    """`cpu`, or `cuda` with the card's name: timings say which GPU made them."""
    return f"{device.type} ({torch.cuda.get_device_name(device)})" if device.type == "cuda" else str(device)
