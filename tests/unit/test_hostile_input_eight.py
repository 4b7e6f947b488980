"""Hostile input, round eight: a test per kind, each driving a command the report named and one it did not.

Kinds: a set of outputs replaced as a whole; no output naming an input or another output (the files written into an
output folder included); a changed setting that reruns (tests/unit/test_train.py, tests/workflow/test_pipeline.py);
work and memory in proportion to the input; every line-end convention; one line for every stop and error.
"""

from __future__ import annotations

import errno
import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from naus import NausError
from naus.files import iter_lines, iter_parallel, read_lines
from tests.helpers import ROOT, as_interrupted, config_schema, headline_corpus, naus_main, write

SENTENCE = "Police arrested five protesters in Paris on Monday after talks"


# -- a set of outputs replaced as a whole ------------------------------------------------------------------------

def test_a_set_stopped_at_any_point_of_its_replacement_is_the_old_set_or_has_members_missing(tmp_path, monkeypatch):
    import naus.outputs
    from naus.outputs import replacing

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

        monkeypatch.setattr(naus.outputs.os, "replace", stop_at)
        try:
            with replacing(folder, ("a.txt", "sub", "c.json")) as stage:
                write(stage / "a.txt", "new a\n"), write(stage / "sub/b.txt", "new b\n"), write(stage / "c.json", "new\n")
        except KeyboardInterrupt:
            pass
        monkeypatch.setattr(naus.outputs.os, "replace", real_replace)
        texts = {p.relative_to(folder).as_posix(): p.read_text() for p in folder.rglob("*") if p.is_file()}
        assert texts.pop("mine.txt") == "a user's file\n" and not list(folder.glob(".staging-*"))
        ages = {text.split()[0] for text in texts.values()}
        assert ages in ({"old"}, {"new"}, set()) and (ages != {"old"} or len(texts) == 3), (stops, texts)
        if len(calls) <= stops:  # the replacement ran to its end
            assert texts == {"a.txt": "new a\n", "sub/b.txt": "new b\n", "c.json": "new\n"}
            break
        stops += 1


def test_a_search_started_again_with_other_parameters_and_stopped_leaves_the_finished_shard_whole(tmp_path, capsys):
    from naus.teacher.lm import train_lm
    from naus.teacher.shards import ResumableOutput, provenance_path

    lm = tmp_path / "lm.bin"
    train_lm(write(tmp_path / "h.txt", headline_corpus()), lm, order=3)
    source = write(tmp_path / "source.txt", "police arrest five protesters in paris on monday after talks\n" * 4)
    out = tmp_path / "out.jsonl"
    search = ["search", "--input", source, "--lm", lm, "--rerank-k", "0", "--out", out]
    assert naus_main([*search, "--length", "8"], capsys).returncode == 0
    finished = out.read_bytes(), provenance_path(out).read_bytes()
    with ResumableOutput(out, 4, (0, 1), {"other": "parameters"}, restart=True) as started_again:
        started_again.append([{"index": 0, "summary": "police arrest"}])  # stopped here
    assert (out.read_bytes(), provenance_path(out).read_bytes()) == finished
    merged = naus_main(["merge", out, "--out", tmp_path / "m.jsonl", "--text", tmp_path / "m.txt"], capsys)
    assert merged.returncode == 0 and all(len(line.split()) == 8 for line in read_lines(tmp_path / "m.txt"))
    as_interrupted(out, out.read_text().splitlines(keepends=True)[0])
    assert naus_main([*search, "--length", "6", "--restart"], capsys).returncode == 0  # the partial set aside
    assert (tmp_path / "out.jsonl.stale").is_file()
    assert all(len(json.loads(line)["summary"].split()) == 6 for line in read_lines(out))


def _corpus_inputs(folder: Path) -> list:
    pool = [f"{SENTENCE.lower()} number {k}" for k in range(20)]
    files = {"pool-article": pool, "pool-title": [f"police arrest {k}" for k in range(20)],
             "test-article": pool[:3], "test-title": ["police arrest"] * 3, "extra-headlines": ["stocks fall"] * 5}
    args = []
    for option, lines in files.items():
        args += [f"--{option}", write(folder / f"{option}.txt", "".join(line + "\n" for line in lines))]
    return ["data", "gigaword", *args, "--dev-size", "2"]


def test_a_corpus_written_again_and_stopped_by_a_full_disk_leaves_the_old_corpus(tmp_path, capsys, monkeypatch):
    import naus.data

    command = [*_corpus_inputs(tmp_path / "in"), "--out", tmp_path / "data"]
    assert naus_main(command, capsys).returncode == 0
    before = {p: p.read_bytes() for p in (tmp_path / "data").rglob("*") if p.is_file()}
    real = naus.data.write_lines

    def full_disk(path, lines):
        if Path(path).name == "lm.txt":
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real(path, lines)

    monkeypatch.setattr(naus.data, "write_lines", full_disk)
    result = naus_main([*command, "--seed", "1"], capsys)
    assert result.returncode == 2 and "No space left on device" in result.stderr
    assert {p: p.read_bytes() for p in (tmp_path / "data").rglob("*") if p.is_file()} == before


