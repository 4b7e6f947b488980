"""Hostile and careless input, round four: outputs that are not regular files, files we read that lie about
their shape, reports over outputs of the wrong length, text that is markup in the format we publish, and the
small cases (a byte order mark, a float index, a generator, NaN scores, a second Ctrl-C, the largest beam)."""

from __future__ import annotations

import json
import os
import re
import signal
import threading
import zipfile

import numpy as np
import pytest
import torch

from naus import NausError
from naus.student.checkpoint import save_checkpoint
from naus.cli import main
from naus.files import read_lines
from tests.helpers import ROOT, write
from tests.unit.test_bad_input import good, run_cli  # noqa: F401 (a fixture)


def decode(good, out, *extra) -> list[str]:
    return ["decode", "--checkpoint", str(good["checkpoint"]), "--input", str(good["text"]), "--length", "2",
            "--out", str(out), *map(str, extra)]


# Outputs: the atomic rename only for regular files.

def test_decode_into_a_fifo_delivers_its_lines_to_the_reader_and_leaves_the_fifo(good, tmp_path, capsys):
    fifo = tmp_path / "summaries"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.extend(fifo.read_text().splitlines()), daemon=True)
    reader.start()
    code, err = run_cli(decode(good, fifo), capsys)
    reader.join(timeout=60)
    assert code == 0, err
    assert len(received) == 2 and fifo.is_fifo()


def test_decode_to_stdout_prints_and_a_link_is_followed_not_replaced(good, tmp_path, env):
    """`--out /dev/stdout` as a link of our own to it: code that replaced links would replace ours, not the machine's."""
    import subprocess

    (tmp_path / "stdout").symlink_to("/dev/stdout")
    result = subprocess.run(["naus", *decode(good, tmp_path / "stdout")], capture_output=True, text=True, env=env)
    printed = result.stdout.splitlines()
    assert result.returncode == 0 and len(printed) == 2 and (tmp_path / "stdout").is_symlink(), result.stderr
    target = write(tmp_path / "target.txt", "old\n")
    (tmp_path / "link.txt").symlink_to(target)
    assert main(decode(good, tmp_path / "link.txt")) == 0
    assert (tmp_path / "link.txt").is_symlink() and target.read_text().splitlines() == printed


def test_a_full_disk_names_the_file_and_a_failed_provenance_keeps_the_previous_summaries(good, tmp_path, capsys):
    """/dev/full (reached through a link of our own, as above) fails every write with ENOSPC."""
    full = tmp_path / "full"
    full.symlink_to("/dev/full")
    code, err = run_cli(decode(good, full), capsys)
    assert code == 2 and err.strip().splitlines()[-1] == f"naus: error: {full}: No space left on device"
    out = write(tmp_path / "d.txt", "previous\nsummaries\n")
    code, err = run_cli(decode(good, out, "--provenance", full), capsys)
    assert code == 2 and f"{full}: No space left on device" in err
    assert out.read_text() == "previous\nsummaries\n" and sorted(p.name for p in tmp_path.iterdir()) == ["d.txt", "full"]


# Files we read: type and shape checked before use.

def npz_with_header(path, names, shape, descr="<f4"):
    """An .npz whose members declare `shape` and hold 1 kB: a crafted header asking for gigabytes."""
    header = np.lib.format.header_data_from_array_1_0(np.zeros(1, dtype=descr))
    with zipfile.ZipFile(path, "w") as archive:
        for name in names:
            with archive.open(f"{name}.npy", "w") as member:
                np.lib.format.write_array_header_1_0(member, {**header, "shape": shape})
                member.write(bytes(1000))
    return path


@pytest.mark.parametrize("case, message", [
    ("empty", "not a learned estimate (BadZipFile"),
    ("npy", "not a learned estimate (BadZipFile"),
    ("strings", "array 'weight' is <U1 of shape (3,), expected 384 x 384"),
    ("huge", "array 'weight' is float32 of shape (200000, 200000)"),
])
def test_a_learned_estimate_of_the_wrong_kind_or_shape_is_refused_before_it_is_loaded(case, message, tmp_path):
    from naus.teacher.similarity import LearnedEstimate

    path = tmp_path / "estimate.npz"
    if case == "empty":
        write(path, b"")
    elif case == "npy":
        np.save(tmp_path / "a.npy", np.zeros((384, 384)))
        os.replace(tmp_path / "a.npy", path)
    elif case == "strings":
        np.savez(path, weight=np.array(["a", "b", "c"]), bias=np.zeros(384))
    else:
        npz_with_header(path, ("weight", "bias"), (200_000, 200_000))
    with pytest.raises(NausError, match=f"^{path}: .*" + message.replace("(", r"\(").replace(")", r"\)")):
        LearnedEstimate.load(path)


