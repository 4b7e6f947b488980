"""The data manifest (`naus/data/manifest.yaml`) read: each raw input's origin and sha256, each derived file's
sha256."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import yaml

from naus import NausError

MANIFEST = Path(__file__).with_name("manifest.yaml")


@functools.cache
def manifest() -> dict:
    with open(MANIFEST, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


@dataclass(frozen=True)
class RawFile:
    source: str
    path: str
    url: str | None  # None: the user brings it (its source's `bring_your_own` says how)
    sha256: str
    size: int


def raw_file(source: str, path: str) -> RawFile:
    entry = manifest()["sources"][source]["files"][path]
    return RawFile(source, path, entry.get("url"), entry["sha256"], entry["size"])


def expected(output: str) -> str:
    derived = manifest()["derived"]
    if output not in derived:
        raise NausError(f"{output}: the data manifest commits no sha256 for it (naus/data/manifest.yaml, derived)")
    return derived[output]["sha256"]