def _train(folder: Path, capsys) -> subprocess.CompletedProcess:
    source = write(folder / "s.txt", "police arrest five protesters\nstocks fall in tokyo\n" * 4)
    target = write(folder / "t.txt", "police arrest\nstocks fall\n" * 4)
    return naus_main(["train", "--train-source", source, "--train-target", target, "--d-model", "16", "--n-heads", "2",
                      "--d-ff", "32", "--max-steps", "2", "--out", folder / "run"], capsys)


def test_a_training_run_stopped_before_its_end_leaves_a_student_every_reader_refuses(tmp_path, capsys, monkeypatch):
    import naus.student.train as training

    assert _train(tmp_path, capsys).returncode == 0
    run = tmp_path / "run"

    def stopped(path, obj):
        raise KeyboardInterrupt("SIGTERM")

    monkeypatch.setattr(training, "write_json", stopped)  # a new run into the finished folder, stopped at its end
    assert _train(tmp_path, capsys).returncode == 143
    monkeypatch.undo()
    assert (run / "best.pt").is_file() and not (run / "history.json").exists()
    for command in (["summarize", "--checkpoint", run, "--input", write(tmp_path / "in.txt", SENTENCE + "\n")],
                    ["ensemble", "--members", run / "best.pt", "--out", tmp_path / "e.pt"]):
        result = naus_main(command, capsys)
        assert result.returncode == 2 and "its training run has not finished" in result.stderr, result.stderr


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
        "timing-over-what-it-decodes": ["time", "--decoding", "test-L10-length-control-10", student,
                                        tmp_path / "in.txt", tmp_path / "in.txt"],
    }
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    result = naus_main(commands[case], capsys)
    assert result.returncode == 2 and "an output may not overwrite an input or another output" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


# -- work and memory in proportion to the input -------------------------------------------------------------------

def test_blank_lines_cost_no_encoder_pass(tmp_path, capsys, monkeypatch):
    import naus.student.frozen as frozen

    encoded = []
    real = frozen.encoder

    def counting(*args):
        inner = real(*args)

        class Counting:
            def encode(self, sentences, progress=False):
                encoded.extend(sentences)
                return inner.encode(sentences, progress)
        return Counting()

    monkeypatch.setattr(frozen, "encoder", counting)
    text = "\n" * 300 + " \t \n" * 200 + SENTENCE + "\n"
    for command in ("summarize", "decode"):
        encoded.clear()
        result = naus_main([command, "--length", "4"], capsys, stdin=text)
        assert result.returncode == 0 and result.stdout.count("\n") == 501, result.stderr
        assert len(encoded) == 1, command


def test_a_file_and_an_iterable_are_summarised_a_chunk_at_a_time(tmp_path, capsys, monkeypatch):
    import naus.decoding.summarizer as summarizer
    from naus.decoding.summarizer import Summarizer

    monkeypatch.setattr(summarizer, "CHUNK", 4)
    sizes, real = [], Summarizer._summarize_chunk

    def recording(self, sentences, *args):
        sizes.append(len(sentences))
        return real(self, sentences, *args)

    monkeypatch.setattr(Summarizer, "_summarize_chunk", recording)
    source = write(tmp_path / "in.txt", (SENTENCE + "\n") * 10)
    assert naus_main(["summarize", "--input", source, "--length", "4", "--out", tmp_path / "o.txt"],
                     capsys).returncode == 0
    assert sizes == [4, 4, 2] and len(read_lines(tmp_path / "o.txt")) == 10
    sizes.clear()
    pulled = []

    def sentences():
        for k in range(9):
            pulled.append(k)
            assert len(pulled) - sum(sizes) <= 4, "read ahead of what was summarised"
            yield SENTENCE

    results = Summarizer.from_pretrained().summarize(sentences(), length=4)
    assert len(results) == 9 and sizes == [4, 4, 1]


def test_a_stream_is_read_a_block_at_a_time():
    class Endless:
        """A stream that never ends: its first lines must come out before anything more is asked of it."""
        reads = 0

        def read1(self, size):
            self.reads += 1
            return b"one line\r\n" * 10

    stream = Endless()
    lines = iter_lines(stream)
    assert [next(lines) for _ in range(25)] == ["one line"] * 25 and stream.reads == 3


# -- every line-end convention ----------------------------------------------------------------------------------

@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"])
def test_every_line_end_convention_is_read_as_lines(tmp_path, capsys, end):
    text = end.join(["police arrest five", "stocks fall in tokyo", "rain expected"]) + end
    path = write(tmp_path / "in.txt", text.encode())
    lines = ["police arrest five", "stocks fall in tokyo", "rain expected"]
    assert read_lines(path) == list(iter_lines(io.BytesIO(text.encode()))) == lines
    assert list(iter_parallel(path, path))[2] == ("rain expected", "rain expected")
    head = naus_main(["head", "--input", path, "--lines", "2", "--out", tmp_path / "h.txt"], capsys)
    assert head.returncode == 0 and read_lines(tmp_path / "h.txt") == ["police arrest five", "stocks fall in tokyo"]
    summaries = naus_main(["summarize", "--input", path, "--length", "2"], capsys)
    assert summaries.returncode == 0 and len(summaries.stdout.splitlines()) == 3, summaries.stdout