def test_a_static_table_that_is_empty_an_npy_or_declares_gigabytes_is_refused(tmp_path):
    from naus.teacher.similarity import StaticEmbedder

    for path in (write(tmp_path / "empty.npz", b""), npz_with_header(tmp_path / "huge.npz", ("words", "vectors", "idf"),
                                                                      (200_000, 200_000))):
        with pytest.raises(NausError, match=f"^{path}: "):
            StaticEmbedder(path)
    np.savez(tmp_path / "uneven.npz", words=np.array(["a", "b"]), vectors=np.zeros((3, 384), np.float32),
             idf=np.ones(2, np.float32))
    with pytest.raises(NausError, match="2 words, 3 vectors and 2 idf weights"):
        StaticEmbedder(tmp_path / "uneven.npz")


def test_a_checkpoint_whose_vocab_mark_or_shapes_lie_is_refused_before_a_model_is_built(good, tmp_path, capsys):
    payload = torch.load(good["checkpoint"], weights_only=True)
    huge = {**payload["model_config"], "n_layers": 96, "d_model": 8192, "d_ff": 65536, "n_heads": 8}
    cases = {"vocab": ({**payload, "vocab": 7}, "its vocab is int, not a list of words"),
             "mark": ({**payload, "model": {**payload["model"], "arch_mark": torch.tensor(1.5)}},
                      "its weights name no architecture"),
             "huge": ({**payload, "model_config": huge}, "weights do not match the model configuration")}
    for name, (crafted, message) in cases.items():
        save_checkpoint(tmp_path / f"{name}.pt", crafted)
        code, err = run_cli(decode(good, tmp_path / f"{name}.out") [:2] + [tmp_path / f"{name}.pt"]
                            + decode(good, tmp_path / f"{name}.out")[3:], capsys)
        assert code == 2 and message in err.strip().splitlines()[-1], (name, err)
        assert not (tmp_path / f"{name}.out").exists()


# The report and merge: their inputs' shapes.

def test_a_history_without_train_loss_is_named_before_anything_is_drawn(tmp_path):
    from naus.report.pages import training_section

    write(tmp_path / "train/L10/history.json", json.dumps({"history": [{"step": 3, "dev_loss": 1.0}]}))
    with pytest.raises(NausError, match=r"train/L10/history.json: history\[0\] has no 'train_loss'"):
        training_section(tmp_path)
    write(tmp_path / "train/L10/history.json", json.dumps({"history": [{"step": 3, "train_loss": 1.0}],
                                                           "settings": ["model"]}))
    with pytest.raises(NausError, match="history.json: settings is list, expected an object"):
        training_section(tmp_path)


def test_an_output_one_line_short_names_its_file_and_seeds_of_different_lengths_are_refused(tmp_path):
    from naus.report.sentences import SentenceTotals
    from naus.evaluation.significance import seed_mean

    scorer = SentenceTotals([write(tmp_path / "ref.txt", "police arrest five\nstocks close lower\n")])
    short = write(tmp_path / "short.txt", "police arrest\n")
    with pytest.raises(NausError, match=f"^{short}: 1 lines, but its split has 2 references"):
        scorer(short)
    with pytest.raises(NausError, match=r"seeds scored on different numbers of sentences \(2, 1\)"):
        seed_mean([[1.0, 2.0], [1.0]])


def test_a_search_record_without_summary_is_named(tmp_path):
    from naus import layout
    from naus.report.pages import search_section

    records = write(tmp_path / f"{layout.search('test', 10)}.jsonl", '{"index": 0, "score": 1.0}\n')
    with pytest.raises(NausError, match=f"^{records}: line 1: a record needs an integer 'index' and 'summary'"):
        search_section(tmp_path)


