"""`python -m scripts.lease import-run`: a GPU run's archive is checked whole before anything changes, and a crafted or
mismatched one is refused in one line with build/ untouched and nothing outside the project touched."""

import io
import json
import os
import tarfile
from pathlib import Path

import pytest

from naus import NausError
from naus.pipeline import layout
from scripts.lease.archive import import_run
from naus.plumbing.files import sha256sum
from tests.helpers import write

PROFILE = "p"
BUILD = f"build/{PROFILE}"
DECODING = f"{BUILD}/{layout.decoded('test', 'L4', 'length-control', 4)}"


def record(root: Path, relative: str) -> dict:
    """A file as the GPU run records it: its path there and its sha256."""
    return {"path": relative, "sha256": sha256sum(root / relative)}


def inputs(root: Path, build: str = BUILD) -> None:
    """What this machine and the GPU machine share: the test set and the search output."""
    write(root / build / layout.DECODE_SOURCES["test"], "police arrest five protesters in paris\nstocks close lower\n")
    write(root / build / layout.DECODE_SOURCES["duc"], "japan and us agree on trade deal\nschools close\n")
    for role, path in layout.train_inputs(4).items():
        write(root / build / path, f"{role} line one\n{role} line two\n")


def gpu_run(tmp_path: Path, profile: str = PROFILE, split: str = "test", student: str = "L4") -> Path:
    """The files `scripts/lease/gpu-node.sh run` brings back, made as `naus train` and `naus decode` record them."""
    there = tmp_path / f"gpu-{profile}-{split}-{student}"
    build = f"build/{profile}"
    inputs(there, build)
    for model in ("L4", "L4-other"):
        write(there / build / "train" / model / "best.pt", f"weights of {model}")
        write(there / build / "train" / model / "history.json", json.dumps({
            "history": [{"step": 3, "train_loss": 2.0, "dev_loss": 1.5}], "skipped_pairs": 0,
            "inputs": {role: record(there, f"{build}/{path}") for role, path in layout.train_inputs(4).items()},
            "best": record(there, f"{build}/train/{model}/best.pt")}))
    decoding = f"{build}/{layout.decoded('test', 'L4', 'length-control', 4)}"
    write(there / f"{decoding}.txt", "police arrest protesters\nstocks close\n")
    made = {"input": record(there, f"{build}/{layout.DECODE_SOURCES[split]}"),
            "checkpoint": record(there, f"{build}/train/{student}/best.pt")}
    write(there / f"{decoding}.provenance.json",
          json.dumps({**made, "summaries": record(there, f"{decoding}.txt"), "lines": 2}))
    write(there / f"{decoding}.timing.json", json.dumps({"seconds_per_sample": 0.001, **made}))
    write(there / f"{build}/timing/train/L4.json", json.dumps({"steps": 3, "seconds": 1.0}))
    write(there / f"logs/{profile}/decode/test-L4-length-control-4.log", "decoded\n")
    members = [f"{build}/train/L4/history.json", f"{build}/timing/train/L4.json", f"{decoding}.txt",
               f"{decoding}.provenance.json", f"{decoding}.timing.json", f"logs/{profile}/decode/test-L4-length-control-4.log"]
    return pack(tmp_path / f"{there.name}.tar.gz", [(name, (there / name).read_bytes()) for name in members])


def pack(path: Path, members: list) -> Path:
    """An archive of (name, bytes) files or ready TarInfo members (links, devices)."""
    with tarfile.open(path, "w:gz") as tar:
        for member in members:
            if isinstance(member, tarfile.TarInfo):
                tar.addfile(member)
            else:
                info = tarfile.TarInfo(member[0])
                info.size = len(member[1])
                tar.addfile(info, io.BytesIO(member[1]))
    return path


def link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


@pytest.fixture
def project(tmp_path):
    """This machine: its inputs, a student trained here and a decoding of it; and a folder outside the project."""
    root = tmp_path / "project"
    inputs(root)
    write(root / BUILD / "train/L4/best.pt", "weights trained here")
    write(root / f"{DECODING}.txt", "made here\nmade here\n")
    write(root / "naus/__init__.py", "# the package\n")
    outside = tmp_path / "outside"
    write(outside / "secret.txt", "not yours\n")
    return root, outside


