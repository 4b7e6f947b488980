"""A GPU run's results brought back: every archive checked whole before anything here changes.

`scripts/lease/gpu-node.sh run` trains and decodes on a borrowed machine and packs the training
histories, timings, decodings and logs; `python -m scripts.lease import-run` takes them in here. An archive is a
stranger's file: each member must be a regular file at a path the named profile's GPU run makes
(no links, devices, absolute or `..` names, nothing another profile's), each decoding must have
been made from this machine's input by a student whose history came back with it, and each
history from this machine's search output; every JSON member has the shape naus writes. Members are
staged in a new directory under build/ (their number and total size capped first); only when every
archive passed are the files they bring moved in, one by one, each over the file of its name: an import only
adds (a checkpoint trained here stays, as does everything the archives do not bring). A journal names the
staging directory while its files move, so an import stopped there is finished by the next one, before
anything else. One import of a profile runs at a time.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import tarfile
import tempfile
import time
import zlib
from pathlib import Path

from naus import NausError
from naus.pipeline import layout
from naus.plumbing.files import check_file, check_shape, parse_json, same_digest, sha256sum
from naus.plumbing.outputs import OutputLock, write_text
from naus.plumbing.provenance import DECODE_TIMING, DECODING, HISTORY, TRAIN_TIMING

log = logging.getLogger(__name__)

MAX_MEMBER_BYTES = 1 << 28  # 256 MiB: a history, a timing or a decoding of the paper's test set is far smaller
MAX_TOTAL_BYTES = 1 << 30  # all archives together: the paper profile's GPU run brings back about 100 MB
MAX_MEMBERS = 20_000  # the paper profile's run: ~3,000 files
# The directories a GPU run brings files of, under build/{profile}/.
BROUGHT = (layout.STUDENTS, layout.DECODINGS, layout.TRAIN_TIMINGS)


def run_paths(profile: str) -> dict[str, list[str]]:
    """Where a GPU run of `profile` works, what it reads (made here first: the students' search output and
    sources, the splits they decode, the words of the pool) and what it brings back (histories, training
    times, decodings, logs), as shell globs from the project root: what `scripts/lease/gpu-node.sh` packs."""
    build = layout.profile_dir("build", profile)
    searched = [layout.search_source(split) for split in ("pool", "dev", "duc")]
    searched += [f"{layout.search(split, '*')}.txt" for split in ("pool", "dev", "duc")]
    decoded = [layout.split_file(split, side) for split in ("test", "dev") for side in ("article", "title")]
    states = [layout.frozen_states("*")]  # where a student learns on frozen states (made here, as the searches)
    return {"build": [build], "inputs": [f"{build}/{path}" for path in searched + decoded + states],
            "words": [f"{build}/{layout.search_source('pool')}"],  # the vocabulary MiniLM is trimmed to
            "outputs": [f"{build}/{layout.student_dir('*')}/history.json", layout.profile_dir("logs", profile),
                        *(f"{build}/{part}" for part in BROUGHT if part != layout.STUDENTS)]}
_NAME = r"[A-Za-z0-9_][A-Za-z0-9_.=+-]*"  # a log's path component: no `.`, `..` or hidden names


def history_pattern(profile: str) -> str:
    """A student's history in a GPU run of `profile` (its name the group `model`)."""
    path = f"{layout.profile_dir('build', profile)}/{layout.student_dir('{model}')}/history.json"
    return layout.pattern(path, model=layout.MODEL_PATTERN)


def allowed_patterns(profile: str) -> list[re.Pattern]:
    """The paths a GPU run of `profile` brings back (relative to the project root)."""
    build, model = re.escape(layout.profile_dir("build", profile)), layout.MODEL_PATTERN
    return [re.compile(pattern) for pattern in (
        history_pattern(profile),
        rf"{build}/{layout.pattern(layout.train_timing('{model}'), model=model)}",
        *(rf"{build}/{decoding}\.(?:txt|timing\.json|provenance\.json)" for decoding in layout.DECODED_PATTERNS),
        rf"{re.escape(layout.profile_dir('logs', profile))}(?:/{_NAME})+\.(?:log|tsv)",
    )]


