"""Outputs released in their authors' line order, put back in their collection's (a line index per release)."""

from __future__ import annotations

import os

from naus import NausError
from naus.plumbing.files import parse_json, read_lines


def read_index(index_path: str | os.PathLike, lines: int, within: int) -> list[int]:
    """A released output's line index: for each of its `lines` lines, the 0-based line of its collection (of
    `within` lines) it summarises, each at most once. One integer per line, or one JSON list after `#` comment
    lines (the DUC2004 release)."""
    rows = [x for x in read_lines(index_path) if x.strip() and not x.startswith("#")]
    try:
        index = parse_json(rows[0].encode(), str(index_path)) if len(rows) == 1 and rows[0].lstrip().startswith("[") \
            else [int(x) for x in rows]
    except ValueError:
        index = None
    if not isinstance(index, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in index):
        raise NausError(f"{index_path}: expected one integer per line or a JSON list of integers")
    if len(index) != lines:
        raise NausError(f"{index_path}: {len(index)} entries for the output's {lines} lines")
    if len(set(index)) != len(index) or not all(0 <= x < within for x in index):
        raise NausError(f"{index_path}: not distinct lines of 0..{within - 1}")
    return index


def reordered(lines: list[str], index_path: str | os.PathLike) -> list[str]:
    """Line k of `lines` at line index[k]: a released output in its authors' order back in the collection's."""
    index = read_index(index_path, len(lines), len(lines))
    if sorted(index) != list(range(len(lines))):
        raise NausError(f"{index_path}: not a permutation of 0..{len(lines) - 1}")
    ordered = [""] * len(lines)
    for k, target in enumerate(index):
        ordered[target] = lines[k]
    return ordered
