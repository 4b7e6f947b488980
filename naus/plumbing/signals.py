"""Stopping cleanly on SIGINT and SIGTERM, inside compiled kernels too.

Python runs a signal's handler between bytecodes, so a compiled (numba) kernel would hold a stop
back for its whole run (minutes, for a huge beam), and a handler that raises while the kernel's
results are being handed back corrupts the call (a SystemError, or a crash). So while a kernel
runs (`stoppable`), the Python handlers only note the signal, and CPython's own C-level handler,
which runs at once, writes the signal's number into a one-byte flag: its wakeup file descriptor
is a memory file mapped here. The long kernels poll the flag between slots (`stopped`, an atomic
load the compiler cannot hoist out of a loop) and return early; the signal is then delivered
again where stopping is safe, and the half-made results are never returned. Kernels that take
microseconds hold the signals back instead (`held`).
"""

from __future__ import annotations

import contextlib
import mmap
import os
import signal
import threading
from typing import Iterator

import numpy as np
from numba import types
from numba.extending import intrinsic

STOPS = (signal.SIGINT, signal.SIGTERM)
_flag: tuple[int, np.ndarray] | None = None  # the memory file and its first byte, made on first use


def _stop_flag() -> tuple[int, np.ndarray]:
    global _flag
    if _flag is None:
        fd = os.memfd_create("naus-stop", os.MFD_CLOEXEC)
        os.ftruncate(fd, mmap.PAGESIZE)
        os.set_blocking(fd, False)  # set_wakeup_fd asks for it; a memory file never blocks anyway
        _flag = fd, np.frombuffer(mmap.mmap(fd, mmap.PAGESIZE), dtype=np.uint8, count=1)
    return _flag


@contextlib.contextmanager
def held() -> Iterator[None]:
    """SIGINT and SIGTERM wait until the block ends: for kernels of microseconds (a top-k), where a stop can
    wait and `stoppable`'s set-up would cost more than the kernel."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@contextlib.contextmanager
def stoppable() -> Iterator[np.ndarray]:
    """The flag a compiled kernel polls (`stopped`); SIGINT or SIGTERM meanwhile sets it, and is
    delivered to the previous handler when the block ends. Outside the main thread (where Python
    delivers no signal) the flag stays down and the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield np.zeros(1, dtype=np.uint8)
        return
    fd, flag = _stop_flag()
    caught: list[int] = []
    previous = {s: signal.getsignal(s) for s in STOPS}
    for s, handler in previous.items():
        if handler is not signal.SIG_IGN:  # an ignored signal stays ignored, and never sets the flag
            signal.signal(s, lambda signum, frame: caught.append(signum))
    before = signal.set_wakeup_fd(fd, warn_on_full_buffer=False)
    try:
        yield flag
    finally:
        signal.set_wakeup_fd(before)
        for s, handler in previous.items():
            signal.signal(s, handler)
        flag[0] = 0
        os.lseek(fd, 0, os.SEEK_SET)
        if caught:
            signal.raise_signal(caught[0])  # its own handler, now: KeyboardInterrupt in `naus`, exit for SIG_DFL
            raise KeyboardInterrupt(signal.Signals(caught[0]).name)  # a handler that returned: still no half results


@intrinsic
def stopped(typingctx, flag):
    """In a compiled kernel: has a stop arrived since the kernel started (`stoppable`'s flag)?"""
    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        value = builder.load_atomic(data, "acquire", 1)
        return builder.icmp_unsigned("!=", value, value.type(0))

    return types.boolean(flag), codegen
