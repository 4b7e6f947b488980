"""Provenance: the parameters an output was made with, kept beside it, so that resuming or merging
with other parameters refuses instead of mixing work."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from naus import NausError


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
    from naus.files import sha256sum

    return {"path": str(path), "sha256": sha256sum(path)}