@pytest.mark.parametrize("provenance, message", [
    ({}, "has no 'parameters'"),
    ({"parameters": {}, "total": "2", "shard": [0, 1]}, 'total is "2", expected an int'),
    ({"parameters": {}, "total": 2, "shard": [3, 1]}, "shard is [3, 1], expected [i, n] with 0 <= i < n"),
])
def test_merge_refuses_a_shard_provenance_of_the_wrong_shape(provenance, message, tmp_path, capsys):
    part = write(tmp_path / "part0.jsonl", '{"index": 0, "summary": "a"}\n{"index": 1, "summary": "b"}\n')
    write(tmp_path / "part0.jsonl.provenance.json", json.dumps(provenance))
    code, err = run_cli(["merge", part, "--out", tmp_path / "m.jsonl", "--text", tmp_path / "m.txt"], capsys)
    assert code == 2 and message in err.strip().splitlines()[-1], err
    (tmp_path / "part0.jsonl.provenance.json").unlink()
    code, err = run_cli(["merge", part, "--out", tmp_path / "m.jsonl", "--text", tmp_path / "m.txt"], capsys)
    assert code == 2 and "search the shard again (naus search --restart)" in err


def test_json_nested_deeper_than_python_can_read_is_one_line(tmp_path):
    from naus.files import read_json

    path = write(tmp_path / "deep.json", "[" * 100_000 + "]" * 100_000)
    with pytest.raises(NausError, match="deep.json: JSON nested too deeply"):
        read_json(path)


# What we publish: escaped for its format.

def test_tables_are_escaped_for_markdown_latex_and_restructuredtext(tmp_path):
    import pandas as pd

    from naus.report.pages import write_table

    frame = pd.DataFrame({"System": ["a | b", r"50% of #1_x \input{secret}"], "Text": ["*x*", "&"]})
    write_table(frame, tmp_path, "t", "Caption with 95% and rerank_k *stars* `code` |sub|.")
    markdown = (tmp_path / "t.md").read_text().splitlines()
    assert markdown[-2].count(" | ") == 1 and r"a \| b" in markdown[-2]
    tex = (tmp_path / "t.tex").read_text()
    assert r"50\% of \#1\_x \textbackslash{}input\{secret\}" in tex and r"\caption{Caption with 95\% and rerank\_k" in tex
    assert r"\input{" not in tex and " & \\&" in tex
    assert (tmp_path / "t.rst").read_text() == r"\ Caption with 95% and rerank\_k \*stars\* \`code\` \|sub\|." + "\n"


JINJA = '{% set u = (lipsum ~ "")[18] %}{{ lipsum[u~u~"globals"~u~u]["os"].popen("touch X").read() }}'
DIRECTIVES = "\n\n.. include:: /etc/hostname\n\n.. raw:: html\n\n   <script>alert(1)</script>\n"


def _as_snakemake_renders(text: str) -> str:
    """A caption or the landing page as Snakemake's report renders it: a Jinja2 template (its environment), then
    reStructuredText to HTML (docutils' defaults: file insertion and raw enabled)."""
    from docutils.core import publish_parts
    from jinja2 import Environment

    return publish_parts(Environment(trim_blocks=True, lstrip_blocks=True).from_string(text).render(),
                         writer="html")["body"]


@pytest.mark.parametrize("payload", [JINJA, DIRECTIVES, "{{ 7 * 7 }}" + DIRECTIVES, "- not a list {# nor a comment #}"])
def test_report_text_is_never_a_template_a_directive_or_html(tmp_path, payload):
    """A profile's note, a history's settings quoted as STALE, a timing's device: every text the report writes into
    reStructuredText or Markdown comes out as that text (nothing runs, no file is read, no markup)."""
    from naus.markup import markdown_text, rst, rst_paragraph

    for escaped in (rst_paragraph(payload), f"**{rst(payload)}**", "Title\n=====\n\n" + rst_paragraph(payload)):
        html = _as_snakemake_renders(escaped)
        assert "<script>" not in html and "<pre" not in html and "<li>" not in html and not (ROOT / "X").exists()
        if "include" in payload:
            assert ".. include:: /etc/hostname" in html  # text, the file not read
        if "7 * 7" in payload:
            assert "{{ 7 * 7 }}" in html and "49" not in html
    assert "<script>" not in markdown_text(payload) and "\n" not in markdown_text(payload)
    assert markdown_text("# heading?").startswith("\\#")


