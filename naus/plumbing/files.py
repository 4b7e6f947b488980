"""Reading the pipeline's inputs safely: text a line at a time in every line-end convention, JSON and arrays
checked against their shape, a bad input refused in one line naming the file (and line or key)."""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import re
import stat
from pathlib import Path
from typing import IO, Iterable, Iterator

from naus import NausError
from naus.text import clean


def read_lines(path: str | os.PathLike) -> list[str]:
    """Read a UTF-8 text file as stripped lines, naming the file and line on bad input."""
    path = check_file(path)
    return list(iter_lines(path))


BLOCK = 1 << 20  # bytes read at a time: what a file of any size costs before its lines are used
_LINE_END = re.compile(rb"\r\n|\r|\n")


def iter_lines(source: str | os.PathLike | IO[bytes], name: str | None = None,
               max_line_bytes: int | None = None) -> Iterator[str]:
    """A file's (or a binary stream's, called `name`) lines, read a block at a time: `\\n`, `\\r\\n` and a lone
    `\\r` each end a line (every convention a text file is written in); each line `naus.text.clean`ed and stripped
    (a byte order mark, a format character, is gone with them). A line that is not UTF-8, or longer than
    `max_line_bytes`, is refused naming the source and line."""
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as handle:
            yield from _lines(iter(lambda: handle.read1(BLOCK), b""), name or str(source), max_line_bytes)
        return
    read = source.read1 if hasattr(source, "read1") else source.read
    yield from _lines(iter(lambda: read(BLOCK), b""), name or "standard input", max_line_bytes)


def _lines(blocks: Iterator[bytes], name: str, max_line_bytes: int | None = None) -> Iterator[str]:
    pending, number = b"", 0
    for block in blocks:
        scanned, pending = max(len(pending) - 1, 0), pending + block  # a held CR is looked at again
        start = 0
        for end in _LINE_END.finditer(pending, scanned):
            if end.group() == b"\r" and end.end() == len(pending):
                break  # a CR at a block's end may be the first half of a CRLF: decided with the next block
            number += 1
            yield _decode_line(pending[start : end.start()], name, number)
            start = end.end()
        pending = pending[start:]
        if max_line_bytes is not None and len(pending) > max_line_bytes:
            raise NausError(f"{name}: line {number + 1}: longer than {max_line_bytes:,} bytes (one sentence a line "
                            "is read)")
    if pending:  # the last line, without a line end or with the lone CR held above
        yield _decode_line(pending.removesuffix(b"\r"), name, number + 1)


def batched(items: Iterable, size: int) -> Iterator[list]:
    """Lists of `size` items (the last one shorter), read as they come (itertools.batched of Python 3.12)."""
    items = iter(items)
    while chunk := list(itertools.islice(items, size)):
        yield chunk


def read_parallel(*paths: str | os.PathLike) -> list[list[str]]:
    """Read files that must have one line per item each; mismatched counts are an error."""
    columns = [read_lines(p) for p in paths]
    counts = {str(p): len(c) for p, c in zip(paths, columns)}
    if len(set(counts.values())) > 1:
        detail = ", ".join(f"{p} has {n}" for p, n in counts.items())
        raise NausError(f"line counts differ: {detail}")
    return columns


def iter_parallel(*paths: str | os.PathLike) -> Iterator[tuple[str, ...]]:
    """`read_parallel` line by line: a corpus of millions of lines never sits in memory whole."""
    paths = [check_file(p) for p in paths]
    readers = [iter_lines(p) for p in paths]
    for number, lines in enumerate(itertools.zip_longest(*readers), 1):
        if None in lines:
            counts = [number - 1 + (line is not None) + sum(1 for _ in reader) for line, reader in zip(lines, readers)]
            raise NausError("line counts differ: " + ", ".join(f"{p} has {n}" for p, n in zip(paths, counts)))
        yield lines


def _decode_line(raw: bytes, name: str | Path, number: int) -> str:
    try:
        return clean(raw.decode("utf-8")).strip()
    except UnicodeDecodeError as err:
        raise NausError(f"{name}: line {number}: not valid UTF-8 (byte 0x{raw[err.start]:02x})") from None


