"""Outputs (`naus.plumbing.outputs`): written to a temporary file and renamed into place, or through a FIFO, a device or
a link as they are; locks; sets of files replaced as a whole; no output naming an input or another output."""

import errno
import os
import threading
from pathlib import Path

import pytest

from naus import NausError
from naus.cli import main
from naus.plumbing.outputs import OutputLock
from tests.helpers import SENTENCE, decode_argv, naus_main, run_cli, write


# Outputs: the atomic rename only for regular files.
def test_decode_into_a_fifo_delivers_its_lines_to_the_reader_and_leaves_the_fifo(good, tmp_path, capsys):
    fifo = tmp_path / "summaries"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.extend(fifo.read_text().splitlines()), daemon=True)
    reader.start()
    code, err = run_cli(decode_argv(good, fifo), capsys)
    reader.join(timeout=60)
    assert code == 0, err
    assert len(received) == 2 and fifo.is_fifo()


def test_decode_to_stdout_prints_and_a_link_is_followed_not_replaced(good, tmp_path, env):
    """`--out /dev/stdout` as a link of our own to it: code that replaced links would replace ours, not the machine's."""
    import subprocess

    (tmp_path / "stdout").symlink_to("/dev/stdout")
    result = subprocess.run(["naus", *decode_argv(good, tmp_path / "stdout")], capture_output=True, text=True, env=env)
    printed = result.stdout.splitlines()
    assert result.returncode == 0 and len(printed) == 2 and (tmp_path / "stdout").is_symlink(), result.stderr
    target = write(tmp_path / "target.txt", "old\n")
    (tmp_path / "link.txt").symlink_to(target)
    assert main(decode_argv(good, tmp_path / "link.txt")) == 0
    assert (tmp_path / "link.txt").is_symlink() and target.read_text().splitlines() == printed


def test_a_full_disk_names_the_file_and_a_failed_provenance_keeps_the_previous_summaries(good, tmp_path, capsys):
    """/dev/full (reached through a link of our own, as above) fails every write with ENOSPC."""
    full = tmp_path / "full"
    full.symlink_to("/dev/full")
    code, err = run_cli(decode_argv(good, full), capsys)
    assert code == 2 and err.strip().splitlines()[-1] == f"naus: error: {full}: No space left on device"
    out = write(tmp_path / "d.txt", "previous\nsummaries\n")
    code, err = run_cli(decode_argv(good, out, "--provenance", full), capsys)
    assert code == 2 and f"{full}: No space left on device" in err
    assert out.read_text() == "previous\nsummaries\n" and sorted(p.name for p in tmp_path.iterdir()) == ["d.txt", "full"]


def test_outputs_renamed_into_place_refuse_a_fifo_or_a_link_before_anything_is_written(tmp_path):
    """A search shard is renamed into place from OUT.partial, a language model from a temporary folder beside it:
    a FIFO or a link there would be replaced."""
    from naus.teacher.lm import train_lm
    from naus.teacher.shards import ResumableOutput

    fifo, link = tmp_path / "fifo", tmp_path / "link"
    os.mkfifo(fifo)
    link.symlink_to(tmp_path / "target")
    corpus = write(tmp_path / "corpus" / "headlines.txt", "police arrest five protesters\n")
    for out in (fifo, link):
        with pytest.raises(NausError, match="not a regular file; a resumable output is renamed into place"):
            ResumableOutput(out, 2, (0, 1), {"p": 1})
        with pytest.raises(NausError, match="not a regular file; a language model is renamed into place"):
            train_lm(corpus, out, order=2)
    assert fifo.is_fifo() and link.is_symlink() and sorted(p.name for p in tmp_path.iterdir()) == ["corpus", "fifo", "link"]


