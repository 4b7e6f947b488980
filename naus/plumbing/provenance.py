"""Provenance: the parameters an output was made with, kept beside it, so that resuming or merging
with other parameters refuses instead of mixing work."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from naus import NausError
from naus.plumbing.files import FILE_RECORD, read_json, sha256sum

# What each JSON record the pipeline writes holds, checked wherever one is read back (naus.plumbing.files.check_shape).
HISTORY = {"history": [{"step": int, "train_loss": float, "dev_loss?": float, "lr?": float}],
           "skipped_pairs?": int, "inputs?": {}, "settings?": {"*": {}}, "best?": FILE_RECORD}  # naus.student.train
# The range of each number a history's entries may hold where the report prints or draws them.
HISTORY_BOUNDS = {"step": (0, 10**9), "train_loss": (0, 10**6), "dev_loss": (0, 10**6), "lr": (0, 10)}
TRAIN_TIMING = {"seconds": float, "steps?": int, "device?": str, "threads?": int}  # naus.student.train
# what `naus decode --provenance` writes
DECODING = {"input": FILE_RECORD, "checkpoint": FILE_RECORD, "summaries": FILE_RECORD, "lines": int}
DECODE_TIMING = {"seconds_per_sample": float, "device?": str, "threads?": int, "input?": FILE_RECORD,
                 "checkpoint?": FILE_RECORD}  # decode --timing
BUNDLE = {"decodings": {"*": {"input": FILE_RECORD, "checkpoint": FILE_RECORD, "summaries": [str]}}}  # decode-all
SHARD = {"parameters": {}, "total": int, "shard": [int]}  # naus.teacher.shards.ResumableOutput
DATA_INPUTS = {"inputs": [FILE_RECORD]}  # naus.data.corpus.Corpus: the files a corpus was made from
CHECKOUT = Path(__file__).resolve().parents[2]  # the checkout naus runs from, where it is one
CODE = ("naus", "workflow", "Snakefile", "config")  # what makes a profile's results, beside its data


def _git(*args: str) -> str | None:
    """A git command's output in naus's checkout; None where naus runs from no checkout (an installed wheel)."""
    import subprocess

    if not (CHECKOUT / ".git").exists():
        return None
    done = subprocess.run(["git", *args], cwd=CHECKOUT, capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else None


def code_state() -> dict:
    """The commit the code that runs is, and whether its files (`CODE`) are as committed: what results record."""
    commit = _git("rev-parse", "HEAD")
    changed = _git("status", "--porcelain", "--untracked-files=no", "--", *CODE)
    return {"commit": commit.strip() if commit else None, "clean": None if changed is None else not changed.strip()}


def code_changes(since: str) -> list[str]:
    """The files of `CODE` the checkout's commit changed since the commit `since` (all of them, when it is not
    one this checkout knows)."""
    changed = _git("diff", "--name-only", since, "HEAD", "--", *CODE)
    return list(CODE) if changed is None else changed.split()


def fingerprint(value: object) -> str:
    """A short content hash of plain data (pairs, a vocabulary): what a resumed run must share."""
    return hashlib.sha256(json.dumps(value).encode()).hexdigest()[:16]


def check_same_provenance(what: Path, old: dict, new: dict, ignore: tuple[str, ...] = (),
                          remedy: str = "pass --restart to start it over") -> None:
    """Refuse, naming the first differing key with both values."""
    def flat(tree: dict, prefix: str = "") -> dict:
        out = {}
        for key, value in tree.items():
            out.update(flat(value, f"{prefix}{key}.") if isinstance(value, dict) else {f"{prefix}{key}": value})
        return out

    old_flat, new_flat = flat(old), flat(new)
    for key in sorted(set(old_flat) | set(new_flat)):
        if key not in ignore and old_flat.get(key) != new_flat.get(key):
            raise NausError(f"{what}: made with {key} = {old_flat.get(key)!r}, now {key} = {new_flat.get(key)!r}; "
                            + remedy)


def file_record(path: str | Path) -> dict:
    """A file as provenance names it: its path as given and the sha256 of its content."""
    return {"path": str(path), "sha256": sha256sum(path)}


def read_history(path: Path) -> dict:
    """A student's history.json, of the shape `naus train` writes and every number in range (HISTORY_BOUNDS): one
    brought back from another machine is printed and drawn by the report."""
    record = read_json(path, bounds={"skipped_pairs": (0, 10**12)}, shape=HISTORY)
    for i, entry in enumerate(record["history"]):
        for key, (low, high) in HISTORY_BOUNDS.items():
            if key in entry and not low <= entry[key] <= high:
                raise NausError(f"{path}: history[{i}].{key} is {entry[key]!r}, expected a number in [{low}, {high}]")
    return record
