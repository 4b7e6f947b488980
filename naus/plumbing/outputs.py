"""Writing the pipeline's outputs safely.

Every output is written to a temporary file beside its target and renamed, so an interrupted step never leaves a
half-written artifact that a later step would trust; one writer at a time holds a resumable output's lock.
"""

from __future__ import annotations

import contextlib
import errno
import glob
import json
import os
import re
import shutil
import stat
import sys
import tempfile
from pathlib import Path
from typing import IO, Iterable, Iterator

from naus import NausError


def output_mode() -> int:
    """The permissions every output gets: a plain file's under this process's umask (mkstemp's are 0600)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


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
        stdout = standard_output()
        yield stdout.buffer if "b" in mode else stdout
        (stdout.buffer if "b" in mode else stdout).flush()
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
        try:
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        except OSError as err:  # it names a random name that never existed (a read-only folder): say the output's
            raise _naming(err, path, err.filename) from err
    except OSError as err:
        raise _naming(err, path) from err
    os.fchmod(fd, output_mode())
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


def standard_output() -> IO[str]:
    """Standard output, where a command writes its results (`--out -`): refused in one line when it is closed
    (`>&-`), where Python has no stream at all."""
    if sys.stdout is None:
        raise NausError("standard output is closed: give a file (--out FILE)")
    return sys.stdout


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


def check_regular_output(path: str | os.PathLike, why: str) -> Path:
    """An output that must be a file of its own (`why`: a file beside it, or a rename into place): refused when
    a link, a device, a FIFO or a directory is at its path, so none is replaced."""
    path = Path(path)
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise NausError(f"{path}: not a regular file; {why}, so give a file's path")
    return path


def refuse_overwriting(named: list[tuple[str, str]], outputs: set[str]) -> None:
    """Before anything is written: no path given as an output (its label, e.g. an option, in `outputs`) may name the
    file of another path given (an input or another output); one line names both labels."""
    from naus.plumbing.files import same_file

    for k, (label, path) in enumerate(named):
        for other, other_path in named[k + 1 :]:
            if {label, other} & outputs and same_file(path, other_path):
                first, second = (label, other) if label in outputs else (other, label)
                raise NausError(f"{path}: given as {first} and as {second}; an output may not overwrite an input or "
                                "another output")


@contextlib.contextmanager
def replacing(folder: str | os.PathLike, owned: Iterable[str]) -> Iterator[Path]:
    """A set of outputs replaced as a whole: written into a staging folder inside `folder`, then every old member
    (`owned`: the names at the top of `folder` the set consists of) removed before each new one is renamed in, so a
    stop leaves the old set, or members missing (a reader finds no file), never old and new members side by side.
    Other files in `folder` are left alone; a stop before the end leaves the old set and no staging folder."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        stage = Path(tempfile.mkdtemp(dir=folder, prefix=".staging-"))
    except OSError as err:
        raise _naming(err, folder, err.filename) from err
    try:
        yield stage
        made = sorted(os.listdir(stage))
        for name in dict.fromkeys([*owned, *made]):
            old = folder / name
            if old.is_dir() and not old.is_symlink():
                shutil.rmtree(old)
            elif old.exists() or old.is_symlink():
                old.unlink()
        for name in made:
            os.replace(stage / name, folder / name)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