def snapshot(*folders: Path) -> dict:
    return {path: path.read_bytes() for folder in folders for path in sorted(folder.rglob("*")) if path.is_file()}


def refused(root: Path, outside: Path, archives: list, message: str) -> None:
    """One line naming what is wrong, and not a byte changed here or outside (the staging folder gone)."""
    before = snapshot(root, outside)
    with pytest.raises(NausError) as err:
        import_run(archives, PROFILE, root)
    assert message in str(err.value) and "\n" not in str(err.value), str(err.value)
    assert snapshot(root, outside) == before
    assert not list((root / "build").glob(".import-*"))


def test_a_legitimate_archive_brings_its_files_and_only_adds(project, tmp_path):
    root, outside = project
    counts = import_run([gpu_run(tmp_path)], PROFILE, root)
    assert counts == {"histories": 1, "decodings": 1, "timings": 1, "logs": 1}
    assert (root / f"{DECODING}.txt").read_text() == "police arrest protesters\nstocks close\n"
    assert (root / BUILD / "train/L4/history.json").is_file()
    assert (root / BUILD / "train/L4/best.pt").read_text() == "weights trained here"  # not brought: kept
    assert (root / f"logs/{PROFILE}/decode/test-L4-length-control-4.log").read_text() == "decoded\n"
    assert not list((root / "build").glob(".import-*"))


def test_importing_one_history_twice_keeps_every_checkpoint(project, tmp_path):
    root, outside = project
    write(root / BUILD / "train/L4-s1/best.pt", "another student trained here")
    archive = gpu_run(tmp_path)
    import_run([archive], PROFILE, root)
    import_run([archive], PROFILE, root)
    assert (root / BUILD / "train/L4/best.pt").read_text() == "weights trained here"
    assert (root / BUILD / "train/L4-s1/best.pt").read_text() == "another student trained here"


def test_an_import_stopped_while_its_files_move_is_finished_by_the_next(project, tmp_path, monkeypatch):
    """A stop between two renames leaves the journal and the rest staged; the next import moves the rest in first."""
    import scripts.lease.archive

    root, outside = project
    moved, real = [], os.replace

    def stop_after_one(source, target):
        if moved:
            raise KeyboardInterrupt
        moved.append(target)
        real(source, target)

    monkeypatch.setattr(scripts.lease.archive.os, "replace", stop_after_one)
    with pytest.raises(KeyboardInterrupt):
        import_run([gpu_run(tmp_path)], PROFILE, root)
    journal = root / "build" / f".import-{PROFILE}.journal"
    staged = root / "build" / journal.read_text().strip()
    assert len([p for p in staged.rglob("*") if p.is_file()]) == 6  # the journal written, no file moved yet
    monkeypatch.setattr(scripts.lease.archive.os, "replace", real)
    import_run([gpu_run(tmp_path, student="L4")], PROFILE, root)  # the stopped one's six files first, then its own
    assert not staged.exists() and not journal.exists()
    assert (root / f"{DECODING}.txt").read_text() == "police arrest protesters\nstocks close\n"
    assert (root / f"logs/{PROFILE}/decode/test-L4-length-control-4.log").read_text() == "decoded\n"
    assert not list((root / "build").glob(".import-*")) and (root / BUILD / "train/L4/best.pt").is_file()


def test_a_link_where_an_old_import_kept_files_is_never_followed(project, tmp_path):
    root, outside = project
    (root / BUILD / ".replaced").symlink_to(outside)
    import_run([gpu_run(tmp_path)], PROFILE, root)
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"] and (root / BUILD / "train/L4/best.pt").is_file()