def test_a_link_where_the_lock_goes_is_refused_and_what_it_points_to_kept(good, capsys, tmp_path):
    """`ln -s victim.txt out.txt.lock` replaced the victim's text with the writer's line and removed the link."""
    victim = write(tmp_path / "victim.txt", "precious\n")
    out = tmp_path / "out.txt"
    os.symlink(victim, f"{out}.lock")
    code, err = run_cli(decode_argv(good, out), capsys)
    assert code == 2 and "symbolic link" in err and err.count("\n") == 1
    assert victim.read_text() == "precious\n" and os.path.islink(f"{out}.lock") and not out.exists()


def test_an_input_where_the_lock_goes_is_refused_and_kept(good, capsys, tmp_path):
    """`--input x.txt.lock --out x.txt` removed the input when the lock was released."""
    source = write(tmp_path / "x.txt.lock", good["text"].read_text())
    code, err = run_cli(["decode", "--checkpoint", good["checkpoint"], "--input", source, "--length", "2",
                         "--out", tmp_path / "x.txt"], capsys)
    assert code == 2 and "not a lock of naus" in err
    assert source.read_text() == good["text"].read_text() and not (tmp_path / "x.txt").exists()


def test_a_lock_with_other_names_or_of_another_kind_is_refused_and_a_killed_writers_is_reused(tmp_path):
    other = write(tmp_path / "other.txt", "")
    os.link(other, tmp_path / "a.lock")
    with pytest.raises(NausError, match="a hard-linked file"):
        OutputLock(tmp_path / "a")
    os.mkfifo(tmp_path / "b.lock")
    with pytest.raises(NausError, match="not a file"):
        OutputLock(tmp_path / "b")
    assert (tmp_path / "a.lock").exists() and (tmp_path / "b.lock").exists()
    write(tmp_path / "c.lock", "process 1 on elsewhere\n")  # a writer killed with -9 left it: no process holds it
    with OutputLock(tmp_path / "c") as lock:
        assert lock.path.read_text() == f"process {os.getpid()} on {os.uname().nodename}\n"
    assert not (tmp_path / "c.lock").exists()


def test_a_full_disk_names_the_lock_it_could_not_write_and_leaves_none(tmp_path, monkeypatch):
    """A full disk gave `naus: error: [Errno 28] No space left on device`, naming no file, its .lock left behind."""
    import errno

    def full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(NausError, match=rf"{tmp_path / 'out.txt.lock'}: could not write the lock of .*No space left"):
        OutputLock(tmp_path / "out.txt")
    monkeypatch.undo()
    assert not (tmp_path / "out.txt.lock").exists()


# -- a set of outputs replaced as a whole ------------------------------------------------------------------------
def test_a_set_stopped_at_any_point_of_its_replacement_is_the_old_set_or_has_members_missing(tmp_path, monkeypatch):
    import naus.plumbing.outputs
    from naus.plumbing.outputs import replacing

    def old_set(folder: Path) -> None:
        write(folder / "a.txt", "old a\n"), write(folder / "sub/b.txt", "old b\n"), write(folder / "c.json", "old\n")
        write(folder / "mine.txt", "a user's file\n")

    real_replace, stops = os.replace, 0
    while True:
        folder, calls = tmp_path / f"run{stops}", []
        old_set(folder)

        def stop_at(src, dst, at=stops):
            calls.append(dst)
            if len(calls) > at:
                raise KeyboardInterrupt("SIGTERM")
            real_replace(src, dst)

        monkeypatch.setattr(naus.plumbing.outputs.os, "replace", stop_at)
        try:
            with replacing(folder, ("a.txt", "sub", "c.json")) as stage:
                write(stage / "a.txt", "new a\n"), write(stage / "sub/b.txt", "new b\n"), write(stage / "c.json", "new\n")
        except KeyboardInterrupt:
            pass
        monkeypatch.setattr(naus.plumbing.outputs.os, "replace", real_replace)
        texts = {p.relative_to(folder).as_posix(): p.read_text() for p in folder.rglob("*") if p.is_file()}
        assert texts.pop("mine.txt") == "a user's file\n" and not list(folder.glob(".staging-*"))
        ages = {text.split()[0] for text in texts.values()}
        assert ages in ({"old"}, {"new"}, set()) and (ages != {"old"} or len(texts) == 3), (stops, texts)
        if len(calls) <= stops:  # the replacement ran to its end
            assert texts == {"a.txt": "new a\n", "sub/b.txt": "new b\n", "c.json": "new\n"}
            break
        stops += 1