# The smaller cases.

def test_a_byte_order_mark_is_not_part_of_the_first_word(tmp_path):
    from naus.files import iter_parallel

    path = write(tmp_path / "bom.txt", "\ufeffpolice arrest five\nstocks\n".encode())
    assert read_lines(path) == ["police arrest five", "stocks"]
    assert next(iter_parallel(path)) == ("police arrest five",)


@pytest.mark.parametrize("index", ["[2.7, 0.2, 1.9]", "[1e400, 0, 1]", "[true, false, 2]"])
def test_reorder_takes_integers_only(index, good, tmp_path, capsys):
    text = write(tmp_path / "three.txt", "a\nb\nc\n")
    code, err = run_cli(["reorder", "--input", text, "--index", write(tmp_path / "i.txt", index + "\n"),
                         "--out", tmp_path / "o.txt"], capsys)
    assert code == 2 and "expected one integer per line or a JSON list of integers" in err and "Traceback" not in err


def test_summarize_reads_a_generator(good):
    from naus.decoding.summarizer import Summarizer

    summarizer = Summarizer.from_checkpoint(good["checkpoint"])
    sentences = ["police arrest five protesters in paris", "stocks close lower"]
    assert len(summarizer.summarize((s for s in sentences), length=2)) == 2


def test_paired_p_value_refuses_nan_scores():
    from naus.evaluation.significance import paired_p_value

    with pytest.raises(NausError, match="NaN or infinite"):
        paired_p_value([1.0, float("nan"), 3.0], [1.0, 2.0, 2.0])


def test_after_a_stop_further_stops_are_ignored_while_the_process_exits(good, tmp_path, monkeypatch, capsys):
    """The exit handlers (torch's) run after `main` returns: a second Ctrl-C there would print their traceback."""
    import naus.commands.scoring

    def stopped(args):
        raise KeyboardInterrupt("SIGINT")

    monkeypatch.setattr(naus.commands.scoring, "head", stopped)
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        code, err = run_cli(["head", "--input", good["text"], "--lines", "1", "--out", tmp_path / "y"], capsys)
        assert code == 130 and "stopped by SIGINT" in err
        assert signal.getsignal(signal.SIGINT) == signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


def test_the_largest_beam_on_a_long_sentence_costs_its_extensions_not_their_square(tmp_path, env):
    """Beam 256 (the maximum) over 128 slots of 300 words: 128 × 256² extensions, each a dictionary step (a
    few seconds; a scan of the slot's prefixes per extension made it minutes). Bounded at 120 s."""
    import subprocess
    import sys

    from tests.helpers import ROOT

    script = ("import torch; from naus.decoding.beam import ctc_beam_search; torch.manual_seed(0); "
              "h = ctc_beam_search(torch.randn(128, 300).log_softmax(-1), beam_size=256); print(len(h.path))")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT,
                            timeout=120)
    assert result.returncode == 0 and result.stdout.strip() == "128", result.stderr[-2000:]


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


@pytest.mark.parametrize("argv, message", [
    (["train", "--seed", "-1"], "--seed: must be between 0 and 4294967295, got -1"),
    (["train", "--seed", "4294967296"], "--seed: must be between 0 and 4294967295"),
    (["train", "--seed", "1e20"], "--seed: expected int"),
    (["search", "--rerank-gamma", "inf"], "--rerank-gamma: must be a finite number, got inf"),
])
def test_numbers_out_of_range_are_refused_on_the_command_line(good, capsys, argv, message):
    code, err = run_cli([argv[0], *(["--train-source", good["text"], "--train-target", good["text"], "--out",
                                     str(good["text"]) + ".d"] if argv[0] == "train" else
                                    ["--input", good["text"], "--lm", good["text"], "--length", "3", "--out", "-"]),
                         *argv[1:]], capsys)
    assert code == 2 and message in err and "Traceback" not in err


