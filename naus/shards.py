"""Resumable JSON-lines outputs for long jobs split into shards.

A job appends finished records to `<out>.partial` in batches, each flushed to disk; when it
is interrupted, the next run keeps every complete record, drops a torn last line and goes on
from the next index. Only a finished job renames the partial file to `<out>`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterable

from naus import NausError
from naus.files import atomic_open


class ResumableOutput:
    def __init__(self, out: str | Path, indices: range):
        self.out = Path(out)
        self.partial = self.out.with_name(self.out.name + ".partial")
        self.indices = indices
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self.done = self._recover()

    def _recover(self) -> int:
        """Count the complete records already in the partial file and cut anything after them."""
        if not self.partial.exists():
            return 0
        good_bytes, count = 0, 0
        with open(self.partial, "rb") as handle:
            for raw in handle:
                if not raw.endswith(b"\n"):
                    break
                try:
                    record = json.loads(raw)
                except json.JSONDecodeError:
                    break
                expected = self.indices.start + count
                if record.get("index") != expected:
                    raise NausError(
                        f"{self.partial}: line {count + 1} has index {record.get('index')}, expected {expected}; "
                        "delete the file to start the shard again"
                    )
                good_bytes += len(raw)
                count += 1
        with open(self.partial, "r+b") as handle:
            handle.truncate(good_bytes)
        return count

    @property
    def remaining(self) -> range:
        return self.indices[self.done :]

    def append(self, records: Iterable[dict]) -> None:
        with open(self.partial, "a", encoding="utf-8") as handle:
            for record in records:
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
                self.done += 1
            handle.flush()
            os.fsync(handle.fileno())

    def finish(self) -> None:
        if self.done != len(self.indices):
            raise NausError(f"{self.partial}: {self.done} of {len(self.indices)} records written")
        if not self.partial.exists():
            self.partial.touch()
        os.replace(self.partial, self.out)


def read_records(path: str | Path) -> list[dict]:
    path = Path(path)
    if not path.is_file():
        raise NausError(f"{path}: file not found")
    records = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                raise NausError(f"{path}: line {number}: not valid JSON") from None
    return records


def merge_shards(parts: list[str | Path], out_jsonl: str | Path, out_text: str | Path, field: str) -> int:
    """Concatenate shard records in index order; check that indices run 0..N-1 without gaps."""
    records = [r for part in parts for r in read_records(part)]
    records.sort(key=lambda r: r["index"])
    for expected, record in enumerate(records):
        if record["index"] != expected:
            raise NausError(f"merging {len(parts)} shards: index {expected} is missing or duplicated")
    with atomic_open(out_jsonl) as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    with atomic_open(out_text) as handle:
        for record in records:
            handle.write(record[field] + "\n")
    return len(records)