def stage(archives: list[str | Path], profile: str, staging: Path) -> list[str]:
    """Every member of every archive checked, the regular files written under `staging` (a later
    archive's file replaces a preceding one's); returns the members' names. Nothing outside `staging` is
    written: no member is a link, and no name is absolute or climbs."""
    patterns = allowed_patterns(profile)
    names: dict[str, None] = {}
    members, total, now = 0, 0, time.time()
    for archive in archives:
        archive = check_file(archive, "archive of a GPU run", "scripts/lease/gpu-node.sh run writes OUT/gpu-run.tar.gz")
        try:
            with tarfile.open(archive, "r:gz") as tar:
                for member in tar:  # every header checked, and the totals, before a byte is written
                    _check_member(archive, member, patterns)
                    members, total = members + 1, total + member.size
                    if members > MAX_MEMBERS or total > MAX_TOTAL_BYTES:
                        raise NausError(f"{archive}: more than {MAX_MEMBERS:,} members or {MAX_TOTAL_BYTES:,} bytes in "
                                        "all, far more than a GPU run brings back; nothing was changed")
                for member in tar.getmembers():
                    if not member.isdir():
                        _write(tar, member, staging / member.name, now)
                        names[member.name] = None
        except (tarfile.TarError, EOFError, zlib.error, OSError) as err:
            raise NausError(f"{archive}: not a whole gzip-compressed tar archive ({type(err).__name__}: {err}); "
                            "nothing was changed") from None
    if not any(name.endswith("/history.json") for name in names):
        raise NausError(f"{', '.join(map(str, archives))}: no student's history.json, so nothing to import "
                        "(a GPU run brings its students back); nothing was changed")
    return list(names)


def _write(tar: tarfile.TarFile, member: tarfile.TarInfo, target: Path, mtime: float) -> None:
    """A member's content into the staging directory, dated `mtime`: the import's time for every member, so that
    what is made from them (ROUGE, the tables) is older and made again, and none looks newest forever. Read whole
    first (a member is at most MAX_MEMBER_BYTES), so a damaged archive and a full disk differ."""
    content = tar.extractfile(member).read()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    except OSError as err:
        raise NausError(f"{target}: could not stage ({err.strerror}); nothing was changed") from None
    os.utime(target, (mtime, mtime))


def _check_member(archive: Path, member: tarfile.TarInfo, patterns: list[re.Pattern]) -> None:
    name = member.name
    where = f"{archive}: member {name!r}"
    if name.startswith("/") or ".." in name.split("/"):
        raise NausError(f"{where}: an absolute or climbing path; nothing was changed")
    if member.isdir():
        return
    if not member.isreg():
        kind = "a symbolic link" if member.issym() else "a hard link" if member.islnk() else "not a regular file"
        raise NausError(f"{where}: {kind}; a GPU run's archive holds regular files only; nothing was changed")
    if not any(pattern.fullmatch(name) for pattern in patterns):
        raise NausError(f"{where}: not a history, timing, decoding or log of this profile's GPU run; "
                        "nothing was changed")
    if member.size > MAX_MEMBER_BYTES:
        raise NausError(f"{where}: {member.size} bytes, more than any output of a GPU run ({MAX_MEMBER_BYTES}); "
                        "nothing was changed")


def verify(staging: Path, names: list[str], profile: str, root: Path) -> None:
    """Each history made from this machine's search output; each decoding and timing from this machine's
    input, by the student whose history came back (its best.pt's sha256). Only the paths this machine's
    pipeline would read are opened, whatever paths the records name."""
    build = layout.profile_dir("build", profile)
    best, hashes = {}, {}  # each history's best.pt record; each file of this machine's sha256, hashed once
    for name in names:
        if name.endswith("/history.json"):
            record = _read(staging, name, ("inputs", "best"), HISTORY)
            student = re.fullmatch(history_pattern(profile), name)["model"]
            length = layout.parse_model(student).length
            on_states = set(layout.train_inputs(length, True))
            frozen = isinstance(record["inputs"], dict) and set(record["inputs"]) == on_states
            expected = layout.train_inputs(length, frozen)  # a student on frozen states: those are this machine's
            if not isinstance(record["inputs"], dict) or set(record["inputs"]) != set(expected):
                raise NausError(f"{name}: its inputs are not recorded as {sorted(expected)}; nothing was changed")
            for role, path in expected.items():
                _same_content(name, role, record["inputs"][role], root / build / path, hashes)
            _path(name, "best", record["best"])
            best[name] = record["best"]
        elif "/timing/train/" in name:
            _read(staging, name, (), TRAIN_TIMING)
    for name in names:
        if not name.startswith(f"{build}/decode/") or name.endswith(".provenance.json"):
            continue
        stem = name.removesuffix(".txt").removesuffix(".timing.json")
        made = _read(staging, f"{stem}.provenance.json", ("input", "checkpoint", "summaries", "lines"), DECODING) \
            if name.endswith(".txt") else _read(staging, name, ("input", "checkpoint"), DECODE_TIMING)
        decoded = layout.parse_decoded(stem.removeprefix(f"{build}/"))
        split, model = decoded.split, decoded.model
        _same_content(name, "input", made["input"], root / build / layout.DECODE_SOURCES[split], hashes)
        if Path(_path(name, "checkpoint", made["checkpoint"])).parent.name != model:
            raise NausError(f"{name}: decoded by {made['checkpoint']['path']}, not by student {model}; "
                            "nothing was changed")
        history = f"{build}/{layout.student_dir(model)}/history.json"
        if history not in best:
            raise NausError(f"{name}: its student's history ({history}) is not in the archives; nothing was changed")
        if not same_digest(made["checkpoint"]["sha256"], best[history]["sha256"]):
            raise NausError(f"{name}: decoded by another {model} than the one whose history came back (best.pt "
                            f"sha256 {made['checkpoint']['sha256'][:12]}, not {best[history]['sha256'][:12]}); "
                            "nothing was changed")
        if name.endswith(".txt") and _path(name, "summaries", made["summaries"]) \
                and not same_digest(sha256sum(staging / name), made["summaries"]["sha256"]):
            raise NausError(f"{name}: not the summaries its provenance records (sha256 differs); nothing was changed")


