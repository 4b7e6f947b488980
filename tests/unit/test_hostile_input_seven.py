"""Hostile and careless input, round seven: control and format characters in raw text, JSON nested or sized past
ours, checksums in upper case, a reader that closes the pipe, references with no word to score, odd types given
to the Python API."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys

import pytest

from naus import NausError
from naus.files import parse_json, read_json, read_lines, same_digest
from tests.helpers import ROOT, write
from tests.unit.test_bad_input import good, run_cli  # noqa: F401 (a fixture)
from tests.unit.test_search import lm3, lm3_file  # noqa: F401 (fixtures)

HOSTILE = {"NUL": "\x00", "bell": "\x07", "escape": "\x1b[2J", "DEL": "\x7f", "C1 CSI": "\x9b", "carriage return": "\r",
           "right-to-left override": "\u202e", "left-to-right isolate": "\u2066", "zero-width space": "\u200b",
           "zero-width joiner": "\u200d", "byte order mark": "\ufeff", "soft hyphen": "\u00ad", "tag": "\U000e0041"}


def _shown(text: str) -> bool:
    """Whether every character of `text` is shown as itself: no control or format character."""
    import unicodedata

    return not any(unicodedata.category(ch) in ("Cc", "Cf") for ch in text)


@pytest.mark.parametrize("name", list(HOSTILE))
def test_control_and_format_characters_of_raw_text_never_reach_a_summary(name):
    """`'Police \\u202earrested five protesters'` was written as it came, reversing what a terminal shows."""
    from naus import Summarizer

    bad = HOSTILE[name]
    lines = [f"Police {bad}arrested five protesters{bad} in Paris on Monday", f"{bad}Stocks closed{bad} lower"]
    for result in Summarizer.from_pretrained().summarize(lines, length=4):
        assert result.summary and _shown(result.summary), (name, result.summary)


def test_a_file_of_raw_text_is_read_without_its_control_and_format_characters(tmp_path):
    """Every reader of text files goes through `naus.files.iter_lines`: a control is a space, a format character
    is gone."""
    path = write(tmp_path / "in.txt", "police\x00arrest\u202e five\u200b\n\ufeffstocks\x1b close\n".encode())
    assert read_lines(path) == ["police arrest five", "stocks  close"]


def test_the_command_line_writes_no_control_character_of_its_input(tmp_path, capsys):
    source = write(tmp_path / "in.txt", "Police\x07 \u202earrested five protesters in Paris\x00 on Monday\n")
    out = tmp_path / "out.txt"
    code, err = run_cli(["summarize", "--input", str(source), "--length", "4", "--out", str(out)], capsys)
    assert code == 0, err
    assert _shown(out.read_text().strip()) and len(out.read_text().split()) == 4


@pytest.mark.parametrize("given, message", [
    (["police \ud800 arrested five"], r"sentences\[0\] holds a lone surrogate U\+D800 at character 8"),
    (["fine", "also \udfff"], r"sentences\[1\] holds a lone surrogate U\+DFFF")])
def test_the_api_names_a_lone_surrogate_and_where_it_is(given, message):
    """A lone surrogate ended in the tokenizer's `TypeError: PreTokenizedEncodeInput must be Union[...]`."""
    from naus import Summarizer

    with pytest.raises(ValueError, match=message) as raised:
        Summarizer.from_pretrained().summarize(given)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize("given, message", [(b"police arrest", "got bytes"), (None, "got NoneType"),
                                            (42, "got int"), ([None], r"got NoneType at sentences\[0\]")])
def test_the_api_names_the_type_it_was_given_and_the_one_it_takes(given, message):
    """`bytes` was refused as "got int", `None` as "'NoneType' object is not iterable"."""
    from naus import Summarizer

    with pytest.raises(TypeError, match=message) as raised:
        Summarizer.from_pretrained().summarize(given)
    assert "strings" in str(raised.value)


