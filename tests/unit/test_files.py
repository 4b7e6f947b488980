"""Reading files (`naus.plumbing.files`): pipes, devices, byte order marks, line ends, control characters, JSON nested or
sized past ours, standard streams closed: each read as text or refused in one line naming the file."""

import io
import json
import os
import threading
from pathlib import Path

import pytest

from naus import NausError
from naus.plumbing.files import iter_lines, iter_parallel, parse_json, read_json, read_lines
from tests.helpers import ROOT, SENTENCE, naus_main, write


def test_json_nested_deeper_than_python_can_read_is_one_line(tmp_path):
    from naus.plumbing.files import read_json

    path = write(tmp_path / "deep.json", "[" * 100_000 + "]" * 100_000)
    with pytest.raises(NausError, match="deep.json: JSON nested too deeply"):
        read_json(path)


# The smaller cases.
def test_a_byte_order_mark_is_not_part_of_the_first_word(tmp_path):
    from naus.plumbing.files import iter_parallel

    path = write(tmp_path / "bom.txt", "\ufeffpolice arrest five\nstocks\n".encode())
    assert read_lines(path) == ["police arrest five", "stocks"]
    assert next(iter_parallel(path)) == ("police arrest five",)


def test_a_pipe_is_read_a_device_refused_and_neither_hashed(tmp_path, capsys):
    """`naus evaluate --hyp <(...)` reads the pipe; `/dev/zero` is refused at once, and nothing hashes a pipe
    (it would block: `naus peer` hashes the release it checks)."""
    from naus.plumbing.files import read_lines, sha256sum

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_text("a b\n"))
    writer.start()
    assert read_lines(fifo) == ["a b"]
    writer.join()
    with pytest.raises(NausError, match="not a regular file"):
        sha256sum(fifo)
    with pytest.raises(NausError, match="/dev/zero: not a regular file or a pipe"):
        read_lines("/dev/zero")


def test_closed_standard_streams_and_a_lone_surrogate_end_in_one_line(good, tmp_path):
    """`naus summarize` with stdin closed, `naus decode` with stdout closed: one line each, no traceback; a JSON
    string holding a lone surrogate (it could never be written out again) is refused where it is read."""
    import subprocess
    import sys

    from naus.plumbing.files import read_json

    closed_in = subprocess.run(f"{sys.executable} -m naus summarize --checkpoint {good['checkpoint']} <&-", shell=True,
                               capture_output=True, text=True, cwd=ROOT)
    assert closed_in.returncode == 2 and closed_in.stderr.strip().splitlines()[-1].startswith("naus: error: standard input")
    source = write(tmp_path / "in.txt", "a\n")
    closed_out = subprocess.run(f"{sys.executable} -m naus lead --input {source} --length 1 --out - >&-", shell=True,
                                capture_output=False, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    assert closed_out.returncode == 2 and "standard output is closed" in closed_out.stderr
    assert "Traceback" not in closed_in.stderr + closed_out.stderr
    with pytest.raises(NausError, match="lone surrogate"):
        read_json(write(tmp_path / "s.json", '{"device": "\\ud800"}'))


def test_a_file_of_raw_text_is_read_without_its_control_and_format_characters(tmp_path):
    """Every reader of text files goes through `naus.plumbing.files.iter_lines`: a control is a space, a format character
    is gone."""
    path = write(tmp_path / "in.txt", "police\x00arrest\u202e five\u200b\n\ufeffstocks\x1b close\n".encode())
    assert read_lines(path) == ["police arrest five", "stocks  close"]


@pytest.mark.parametrize("depth", [40, 900, 100_000])
def test_json_nested_past_ours_is_one_line_before_any_parser_or_checker_recurses(tmp_path, depth):
    """900 levels parsed (under Python's limit) and then overflowed the shape checker's recursion."""
    path = write(tmp_path / "metrics.json", "[" * depth + "]" * depth)
    with pytest.raises(NausError, match=r"metrics.json: JSON nested too deeply \(\d+ levels"):
        read_json(path, shape={"rouge1": float})
    assert parse_json(json.dumps({"a": "[" * 50}).encode(), "x") == {"a": "[" * 50}  # brackets in a string


def test_json_larger_than_ours_is_refused_before_it_is_read(tmp_path, monkeypatch):
    from naus.plumbing import files

    monkeypatch.setattr(files, "MAX_JSON_BYTES", 100)
    path = write(tmp_path / "provenance.json", json.dumps({"note": "x" * 200}))
    with pytest.raises(NausError, match="provenance.json: 212 bytes of JSON, more than the 100"):
        read_json(path)


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