def check_file(path: str | os.PathLike, what: str = "file", hint: str = "") -> Path:
    """A readable input is an existing file: say which of the two it is not (`what` it should hold,
    and a `hint` on where it comes from), or what else stops it being read (a loop of symbolic links)."""
    path = Path(path)
    try:
        kind = os.stat(path).st_mode
    except FileNotFoundError:
        raise NausError(f"{path}: {what} not found" + (f" ({hint})" if hint else "")) from None
    except OSError as err:
        raise NausError(f"{path}: {err.strerror or err}") from None
    if stat.S_ISDIR(kind):
        raise NausError(f"{path}: is a directory, expected a file")
    if stat.S_ISFIFO(kind):  # a pipe (`--hyp <(...)`, /dev/stdin) is read as it comes; a device is refused (/dev/zero)
        return path
    if not stat.S_ISREG(kind):
        raise NausError(f"{path}: not a regular file or a pipe")
    return path


MAX_ARRAY_ITEMS = 1 << 28  # a static table of 700,000 words x 384 floats; an estimate is 385 x 384


def read_npz(path: str | os.PathLike, what: str, hint: str, arrays: dict[str, tuple[str, tuple]],
             max_items: int = MAX_ARRAY_ITEMS, optional: tuple[str, ...] = ()) -> dict:
    """The arrays of an `.npz` we wrote, by name: (dtype kinds, shape) each, a shape's None any size; those named
    `optional` may be absent. Each header is checked before its array is read, so a crafted header cannot ask for
    gigabytes, and nothing is unpickled. Returns NumPy arrays."""
    import zipfile

    import numpy as np

    path = check_file(path, what, hint)
    out = {}
    try:
        with zipfile.ZipFile(path) as archive:
            for name, (kinds, shape) in arrays.items():
                if f"{name}.npy" not in archive.namelist():
                    if name in optional:
                        continue
                    raise NausError(f"{path}: not a {what} (no array {name!r}; {hint})")
                with archive.open(f"{name}.npy") as member:
                    version = np.lib.format.read_magic(member)
                    read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) \
                        else np.lib.format.read_array_header_2_0
                    found, _, dtype = read_header(member)
                    if math.prod(found) > max_items:
                        raise NausError(f"{path}: array {name!r} is {dtype} of shape {found}: more than "
                                        f"{max_items:,} items (a {what})")
                    if (dtype.kind not in kinds or len(found) != len(shape)
                            or any(want is not None and want != got for want, got in zip(shape, found))):
                        expected = " x ".join("N" if n is None else str(n) for n in shape) or "a scalar"
                        raise NausError(f"{path}: array {name!r} is {dtype} of shape {found}, expected {expected} "
                                        f"of kind {kinds} (a {what})")
                with archive.open(f"{name}.npy") as member:
                    out[name] = np.lib.format.read_array(member, allow_pickle=False)
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as err:
        raise NausError(f"{path}: not a {what} ({type(err).__name__}: {err}; {hint})") from None
    return out


def same_digest(found: str, expected: str) -> bool:
    """Whether two hex digests are one: hex is case-insensitive (`ABC1` is `abc1`)."""
    return isinstance(expected, str) and found.strip().lower() == expected.strip().lower()


def sha256sum(path: str | os.PathLike) -> str:
    """The SHA-256 of a file's content: what provenance records, so a file rebuilt in place is noticed. Only a
    regular file: a pipe could block and a device never end."""
    check_file(path)
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise NausError(f"{path}: not a regular file (a pipe or a device): its content cannot be recorded")
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_json(path: str | os.PathLike, required: tuple[str, ...] = (),
              bounds: dict[str, tuple[float, float]] | None = None, shape: object = None) -> object:
    """A JSON file; with `required`, an object that must have those keys (the first missing one is named);
    with `bounds`, each of those keys it has a finite number in [low, high]; with `shape`, of that shape
    (`check_shape`)."""
    path = check_file(path)
    if (size := path.stat().st_size) > MAX_JSON_BYTES:
        raise NausError(f"{path}: {size:,} bytes of JSON, more than the {MAX_JSON_BYTES:,} any file of ours holds")
    value = parse_json(path.read_bytes(), str(path))
    if required:
        if not isinstance(value, dict):
            raise NausError(f"{path}: expected a JSON object with {', '.join(required)}")
        for key in required:
            if key not in value:
                raise NausError(f"{path}: missing key {key!r}")
    for key, (low, high) in (bounds or {}).items():
        number = value.get(key) if isinstance(value, dict) else None
        if key in value and (isinstance(number, bool) or not isinstance(number, (int, float))
                             or not low <= number <= high):  # also false for nan
            raise NausError(f"{path}: {key} is {number!r}, expected a number in [{low}, {high}]")
    if shape is not None:
        check_shape(value, shape, str(path))
    return value