def _read(staging: Path, name: str, required: tuple[str, ...], shape: object) -> dict:
    path = staging / name
    if not path.is_file():
        raise NausError(f"{name}: missing from the archives (a run of an older scripts/lease/gpu-node.sh?); "
                        "nothing was changed")
    try:
        record = parse_json(path.read_bytes(), name)
        missing = [key for key in required if not isinstance(record, dict) or key not in record]
        if missing:
            raise NausError(f"{name}: no {missing[0]!r} (made by an older naus?)")
        check_shape(record, shape, name)
    except NausError as err:
        raise NausError(f"{err}; nothing was changed") from None
    return record


def _path(name: str, role: str, record: object) -> str:
    if not isinstance(record, dict) or not all(isinstance(record.get(key), str) for key in ("path", "sha256")):
        raise NausError(f"{name}: its {role} is not recorded as a path and a sha256; nothing was changed")
    return record["path"]


def _same_content(name: str, role: str, record: dict, here: Path, hashes: dict[Path, str]) -> None:
    _path(name, role, record)
    if not here.is_file():
        raise NausError(f"{name}: made from {record['path']}, but {here} is not on this machine; nothing was changed")
    if here not in hashes:
        hashes[here] = sha256sum(here)
    if not same_digest(hashes[here], record["sha256"]):
        raise NausError(f"{name}: made from another {role} than this machine's {here} (sha256 differs: another "
                        "split, profile or teacher?); nothing was changed")


def import_run(archives: list[str | Path], profile: str, root: str | Path = ".") -> dict:
    """Check every archive, then move the files they bring in (students' histories, decodings, training times,
    logs), each over the file of its name; returns counts of what came in. A refusal changes nothing; an import
    stopped while its files moved is finished first."""
    root = Path(root)
    layout.check_profile(profile)
    (root / "build").mkdir(exist_ok=True)
    journal = root / "build" / f".import-{profile}.journal"
    with OutputLock(root / "build" / f".lock-import-{profile}"):  # one import of a profile at a time
        if journal.is_file():
            _move_in(journal)
        staging = Path(tempfile.mkdtemp(dir=root / "build", prefix=f".import-{profile}-"))
        try:
            names = stage(archives, profile, staging)
            verify(staging, names, profile, root)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        write_text(journal, staging.name + "\n")  # from here the files move in: the next import finishes a stop
        _move_in(journal)
    counts = {kind: sum(name.endswith(suffix) for name in names) for kind, suffix in (
        ("histories", "/history.json"), ("decodings", ".txt"), ("timings", ".timing.json"), ("logs", ".log"))}
    log.info("imported %s from %d archive(s)", ", ".join(f"{n} {kind}" for kind, n in counts.items()), len(archives))
    return counts


def _move_in(journal: Path) -> None:
    """Every file of the staging directory the journal names moved to its place under the project (renames
    within it), then the journal and the staging directory gone: what is already in place is not staged any
    more, so a second call after a stop moves the rest."""
    root, name = journal.parent.parent, journal.read_text().strip()
    if not re.fullmatch(r"\.import-[A-Za-z0-9_.-]+", name) or (journal.parent / name).is_symlink():
        raise NausError(f"{journal}: not a journal of python -m scripts.lease import-run; remove it after checking {journal.parent}")
    staging = journal.parent / name
    for source in sorted(staging.rglob("*")) if staging.is_dir() else []:
        if source.is_file() and not source.is_symlink():
            target = root / source.relative_to(staging)
            target.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileNotFoundError):
                if target.is_symlink():
                    target.unlink()  # a link here would otherwise be followed
            os.replace(source, target)
    shutil.rmtree(staging, ignore_errors=True)
    journal.unlink()