def test_seeds_and_fractions_a_students_name_cannot_hold_are_refused_by_the_schema():
    from naus import schema
    from tests.helpers import config_schema

    for train, message in (({"seeds": [-1]}, "minimum"), ({"seeds": [2**32]}, "maximum"),
                           ({"fractions": [0.00001]}, "minimum")):
        with pytest.raises(NausError, match=f"config key train.*{message}|less than the minimum|greater than the maximum"):
            schema.validate({"profile": "x", "data": {"source": "demo"}, "train": train}, config_schema(), False)


def test_a_pipe_is_read_a_device_refused_and_neither_hashed(tmp_path, capsys):
    """`naus evaluate --hyp <(...)` reads the pipe; `/dev/zero` is refused at once, and nothing hashes a pipe
    (it would block: `naus peer` hashes the release it checks)."""
    from naus.files import read_lines, sha256sum

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


def test_an_empty_reference_line_is_an_error_naming_it(tmp_path):
    from naus.evaluation.evaluate import evaluate_files

    refs = write(tmp_path / "refs.txt", "police arrest\n\nstocks\n")
    with pytest.raises(NausError, match=r"refs.txt: line 2: an empty reference"):
        evaluate_files(write(tmp_path / "hyp.txt", "a\nb\nc\n"), [refs])


def test_numbers_the_report_cannot_publish_and_a_profile_name_holding_markup_are_refused(tmp_path):
    from naus.report.rows import first_timing, search_timing
    from naus.tables import spec
    from tests.helpers import config_schema
    from naus import schema
    from tests.unit.test_report import profile

    write(tmp_path / "s.timing.json", json.dumps({"seconds_per_sample": 5e-324}))
    with pytest.raises(NausError, match="seconds_per_sample"):
        first_timing(tmp_path, ("s",))
    write(tmp_path / "timing/search/test/L8/part0.json", json.dumps({"sentences": 1e-9, "seconds": 12.4}))
    with pytest.raises(NausError, match="sentences must be a whole number"):
        search_timing(tmp_path, "test", 8)
    with pytest.raises(NausError, match="profile"):
        spec({**profile(), "profile": "<b>x</b>"})
    for decode in ({"chars": [[8, 50], [8, 50]]}, {"transfer": [[8, "10"], [8, "10"]]}):
        with pytest.raises(NausError, match="non-unique|unique"):
            schema.validate({"profile": "x", "data": {"source": "demo"}, "decode": decode}, config_schema(), False)


def test_closed_standard_streams_and_a_lone_surrogate_end_in_one_line(good, tmp_path):
    """`naus summarize` with stdin closed, `naus decode` with stdout closed: one line each, no traceback; a JSON
    string holding a lone surrogate (it could never be written out again) is refused where it is read."""
    import subprocess
    import sys

    from naus.files import read_json

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


def test_a_key_given_twice_in_a_profile_is_an_error_naming_its_line():
    from naus.schema import check_unique_keys

    with pytest.raises(NausError, match=r"p.yaml: line 3: key 'train' given twice"):
        check_unique_keys("profile: x\ntrain: {lr: 0.1}\ntrain: {max_steps: 3}\n", "p.yaml")
    with pytest.raises(NausError, match="line 3: key 'lr' given twice"):
        check_unique_keys("train:\n  lr: 0.1\n  lr: 0.2\n", "p.yaml")
    for profile in ("demo", "gigaword-sample", "paper"):
        check_unique_keys((ROOT / f"config/{profile}.yaml").read_text(), profile)


@pytest.mark.parametrize("entry, named", [({"step": 10, "train_loss": 1e308}, "history[0].train_loss is 1e+308"),
                                          ({"step": -5, "train_loss": 2.0}, "history[0].step is -5"),
                                          ({"step": 5, "train_loss": 2.0, "dev_loss": -1.0}, "history[0].dev_loss")])
def test_a_history_whose_numbers_the_report_would_print_out_of_range_is_refused(tmp_path, entry, named):
    """A 309-digit loss or a negative step count (a history brought back by an archive) is named, not printed."""
    from naus.report.pages import training_section

    write(tmp_path / "train/L8/history.json", json.dumps({"history": [entry], "settings": {}}))
    with pytest.raises(NausError, match=re.escape(named)):
        training_section(tmp_path)