@pytest.mark.parametrize("depth", [40, 900, 100_000])
def test_json_nested_past_ours_is_one_line_before_any_parser_or_checker_recurses(tmp_path, depth):
    """900 levels parsed (under Python's limit) and then overflowed the shape checker's recursion."""
    path = write(tmp_path / "metrics.json", "[" * depth + "]" * depth)
    with pytest.raises(NausError, match=r"metrics.json: JSON nested too deeply \(\d+ levels"):
        read_json(path, shape={"rouge1": float})
    assert parse_json(json.dumps({"a": "[" * 50}).encode(), "x") == {"a": "[" * 50}  # brackets in a string


def test_json_larger_than_ours_is_refused_before_it_is_read(tmp_path, monkeypatch):
    from naus import files

    monkeypatch.setattr(files, "MAX_JSON_BYTES", 100)
    path = write(tmp_path / "provenance.json", json.dumps({"note": "x" * 200}))
    with pytest.raises(NausError, match="provenance.json: 212 bytes of JSON, more than the 100"):
        read_json(path)


def test_a_search_record_nested_past_ours_is_one_line(tmp_path):
    from naus.teacher.shards import read_records

    path = write(tmp_path / "records.jsonl", '{"index": 0, "summary": "a"}\n' + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(NausError, match=r"records.jsonl: line 2: JSON nested too deeply"):
        read_records(path)


def test_a_configuration_argument_nested_past_ours_is_one_line(capsys):
    code, err = run_cli(["report", "--config", "[" * 5000 + "]" * 5000, "--metrics", "m", "--build", "b",
                         "--out", "o"], capsys)
    assert code == 2 and "JSON nested too deeply" in err and "Traceback" not in err


def test_a_checksum_in_upper_case_hex_is_the_same_checksum(tmp_path, monkeypatch):
    """Hex is case-insensitive: an upper-case sha256 was reported as a mismatch."""
    from naus.evaluation.peers import PEERS, Peer, check_output
    from tests.helpers import config_schema, released

    digest = hashlib.sha256(b"a b\n").hexdigest()
    assert same_digest(digest, digest.upper()) and not same_digest(digest, digest[:-1] + "0")
    output = write(tmp_path / "out.txt", "a b\n")
    released(monkeypatch, **{"out.txt": digest.upper()})
    monkeypatch.setitem(PEERS, "fixture", Peer("Fixture", "a test", {("test", 8): ("out.txt", ("fixture", "out.txt"))},
                                               {}, ""))
    assert check_output("fixture", "test", 8, output, write(tmp_path / "in.txt", "a b c\n")) == ["a b"]
    pattern = config_schema()["properties"]["data"]["properties"]["download"]["properties"]["sha256"]["pattern"]
    assert re.fullmatch(pattern, digest.upper()) and re.fullmatch(pattern, digest)


def test_a_download_already_there_with_an_upper_case_checksum_is_kept(tmp_path):
    from naus.sources import download

    there = write(tmp_path / "giga.tgz", b"archive")
    assert download("https://example.invalid/giga.tgz", there, hashlib.sha256(b"archive").hexdigest().upper()) == there


def test_a_reader_that_closes_the_pipe_ends_the_command_quietly(tmp_path):
    """`naus summarize < big | head -1` ended with an error message from a command that did nothing wrong."""
    # five chunks of standard input, cut to 64 lines (a second of MiniLM where 1,024 took seven): those after the
    # first are written after the reader has gone
    source = write(tmp_path / "in.txt", "Police arrested five protesters in Paris on Monday\n" * (5 * 64))
    naus = "import sys, naus.decoding.summarizer as s; s.CHUNK = 64; from naus.cli import main; sys.exit(main())"
    with open(source, "rb") as stdin:
        process = subprocess.Popen([sys.executable, "-c", naus, "--quiet", "summarize", "--length", "4"], cwd=ROOT,
                                   stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        first = process.stdout.readline()
        process.stdout.close()
        err = process.stderr.read().decode()
        code = process.wait(timeout=300)
    assert first.decode().count(" ") == 3
    assert code == 141 and err == "", (code, err)  # SIGPIPE's status, as cat's


@pytest.mark.parametrize("reference, message", [
    ("", "line 2: an empty reference"),
    ("-- , ...", r"line 2: a reference with no word to score \('-- , \.\.\.'\)"),
    ("\u202e\u200b", "line 2: an empty reference")])
def test_naus_evaluate_refuses_a_reference_with_nothing_to_score(tmp_path, capsys, reference, message):
    """A line of punctuation alone was scored as zero without a word."""
    refs = write(tmp_path / "refs.txt", f"police arrest five\n{reference}\nstocks close\n")
    hyp = write(tmp_path / "hyp.txt", "police arrest\nsomething\nstocks\n")
    code, err = run_cli(["evaluate", "--hyp", str(hyp), "--ref", str(refs), "--out", str(tmp_path / "m.json")],
                        capsys)
    assert code == 2 and re.search(f"refs.txt: {message}", err), err
    assert not (tmp_path / "m.json").exists()


def _gigaword_files(tmp_path, duc_ref: str = "a summary", test_title: str = "police arrest"):
    articles = "".join(f"article number {i} about the police and the news\n" for i in range(40))
    titles = "".join(f"title {i} police\n" for i in range(40))
    pool = (write(tmp_path / "pool_a.txt", articles), write(tmp_path / "pool_t.txt", titles))
    test = (write(tmp_path / "test_a.txt", "police arrest five protesters\nstocks close lower\n"),
            write(tmp_path / "test_t.txt", f"{test_title}\nstocks close\n"))
    duc = tmp_path / "duc"
    write(duc / "input.txt", "an input sentence\nanother one\n")
    for i in range(4):
        write(duc / f"task1_ref{i}.txt", f"{duc_ref if i == 2 else 'a summary'}\nanother summary\n")
    return pool, test, duc


def test_an_empty_duc2004_reference_is_refused_when_the_corpus_is_built(tmp_path):
    """It was accepted by `naus data gigaword --duc-dir` and refused only when DUC was scored, hours later."""
    from naus.data import build_gigaword

    pool, test, duc = _gigaword_files(tmp_path, duc_ref="")
    with pytest.raises(NausError, match=r"task1_ref2.txt: line 1: an empty reference"):
        build_gigaword(pool, test, dev_size=5, seed=0, duc_dir=duc)
    pool, test, duc = _gigaword_files(tmp_path, duc_ref="...")
    with pytest.raises(NausError, match=r"task1_ref2.txt: line 1: a reference with no word to score"):
        build_gigaword(pool, test, dev_size=5, seed=0, duc_dir=duc)
    pool, test, duc = _gigaword_files(tmp_path)
    assert build_gigaword(pool, test, dev_size=5, seed=0, duc_dir=duc, lm_titles="all").duc["ref2"][0] == "a summary"


@pytest.mark.parametrize("title, message", [("", "an empty reference"), ("'' ``", "a reference with no word to score")])
def test_an_empty_test_title_is_refused_when_the_corpus_is_built(tmp_path, title, message):
    """An empty title of the test set was taken into the corpus and scored as zeros."""
    from naus.data import build_gigaword

    pool, test, duc = _gigaword_files(tmp_path, test_title=title)
    with pytest.raises(NausError, match=f"test_t.txt: line 1: {message}"):
        build_gigaword(pool, test, dev_size=5, seed=0)


def test_the_teachers_api_reads_raw_text_as_every_reader_does(lm3):
    """A source given to the search in Python loses its control and format characters as a file's line does."""
    from naus.settings import SearchConfig
    from naus.teacher.search import Teacher

    teacher = Teacher(lm3, SearchConfig(length=2, rerank_k=0))
    plain, = teacher.summarize([(0, "the police arrested five protesters")])
    hostile, = teacher.summarize([(0, "the\u202e police arrested\x00 five\u200b protesters")])
    assert hostile.summary == plain.summary and _shown(hostile.summary)