# -- one line for every stop and error ----------------------------------------------------------------------------

@pytest.mark.parametrize("command", [["decode", "--length", "4"], ["lead", "--length", "2", "--out", "-"]])
def test_a_closed_standard_output_is_one_line(tmp_path, command):
    source = write(tmp_path / "in.txt", SENTENCE + "\n")
    result = subprocess.run(f"{sys.executable} -m naus -q {' '.join(command)} --input {source} >&-", shell=True,
                            cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == "naus: error: standard output is closed: give a file (--out FILE)"


@pytest.mark.parametrize("command", [["head", "--lines", "1"], ["summarize", "--length", "4"]])
def test_a_loop_of_links_is_named_with_its_cause_as_an_input_and_as_an_output(tmp_path, capsys, command):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    source = write(tmp_path / "in.txt", SENTENCE + "\n")
    for extra in (["--input", tmp_path / "a", "--out", tmp_path / "o.txt"], ["--input", source, "--out", tmp_path / "a"]):
        result = naus_main([*command, *extra], capsys)
        assert result.returncode == 2 and result.stderr.strip().splitlines() == [
            f"naus: error: {tmp_path / 'a'}: Too many levels of symbolic links"], result.stderr
    assert (tmp_path / "a").is_symlink() and (tmp_path / "b").is_symlink()


def test_a_folder_that_refuses_the_temporary_file_is_named_not_the_temporary(tmp_path, capsys, monkeypatch):
    import tempfile

    def refused(dir, prefix, suffix):
        raise PermissionError(errno.EACCES, "Permission denied", os.path.join(dir, f"{prefix}x1y2z3{suffix}"))

    monkeypatch.setattr(tempfile, "mkstemp", refused)
    source = write(tmp_path / "in.txt", "a b c\n")
    result = naus_main(["head", "--input", source, "--lines", "1", "--out", tmp_path / "e.txt"], capsys)
    assert result.stderr.strip() == f"naus: error: {tmp_path / 'e.txt'}: Permission denied"


def test_a_stop_is_one_line_in_the_words_of_the_command(tmp_path):
    """SIGTERM said that search records and a checkpoint were kept, of every command."""
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    stopped = subprocess.Popen([sys.executable, "-m", "naus", "head", "--input", fifo, "--lines", "1", "--out",
                                tmp_path / "o.txt"], cwd=ROOT, stderr=subprocess.PIPE, text=True)
    with open(fifo, "w") as writer:  # the command waits for lines that do not come
        writer.write("a b\n")
        writer.flush()
        time.sleep(3)
        stopped.send_signal(signal.SIGTERM)
        _, err = stopped.communicate(timeout=60)
    assert stopped.returncode == 143 and err.strip().splitlines() == [
        "naus: error: stopped by SIGTERM; no output was written (each is written whole or not at all): run the "
        "command again"], err
    assert not (tmp_path / "o.txt").exists()


def test_a_stop_raised_where_python_cannot_raise_it_is_said_once(capsys):
    from types import SimpleNamespace

    from naus.cli import _unraisable

    _unraisable(SimpleNamespace(exc_value=KeyboardInterrupt("SIGTERM"), exc_type=KeyboardInterrupt, err_msg=None,
                                exc_traceback=None, object=None))
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("key, value", [(("train", "max_steps"), "500"), (("decode", "beam_sweep"), "[1, 2]")])
def test_a_configuration_value_that_arrives_as_text_says_so_and_how_to_pass_it(key, value):
    from naus.schema import validate

    config = yaml.safe_load((ROOT / "config/demo.yaml").read_text())
    config.setdefault(key[0], {})[key[1]] = value
    with pytest.raises(NausError, match=rf"config key {'.'.join(key)}: '{re.escape(value)}' arrived as text, not "
                                        r"\w+ .*--configfile"):
        validate(config, config_schema(), set_default=False)


def test_a_pipe_is_read_once_where_a_command_reads_its_input_twice(tmp_path, capsys):
    def piped(name: str, text: str) -> Path:
        fifo = tmp_path / name
        os.mkfifo(fifo)
        threading.Thread(target=lambda: fifo.write_text(text), daemon=True).start()
        return fifo

    sources = "police arrest five protesters\nstocks fall in tokyo\n" * 4
    train = ["train", "--train-source", piped("s", sources), "--train-target",
             write(tmp_path / "t.txt", "police arrest\nstocks fall\n" * 4), "--d-model", "16", "--n-heads", "2",
             "--d-ff", "32", "--max-steps", "2", "--out", tmp_path / "run"]
    assert naus_main(train, capsys).returncode == 0, capsys
    assert (tmp_path / "run/history.json").is_file()
    scored = naus_main(["evaluate", "--hyp", piped("h", "police arrest\n"), "--ref", piped("r", "police arrest\n"),
                        "--json"], capsys)
    assert scored.returncode == 0 and json.loads(scored.stdout)["n"] == 1, scored.stderr
