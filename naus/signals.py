"""Stopping cleanly on SIGINT and SIGTERM.

Python runs a signal's handler between bytecodes; inside compiled (numba) code that moment can
fall while the kernel's results are being handed back, and the interrupt then corrupts the call
(a SystemError, or a crash). Compiled calls therefore run with both signals held back: one that
arrives meanwhile is delivered as soon as the call returns, at a point where stopping is safe.
"""

from __future__ import annotations

import contextlib
import signal
from typing import Iterator

STOPS = {signal.SIGINT, signal.SIGTERM}


@contextlib.contextmanager
def held() -> Iterator[None]:
    """SIGINT and SIGTERM wait until the block ends (for compiled kernels)."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
