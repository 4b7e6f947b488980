"""Progress lines for long steps: done/total, rate and ETA, at most one line every few seconds."""

from __future__ import annotations

import logging
import time


class Progress:
    def __init__(self, what: str, total: int, unit: str, logger: logging.Logger, every: float = 10.0):
        self.what, self.total, self.unit, self.log, self.every = what, total, unit, logger, every
        self.start = self.last = time.perf_counter()
        self.done = 0

    def update(self, count: int, extra: str = "") -> None:
        self.done += count
        now = time.perf_counter()
        if now - self.last < self.every and self.done < self.total:
            return
        self.last = now
        elapsed = now - self.start
        rate = elapsed / self.done if self.done else 0.0
        eta = rate * (self.total - self.done)
        self.log.info(
            "%s: %d/%d %s, %.3f s/%s, ETA %s%s",
            self.what, self.done, self.total, self.unit, rate, self.unit.rstrip("s"), _clock(eta),
            f", {extra}" if extra else "",
        )

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.start


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"