@pytest.mark.parametrize("member, message", [
    (("naus/__init__.py", b"print('injected')\n"), "not a history, timing, decoding or log"),
    (link(f"{DECODING}.txt", "/etc/passwd"), "a symbolic link"),
    (link(f"{DECODING}.txt", "naus/__init__.py", tarfile.LNKTYPE), "a hard link"),
    (link(f"{BUILD}/decode/test/L4/dev.txt", "", tarfile.CHRTYPE), "not a regular file"),
    (("/tmp/escaped.log", b"x"), "an absolute or climbing path"),
    ((f"logs/{PROFILE}/../../../outside/x.log", b"x"), "an absolute or climbing path"),
    ((f"{BUILD}/search/pool/L4.txt", b"a teacher from elsewhere\n"), "not a history, timing, decoding or log"),
])
def test_a_crafted_member_is_refused_naming_it(project, tmp_path, member, message):
    root, outside = project
    legitimate = gpu_run(tmp_path)
    with tarfile.open(legitimate) as tar:
        members = [(m.name, tar.extractfile(m).read()) for m in tar]
    archive = pack(tmp_path / "crafted.tar.gz", members + [member])
    name = member.name if isinstance(member, tarfile.TarInfo) else member[0]
    refused(root, outside, [archive], message)
    refused(root, outside, [archive], repr(name))


def test_a_directory_link_then_a_file_under_it_is_refused_at_the_link(project, tmp_path):
    root, outside = project
    first = pack(tmp_path / "first.tar.gz", [link(f"logs/{PROFILE}/decode", str(outside))])
    second = pack(tmp_path / "second.tar.gz", [(f"logs/{PROFILE}/decode/x.log", b"written outside?\n")])
    refused(root, outside, [first, second], f"{first}: member 'logs/{PROFILE}/decode': a symbolic link")


