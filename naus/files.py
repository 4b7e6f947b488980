"""Reading and writing the pipeline's text files safely.

Every output is written to a temporary file beside its target and renamed, so an
interrupted step never leaves a half-written artifact that a later step would trust.
"""

from __future__ import annotations

import contextlib
import errno
import glob
import hashlib
import itertools
import json
import math
import os
import re
import stat
import sys
import tempfile
from pathlib import Path
from typing import IO, Iterable, Iterator

from naus import NausError
from naus.text import clean


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w") -> Iterator[IO]:
    """Open a temporary file next to `path`; on success rename it over `path`.

    Only a regular file (or a new path) is replaced so: a device, a FIFO or a socket already at `path`
    (`/dev/null`, `/dev/stdout`, a pipe's reader) is written directly, and a symbolic link is followed,
    its target replaced, never the link. The file gets the mode a plain `open` would give (0666 less the
    umask), not mkstemp's 0600, so a group sharing a cluster directory can read the pipeline's outputs.
    An OS error names the file. `-` is standard output, as in every command's --out.
    """
    if str(path) == "-":
        if sys.stdout is None:
            raise NausError("standard output is closed: give a file (--out FILE)")
        yield sys.stdout.buffer if "b" in mode else sys.stdout
        (sys.stdout.buffer if "b" in mode else sys.stdout).flush()
        return
    path = Path(path)
    encoding = {} if "b" in mode else {"encoding": "utf-8"}
    try:
        kind = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        kind = None
    try:
        if kind is not None and not stat.S_ISREG(kind):
            if stat.S_ISDIR(kind):
                raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
            with open(path, mode, **encoding) as handle:  # a stream: there is no file to replace
                yield handle
            return
        path = Path(os.path.realpath(path)) if path.is_symlink() else path
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as err:
        raise _naming(err, path) from err
    umask = os.umask(0)
    os.umask(umask)
    os.fchmod(fd, 0o666 & ~umask)
    try:
        with os.fdopen(fd, mode, **encoding) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as err:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(err, OSError):
            raise _naming(err, path, tmp) from err
        raise


def _naming(err: OSError, path: Path, tmp: str | None = None) -> OSError:
    """An error that names no file (a write's: a full disk) or only our temporary one, naming `path`."""
    if err.filename is not None and err.filename != tmp:
        return err
    try:
        return type(err)(err.errno, err.strerror or str(err), str(path))
    except TypeError:  # a subclass built otherwise (urllib's URLError)
        return OSError(err.errno, err.strerror or str(err), str(path))


class OutputLock:
    """One writer per resumable output: an exclusive `flock` on `<path>.lock`, which holds the
    writer's process id and host so that a second writer can name it.

    The kernel drops the lock when its holder exits or is killed, so a stale file never blocks
    anyone; the file is removed on `release` while still locked, and a writer that locked a file
    removed under it (a race with that release) tries again. Only a lock is ever truncated or removed: a
    link at `<path>.lock`, or a file there that no writer made (its text is not a holder's line), is refused.
    """

    def __init__(self, path: str | os.PathLike):
        import fcntl
        import socket

        self.path = Path(f"{path}.lock")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = self._open(path)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another process"
                os.close(fd)
                raise NausError(f"{path}: being written by {holder} (its lock: {self.path}); "
                                "wait for it to end or stop it, then run again") from None
            try:
                if os.fstat(fd).st_ino == os.stat(self.path, follow_symlinks=False).st_ino:
                    break
            except FileNotFoundError:
                pass
            os.close(fd)
        text = os.pread(fd, 201, 0).decode("utf-8", "replace")
        if text and not re.fullmatch(r"process \d+ on [^\n]{0,100}\n", text):
            os.close(fd)
            raise NausError(f"{self.path}: a file that is not a lock of naus is where the lock of {path} goes; "
                            "move it away or write the output elsewhere")
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"process {os.getpid()} on {socket.gethostname()}\n".encode())
        except OSError as err:  # a full disk: the lock this writer made goes with it, and the message names it
            os.unlink(self.path)
            os.close(fd)
            raise NausError(f"{self.path}: could not write the lock of {path} ({err.strerror or err})") from None
        self.fd: int | None = fd

    def _open(self, path) -> int:
        """The lock file, created or opened, never through a link, never a file that has other names."""
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o666)
        except OSError as err:
            if err.errno != errno.ELOOP:
                raise
            raise NausError(f"{self.path}: a symbolic link is where the lock of {path} goes; remove the link "
                            "(naus never writes through it) or write the output elsewhere") from None
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
            os.close(fd)
            raise NausError(f"{self.path}: {'a hard-linked file' if stat.S_ISREG(info.st_mode) else 'not a file'} "
                            f"is where the lock of {path} goes; move it away or write the output elsewhere")
        return fd

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


def remove_temporaries(directory: str | os.PathLike, names: Iterable[str]) -> int:
    """Remove the temporary files `atomic_open` left in `directory` for these names when their writer was killed
    (`kill -9`, a lost node: nothing ran its clean-up); only the holder of the directory's `OutputLock` may call
    it. Returns how many it removed."""
    removed = 0
    for name in names:
        for path in Path(directory).glob(f".{glob.escape(name)}.*.tmp"):
            if path.is_file() and not path.is_symlink():
                path.unlink()
                removed += 1
    return removed


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
    """Split UTF-8 bytes (a file's or standard input's, called `name`) into stripped lines, each `naus.text.clean`
    (a byte order mark, a format character, is gone with them)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise NausError(f"{name}: line {line}: not valid UTF-8 (byte 0x{raw[err.start]:02x})") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [clean(line).strip() for line in lines]


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
        return clean(raw.decode("utf-8")).strip()
    except UnicodeDecodeError as err:
        raise NausError(f"{path}: line {number}: not valid UTF-8 (byte 0x{raw[err.start]:02x})") from None


def check_regular_output(path: str | os.PathLike, why: str) -> Path:
    """An output that must be a file of its own (`why`: a file beside it, or a rename into place): refused when
    a link, a device, a FIFO or a directory is at its path, so none is replaced."""
    path = Path(path)
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise NausError(f"{path}: not a regular file; {why}, so give a file's path")
    return path


def check_file(path: str | os.PathLike, what: str = "file", hint: str = "") -> Path:
    """A readable input is an existing file: say which of the two it is not (`what` it should hold,
    and a `hint` on where it comes from)."""
    path = Path(path)
    if path.is_dir():
        raise NausError(f"{path}: is a directory, expected a file")
    if path.is_fifo():  # a pipe (`--hyp <(...)`, /dev/stdin) is read as it comes; a device is refused (/dev/zero)
        return path
    if not path.is_file():
        if path.exists():
            raise NausError(f"{path}: not a regular file or a pipe")
        raise NausError(f"{path}: {what} not found" + (f" ({hint})" if hint else ""))
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


FILE_RECORD = {"path": str, "sha256": str}  # naus.provenance.file_record


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
    """Whether two paths name one file (the same path resolved, or a hard or symbolic link to it)."""
    if Path(a).resolve() == Path(b).resolve():
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
