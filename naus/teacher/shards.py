"""Resumable JSON-lines outputs for long jobs split into shards.

A job appends finished records to `<out>.partial` in batches, each flushed to disk; when it
is interrupted, the next run keeps every complete record, drops a torn last line and goes on
from the next index. Only a finished job renames the partial file to `<out>`.

Each shard's provenance (the parameters that produce its records, the shard i/n and the total)
is kept beside the partial file and moves in with the records (`<out>.provenance.json`), the two replacing
the previous pair as a whole: a job resumed with other parameters refuses instead of mixing records (or sets
the partial file aside and starts over when asked), and `merge_shards` accepts only one complete set of shards
made with one set of parameters.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Iterable

from naus import NausError
from naus.plumbing.files import parse_json, read_json, read_lines
from naus.plumbing.outputs import OutputLock, atomic_open, check_regular_output, replacing, write_json
from naus.plumbing.provenance import SHARD, check_same_provenance


def shard_range(total: int, shard: int, shards: int) -> range:
    """The contiguous block of item indices that shard `shard` (0-based) of `shards` owns."""
    if not 0 <= shard < shards:
        raise NausError(f"shard must be i/n with 0 <= i < n, got {shard}/{shards}")
    return range(total * shard // shards, total * (shard + 1) // shards)


def provenance_path(out: str | Path) -> Path:
    out = Path(out)
    return out.with_name(out.name + ".provenance.json")


class ResumableOutput:
    """A shard's output, locked against a second writer from creation to `finish` or `close`
    (use it as a context manager: leaving it unfinished keeps the partial file for a resume)."""

    def __init__(self, out: str | Path, total: int, shard: tuple[int, int], parameters: dict, restart: bool = False):
        self.out = check_regular_output(out, f"a resumable output is renamed into place from {Path(out).name}.partial "
                                             "beside it")
        self.partial = self.out.with_name(self.out.name + ".partial")
        self.indices = shard_range(total, *shard)
        self.lock = OutputLock(self.out)
        try:
            provenance = {"parameters": parameters, "total": total, "shard": list(shard)}
            if self.partial.exists() and restart:
                self._set_aside(provenance)
            if self.partial.exists():
                check_same_provenance(self.partial, _read_provenance(self.partial, self.partial), provenance)
            write_json(provenance_path(self.partial), provenance)
            self.done = self._recover()
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> "ResumableOutput":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _set_aside(self, provenance: dict) -> None:
        """A partial file made with other parameters kept as `<out>.stale` (and its provenance), out of the way."""
        with contextlib.suppress(NausError):
            if _read_provenance(self.partial, self.partial) == provenance:
                return  # the same parameters: nothing to start over
        stale = self.out.with_name(self.out.name + ".stale")
        for old, aside in ((provenance_path(self.partial), provenance_path(stale)), (self.partial, stale)):
            if old.exists():
                os.replace(old, aside)

    def close(self) -> None:
        """Let another writer in; what was appended stays in the partial file."""
        self.lock.release()

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
                    record = parse_json(raw, str(self.partial))
                except NausError:  # a torn or damaged line (bytes that are not UTF-8 too): resume from here
                    break
                expected = self.indices.start + count
                if not isinstance(record, dict) or record.get("index") != expected:
                    raise NausError(
                        f"{self.partial}: line {count + 1} is not the record of index {expected}; "
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
        record = provenance_path(self.out)
        with replacing(self.out.parent, (self.out.name, record.name)) as stage:  # linked: a stop keeps the partial
            os.link(self.partial, stage / self.out.name)
            os.link(provenance_path(self.partial), stage / record.name)
        for done in (self.partial, provenance_path(self.partial)):
            done.unlink()
        self.close()


def read_records(path: str | Path, field: str | None = None) -> list[dict]:
    """A JSON-lines file's records; with `field`, each an object with an integer index and that field a line of text."""
    records = []
    for number, line in enumerate(read_lines(path), 1):
        records.append(parse_json(line.encode(), f"{path}: line {number}"))
        if field:
            _check_record(records[-1], path, number, field)
    return records


def _read_provenance(out: Path, what: Path) -> dict:
    path = provenance_path(out)
    if not path.is_file():
        raise NausError(f"{what}: no {path.name} beside it (written by an older naus or by hand); "
                        "search the shard again (naus search --restart)")
    provenance = read_json(path, shape=SHARD)
    if len(provenance["shard"]) != 2 or not 0 <= provenance["shard"][0] < provenance["shard"][1]:
        raise NausError(f"{path}: shard is {provenance['shard']}, expected [i, n] with 0 <= i < n")
    return provenance


def merge_shards(parts: list[str | Path], out_jsonl: str | Path, out_text: str | Path, field: str) -> int:
    """Concatenate shard records in index order, given one complete set of shards (by their
    provenance files) whose indices run 0..N-1 without gaps; one shard in memory at a time."""
    parts = [Path(p) for p in parts]
    provenances = [_read_provenance(part, part) for part in parts]
    for part, provenance in zip(parts[1:], provenances[1:]):
        check_same_provenance(part, provenances[0], provenance, ignore=("shard",))
    shards = provenances[0]["shard"][1]
    found = sorted(p["shard"][0] for p in provenances)
    if found != list(range(shards)):
        missing = sorted(set(range(shards)) - set(found))
        raise NausError(f"merging {len(parts)} files: expected shards 0..{shards - 1} once each, "
                        f"{'missing ' + ', '.join(map(str, missing)) if missing else 'got ' + str(found)}")
    order = sorted(range(len(parts)), key=lambda k: provenances[k]["shard"][0])
    expected = 0  # shards are contiguous blocks: in shard order the indices run 0..N-1, so nothing is held
    with atomic_open(out_jsonl) as records_out, atomic_open(out_text) as text_out:
        for part in (parts[k] for k in order):
            for number, record in enumerate(read_records(part), 1):
                _check_record(record, part, number, field)
                if record["index"] != expected:
                    raise NausError(f"{part}: line {number}: index {record['index']} where {expected} was expected "
                                    "(a record missing or duplicated)")
                records_out.write(json.dumps(record, ensure_ascii=False) + "\n")
                text_out.write(record[field] + "\n")
                expected += 1
        if expected != provenances[0]["total"]:
            raise NausError(f"merging {len(parts)} shards: {expected} records, expected {provenances[0]['total']}")
        for old in (out_jsonl, out_text):  # a stop between the two renames leaves an output missing, never a mixed pair
            if Path(old).is_file() and not Path(old).is_symlink():
                os.unlink(old)
    return expected


def _check_record(record: object, part: Path, number: int, field: str) -> None:
    if not isinstance(record, dict) or not isinstance(record.get("index"), int) or field not in record:
        raise NausError(f"{part}: line {number}: a record needs an integer 'index' and {field!r}")
    if not isinstance(record[field], str) or "\n" in record[field] or "\r" in record[field]:
        raise NausError(f"{part}: line {number}: {field!r} must be one line of text, got {record[field]!r:.60}")
