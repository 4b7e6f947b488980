"""Reading and writing the pipeline's text files safely.

Every output is written to a temporary file beside its target and renamed, so an
interrupted step never leaves a half-written artifact that a later step would trust.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import tempfile
from pathlib import Path
from typing import IO, Iterable, Iterator

from naus import NausError


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w") -> Iterator[IO]:
    """Open a temporary file next to `path`; on success rename it over `path`.

    The file gets the mode a plain `open` would give (0666 less the umask), not mkstemp's 0600,
    so a group sharing a cluster directory can read the pipeline's outputs.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    umask = os.umask(0)
    os.umask(umask)
    os.fchmod(fd, 0o666 & ~umask)
    try:
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


class OutputLock:
    """One writer per resumable output: an exclusive `flock` on `<path>.lock`, which holds the
    writer's process id and host so that a second writer can name it.

    The kernel drops the lock when its holder exits or is killed, so a stale file never blocks
    anyone; the file is removed on `release` while still locked, and a writer that locked a file
    removed under it (a race with that release) tries again.
    """

    def __init__(self, path: str | os.PathLike):
        import fcntl
        import socket

        self.path = Path(f"{path}.lock")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another process"
                os.close(fd)
                raise NausError(f"{path}: being written by {holder} (its lock: {self.path}); "
                                "wait for it to end or stop it, then run again") from None
            try:
                if os.fstat(fd).st_ino == os.stat(self.path).st_ino:
                    break
            except FileNotFoundError:
                pass
            os.close(fd)
        os.ftruncate(fd, 0)
        os.write(fd, f"process {os.getpid()} on {socket.gethostname()}\n".encode())
        self.fd: int | None = fd

    def release(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
            os.close(self.fd)
            self.fd = None

    def __enter__(self) -> "OutputLock":
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def write_lines(path: str | os.PathLike, lines: Iterable[str]) -> int:
    """Write one item per line atomically; returns the number of lines."""
    count = 0
    with atomic_open(path) as out:
        for line in lines:
            if "\n" in line:
                raise NausError(f"{path}: line {count + 1} contains a newline")
            out.write(line + "\n")
            count += 1
    return count


def write_text(path: str | os.PathLike, text: str) -> None:
    with atomic_open(path) as handle:
        handle.write(text)


def write_json(path: str | os.PathLike, obj: object) -> None:
    with atomic_open(path) as out:
        json.dump(obj, out, indent=2, sort_keys=False)
        out.write("\n")


def read_lines(path: str | os.PathLike) -> list[str]:
    """Read a UTF-8 text file as stripped lines, naming the file and line on bad input."""
    path = check_file(path)
    return decode_lines(path.read_bytes(), str(path))


def decode_lines(raw: bytes, name: str) -> list[str]:
    """Split UTF-8 bytes (a file's or standard input's, called `name`) into stripped lines."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise NausError(f"{name}: line {line}: not valid UTF-8 (byte 0x{raw[err.start]:02x})") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r").strip() for line in lines]


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
    handles = [open(p, "rb") for p in paths]
    try:
        for number, raws in enumerate(itertools.zip_longest(*handles), 1):
            if None in raws:
                counts = [number - 1 + (raw is not None) + sum(1 for _ in handle) for raw, handle in zip(raws, handles)]
                raise NausError("line counts differ: " + ", ".join(f"{p} has {n}" for p, n in zip(paths, counts)))
            yield tuple(_decode_line(raw, path, number) for raw, path in zip(raws, paths))
    finally:
        for handle in handles:
            handle.close()


def _decode_line(raw: bytes, path: Path, number: int) -> str:
    try:
        return raw.decode("utf-8").rstrip("\n").rstrip("\r").strip()
    except UnicodeDecodeError as err:
        raise NausError(f"{path}: line {number}: not valid UTF-8 (byte 0x{raw[err.start]:02x})") from None


def check_file(path: str | os.PathLike, what: str = "file", hint: str = "") -> Path:
    """A readable input is an existing file: say which of the two it is not (`what` it should hold,
    and a `hint` on where it comes from)."""
    path = Path(path)
    if path.is_dir():
        raise NausError(f"{path}: is a directory, expected a file")
    if not path.is_file():
        raise NausError(f"{path}: {what} not found" + (f" ({hint})" if hint else ""))
    return path


def sha256sum(path: str | os.PathLike) -> str:
    """The SHA-256 of a file's content: what provenance records, so a file rebuilt in place is noticed."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_json(path: str | os.PathLike, required: tuple[str, ...] = (),
              bounds: dict[str, tuple[float, float]] | None = None) -> object:
    """A JSON file; with `required`, an object that must have those keys (the first missing one is named);
    with `bounds`, each of those keys it has a finite number in [low, high]."""
    path = check_file(path)
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise NausError(f"{path}: not valid JSON ({err})") from None
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
    return value