def test_a_truncated_or_missing_archive_changes_nothing(project, tmp_path):
    root, outside = project
    whole = gpu_run(tmp_path).read_bytes()
    truncated = write(tmp_path / "truncated.tar.gz", whole[: len(whole) // 2])
    refused(root, outside, [gpu_run(tmp_path), truncated], "not a whole gzip-compressed tar archive")
    refused(root, outside, [tmp_path / "gpu-run.tar.gx"], "archive of a GPU run not found")


def test_another_profiles_split_or_student_is_refused(project, tmp_path):
    root, outside = project
    refused(root, outside, [gpu_run(tmp_path, profile="other")], "member 'build/other/train/L4/history.json'")
    refused(root, outside, [gpu_run(tmp_path, split="duc")], "made from another input than this machine's")
    refused(root, outside, [gpu_run(tmp_path, student="L4-other")], "not by student L4")


def test_a_student_trained_on_other_search_output_is_refused(project, tmp_path):
    root, outside = project
    archive = gpu_run(tmp_path)
    write(root / BUILD / layout.train_inputs(4)["train_target"], "another teacher's output\n")
    refused(root, outside, [archive], "made from another train_target than this machine's")


def test_a_decoding_without_its_students_history_or_its_provenance_is_refused(project, tmp_path):
    root, outside = project
    with tarfile.open(gpu_run(tmp_path)) as tar:
        members = [(m.name, tar.extractfile(m).read()) for m in tar]
    no_history = pack(tmp_path / "a.tar.gz", [m for m in members if not m[0].endswith("history.json")])
    refused(root, outside, [no_history], "no student's history.json")
    bare = pack(tmp_path / "b.tar.gz", [m for m in members if not m[0].endswith(".provenance.json")])
    refused(root, outside, [bare], "missing from the archives")
    swapped = pack(tmp_path / "c.tar.gz", [(n, b"other summaries\nx\n" if n.endswith(".txt") else b) for n, b in members])
    refused(root, outside, [swapped], "not the summaries its provenance records")


@pytest.mark.parametrize("profile", ["..", ".", "a/../..", "/abs", ".hidden", "", "a b"])
def test_an_unsafe_profile_name_is_refused(profile, tmp_path):
    with pytest.raises(NausError, match="one path component"):
        import_run([tmp_path / "x.tar.gz"], profile, tmp_path)
    assert not (tmp_path / "build").exists()


def test_the_command_line_refuses_in_one_line(tmp_path):
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-m", "scripts.lease", "import-run", "--profile", "..", "gpu-run.tar.gz"],
                            capture_output=True, text=True, cwd=tmp_path, env={"PYTHONPATH": str(Path(__file__).parents[2])})
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "profile '..'" in result.stderr and not (tmp_path / "build").exists()


def test_an_archive_of_logs_only_changes_nothing_and_another_profiles_build_stays(project, tmp_path):
    root, outside = project
    write(root / "build/sweep-old/train/L4/history.json", "{}")  # another profile's (a sweep of an older script's)
    logs = pack(tmp_path / "logs.tar.gz", [(f"logs/{PROFILE}/decode/x.log", b"a log\n")])
    refused(root, outside, [logs], "no student's history.json, so nothing to import")
    import_run([gpu_run(tmp_path)], PROFILE, root)
    assert (root / "build/sweep-old/train/L4/history.json").read_text() == "{}"


def test_two_imports_at_once_one_refused_and_the_checkpoint_kept(project, tmp_path):
    from naus.plumbing.outputs import OutputLock

    root, outside = project
    archive = gpu_run(tmp_path)
    with OutputLock(root / "build" / f".lock-import-{PROFILE}"):  # as a first import holds it
        refused(root, outside, [archive], "being written by process")
    import_run([archive], PROFILE, root)
    assert (root / BUILD / "train/L4/best.pt").read_text() == "weights trained here"


def test_member_count_and_total_size_are_capped_before_anything_is_written(project, tmp_path, monkeypatch):
    import scripts.lease.archive

    root, outside = project
    archive = gpu_run(tmp_path)
    monkeypatch.setattr(scripts.lease.archive, "MAX_MEMBERS", 5)  # the archive holds 6
    refused(root, outside, [archive], "more than 5 members")
    monkeypatch.setattr(scripts.lease.archive, "MAX_MEMBERS", 100)
    monkeypatch.setattr(scripts.lease.archive, "MAX_TOTAL_BYTES", 100)
    refused(root, outside, [archive], "or 100 bytes in all")


@pytest.mark.parametrize("member, content, message", [
    ("history.json", {"history": "abc"}, "history is \"abc\", expected a list"),
    ("history.json", "[" * 100_000 + "]" * 100_000, "JSON nested too deeply"),
    ("history.json", {"history": [{"step": 3}]}, "history[0] has no 'train_loss'"),
    ("provenance.json", {"lines": "2"}, "lines is \"2\", expected an int"),
    ("timing/train/L4.json", {"seconds": "1"}, "seconds is \"1\", expected a finite number"),
])
def test_a_json_member_of_the_wrong_shape_or_depth_is_refused(project, tmp_path, member, content, message):
    root, outside = project
    with tarfile.open(gpu_run(tmp_path)) as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar}
    name = next(n for n in members if n.endswith(member))
    raw = content.encode() if isinstance(content, str) else json.dumps({**json.loads(members[name]), **content}).encode()
    refused(root, outside, [pack(tmp_path / "bad.tar.gz", list({**members, name: raw}.items()))], message)


@pytest.mark.parametrize("dated", [15_000_000_000, 1_000_000_000])  # the year 2445, and 2001
def test_every_member_is_dated_at_its_import(project, tmp_path, dated):
    """Newer than anything made from what it replaces, so ROUGE and the tables are made again from it (one dated in
    the past would never be re-scored; one in the future would look newest forever)."""
    import time

    root, _ = project
    with tarfile.open(gpu_run(tmp_path)) as tar:
        members = [(m, tar.extractfile(m).read()) for m in tar]
    archive = tmp_path / "dated.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for info, content in members:
            info.mtime = dated
            tar.addfile(info, io.BytesIO(content))
    before = time.time()
    import_run([archive], PROFILE, root)
    times = {(root / info.name).stat().st_mtime for info, _ in members if not info.isdir()}
    assert len(times) == 1 and before - 1 <= times.pop() <= time.time()