def _corpus_inputs(folder: Path) -> list:
    pool = [f"{SENTENCE.lower()} number {k}" for k in range(20)]
    files = {"pool-article": pool, "pool-title": [f"police arrest {k}" for k in range(20)],
             "test-article": pool[:3], "test-title": ["police arrest"] * 3, "extra-headlines": ["stocks fall"] * 5}
    args = []
    for option, lines in files.items():
        args += [f"--{option}", write(folder / f"{option}.txt", "".join(line + "\n" for line in lines))]
    return ["data", "gigaword", *args, "--dev-size", "2"]


def test_a_corpus_written_again_and_stopped_by_a_full_disk_leaves_the_old_corpus(tmp_path, capsys, monkeypatch):
    import naus.data.corpus

    command = [*_corpus_inputs(tmp_path / "in"), "--out", tmp_path / "data"]
    assert naus_main(command, capsys).returncode == 0
    before = {p: p.read_bytes() for p in (tmp_path / "data").rglob("*") if p.is_file()}
    real = naus.data.corpus.write_lines

    def full_disk(path, lines):
        if Path(path).name == "lm.txt":
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real(path, lines)

    monkeypatch.setattr(naus.data.corpus, "write_lines", full_disk)
    result = naus_main([*command, "--seed", "1"], capsys)
    assert result.returncode == 2 and "No space left on device" in result.stderr
    assert {p: p.read_bytes() for p in (tmp_path / "data").rglob("*") if p.is_file()} == before


# -- no output naming an input or another output -----------------------------------------------------------------
@pytest.mark.parametrize("case", ["ensemble-member", "corpus-holding-its-pool", "timing-into-the-student",
                                  "fetch-bringing-from-where-it-writes", "unpack-over-the-archive",
                                  "timing-over-what-it-decodes"])
def test_an_output_that_names_an_input_or_another_output_is_refused_before_anything_is_written(tmp_path, capsys,
                                                                                               case):
    data = tmp_path / "data"
    student = write(tmp_path / "run/best.pt", "weights")
    commands = {
        "ensemble-member": ["ensemble", "--members", student, tmp_path / "other.pt", "--out", student],
        "corpus-holding-its-pool": [*_corpus_inputs(data / "pool"), "--out", data],
        "timing-into-the-student": ["train", "--train-source", student, "--train-target", student,
                                    "--out", tmp_path / "run", "--timing", student],
        "fetch-bringing-from-where-it-writes": ["data", "fetch", "gigaword-sample", "--to", data, "--duc",
                                                data / "duc2004"],
        "unpack-over-the-archive": ["download", "--url", "file:///nowhere", "--sha256", "0" * 64,
                                    "--out", data / "giga.tgz", "--unpack", data],
        "timing-over-what-it-decodes": ["time", "--decoding", "decode/test/L10/length-control-10", "length-control",
                                        "10", "6", student, tmp_path / "in.txt", tmp_path / "in.txt"],
    }
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    result = naus_main(commands[case], capsys)
    assert result.returncode == 2 and "an output may not overwrite an input or another output" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_a_folder_that_refuses_the_temporary_file_is_named_not_the_temporary(tmp_path, capsys, monkeypatch):
    import tempfile

    def refused(dir, prefix, suffix):
        raise PermissionError(errno.EACCES, "Permission denied", os.path.join(dir, f"{prefix}x1y2z3{suffix}"))

    monkeypatch.setattr(tempfile, "mkstemp", refused)
    source = write(tmp_path / "in.txt", "a b c\n")
    result = naus_main(["head", "--input", source, "--lines", "1", "--out", tmp_path / "e.txt"], capsys)
    assert result.stderr.strip() == f"naus: error: {tmp_path / 'e.txt'}: Permission denied"