def test_mark_stale_on_fingerprints_naming_no_student_is_one_line(tmp_path):
    from naus.fingerprints import refresh

    write(tmp_path / "fingerprints.json", json.dumps({"settings": {}, "search": {}, "decodings": {}, "stale": ["x"],
                                                      "students": {"not-a-student": {"settings": {"model": {}}}}}))
    with pytest.raises(NausError, match="fingerprints.json: students: 'not-a-student' is not a student's name"):
        refresh(tmp_path, {"profile": "p"})


def test_the_models_markers_written_in_a_tokenised_input_are_not_summary_words(good):
    from naus.decoding.summarizer import Summarizer
    from naus.student.vocab import Vocab

    summarizer = Summarizer.from_checkpoint(good["checkpoint"], "cpu")
    sentences = ["police <pad> arrest <blank> five <pad> protesters <blank> in <pad> paris <blank>"] * 2
    for method in ("length-control", "truncate", "beam"):
        for result in summarizer.summarize(sentences, length=4, method=method, raw=False):
            assert "<pad>" not in result.summary and "<blank>" not in result.summary, (method, result.summary)
    vocab = Vocab.build(["police arrest"])
    assert vocab.encode("police <pad> <blank>") == [vocab.index["police"], vocab.unk, vocab.unk]


@pytest.mark.parametrize("failure", [RuntimeError("[enforce fail at alloc_cpu.cpp:118] data. DefaultCPUAllocator: can't "
                                                  "allocate memory: you tried to allocate 68719476736 bytes."),
                                     MemoryError()])
def test_running_out_of_memory_is_one_line_naming_the_remedy(good, tmp_path, monkeypatch, capsys, failure):
    """`--batch-size 4096` (the maximum) on long lines asks the allocator for more than the machine has."""
    import naus.commands.decode

    def allocate(args):
        raise failure

    monkeypatch.setattr(naus.commands.decode, "decode", allocate)
    code, err = run_cli(["decode", "--checkpoint", good["checkpoint"], "--input", good["text"], "--length", "3",
                         "--batch-size", "4096", "--out", tmp_path / "o.txt"], capsys)
    assert code == 2 and "out of memory" in err and "smaller --batch-size" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the callback's, as Python prints it
def test_a_stop_raised_inside_a_weakref_callback_still_stops_the_command(good, tmp_path, monkeypatch, capsys):
    """Python prints and drops an exception raised in a weakref callback (a report's matplotlib or pandas objects
    collected when SIGTERM came): the command still ends as stopped, not as done."""
    import weakref

    import naus.cli
    import naus.commands.scoring

    def collected_when_stopped(args):
        class Held:
            pass

        held = Held()
        ref = weakref.ref(held, lambda _: naus.cli._interrupt(signal.SIGTERM, None))  # noqa: F841 (kept alive)
        del held  # the callback runs here; its KeyboardInterrupt is printed and dropped

    monkeypatch.setattr(naus.commands.scoring, "head", collected_when_stopped)
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        code, err = run_cli(["head", "--input", good["text"], "--lines", "1", "--out", tmp_path / "y"], capsys)
        assert code == 128 + signal.SIGTERM and "stopped by SIGTERM" in err
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


def test_a_profile_with_every_list_at_its_maximum_is_refused_before_the_dag(tmp_path):
    """Its 34,396 outputs (32,796 before source-order) kept Snakemake's dry run busy over 300 s and 925 MB; now one line at once."""
    import yaml

    from naus import settings, tables
    from tests.helpers import ROOT, resolved_config

    config = yaml.safe_load((ROOT / "config/demo.yaml").read_text())
    config["search"]["lengths"] = list(range(2, 18))
    config["train"].update(seeds=list(range(settings.MAX_SEEDS)), analysis_seeds=list(range(settings.MAX_SEEDS)),
                           fractions=[round(0.01 * (i + 1), 2) for i in range(32)])
    config["decode"].update(beam_sweep=list(range(1, 33)), char_sweep=list(range(20, 84)))
    config["analysis"] = {"lengths": list(range(2, 18))}
    resolved = resolved_config(write(tmp_path / "max.yaml", yaml.safe_dump(config)))
    with pytest.raises(NausError, match=r"asks for 34,396 outputs .* more than 5,000"):
        tables.spec(resolved)
    for profile in ("demo", "gigaword-sample", "paper"):  # the real ones are far below
        tables.spec(resolved_config(ROOT / f"config/{profile}.yaml"))