MAX_JSON_BYTES = 64 << 20  # more than any JSON file naus writes (a profile's every metric, a training history)
MAX_JSON_DEPTH = 32  # ours nest a few levels: a deeper value is damage, refused before a parser or checker recurses
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_JSON_BRACKETS = re.compile(rb"[\[\]{}]")


def parse_json(raw: bytes, name: str) -> object:
    """JSON bytes (a file's, a line's or an argument's, called `name`), refused in one line when they are damaged,
    nest deeper than MAX_JSON_DEPTH or longer than MAX_JSON_BYTES."""
    if len(raw) > MAX_JSON_BYTES:
        raise NausError(f"{name}: {len(raw):,} bytes of JSON, more than the {MAX_JSON_BYTES:,} any of ours holds")
    depth = deepest = 0
    for bracket in _JSON_BRACKETS.findall(_JSON_STRING.sub(b"", raw)):  # brackets outside strings
        depth += 1 if bracket in b"[{" else -1
        deepest = max(deepest, depth)
    if deepest > MAX_JSON_DEPTH:
        raise NausError(f"{name}: JSON nested too deeply ({deepest} levels; ours have at most {MAX_JSON_DEPTH})")
    try:
        value = json.loads(raw.decode("utf-8"))
        json.dumps(value, ensure_ascii=False).encode("utf-8")  # a lone surrogate (\ud800) could never be written out
        return value
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise NausError(f"{name}: not valid JSON ({err})") from None
    except UnicodeEncodeError:
        raise NausError(f"{name}: a string holds a lone surrogate (\\ud800-\\udfff), no character") from None


FILE_RECORD = {"path": str, "sha256": str}  # naus.plumbing.provenance.file_record


def check_shape(value: object, shape: object, name: str, key: str = "") -> None:
    """`value` (parsed JSON) of `shape`: a type (`float` takes a finite int or float, `int` no bool), a
    one-item list (a list of that), a dict (an object with those keys, a key ending in `?` optional, others
    allowed; `{"*": inner}`: every value of that), or `object` (anything). The first mismatch is named with
    its key."""
    where = f"{name}: {key or 'the content'}"
    if shape is object:
        return
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            raise NausError(f"{where} is {_kind(value)}, expected an object")
        if list(shape) == ["*"]:
            for field, item in value.items():
                check_shape(item, shape["*"], name, f"{key}.{field}" if key else field)
            return
        for field, inner in shape.items():
            optional, field = field.endswith("?"), field.rstrip("?")
            if field in value:
                check_shape(value[field], inner, name, f"{key}.{field}" if key else field)
            elif not optional:
                raise NausError(f"{where} has no {field!r}")
    elif isinstance(shape, list):
        if not isinstance(value, list):
            raise NausError(f"{where} is {_kind(value)}, expected a list")
        for index, item in enumerate(value):
            check_shape(item, shape[0], name, f"{key}[{index}]")
    elif shape is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise NausError(f"{where} is {_kind(value)}, expected a finite number")
    elif isinstance(value, bool) is not (shape is bool) or not isinstance(value, shape):
        raise NausError(f"{where} is {_kind(value)}, expected {'an' if shape is int else 'a'} {shape.__name__}")


def _kind(value: object) -> str:
    text = json.dumps(value) if not isinstance(value, (dict, list)) else type(value).__name__
    return text if len(text) <= 40 else text[:37] + "..."


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether two paths name one file (the same path resolved, or a hard or symbolic link to it); a path that
    cannot be resolved (a loop of links) is only itself."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
