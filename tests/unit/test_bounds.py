"""Requests bounded by their input, the library checked as the command line is, checkpoints whose
weights are not what they say refused, and implausible metrics refused: each a correct result or one
clear error."""

from __future__ import annotations

import json
import logging
import math

import pytest
import torch

from naus import NausError
from naus.student.checkpoint import FORMAT, load_checkpoint, model_from_checkpoint, save_checkpoint
from naus.decoding import char_control_batch, length_control_batch
from naus.student.model import ARStudent, NAUS
from naus.settings import ModelConfig
from naus.decoding.summarizer import Summarizer
from naus.student.vocab import Vocab
from tests.helpers import write

TEXT = ["police arrest five protesters in paris", "stocks close lower"]


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """A NAUS and an AR student, untrained (what they say does not matter here, only that they load)."""
    root = tmp_path_factory.mktemp("bounds")
    vocab = Vocab.build(TEXT)
    paths = {}
    for arch, model in (("naus", NAUS), ("ar", ARStudent)):
        config = ModelConfig(len(vocab), d_model=16, n_heads=2, n_layers=1, d_ff=32, dropout=0.0, max_len=32, arch=arch)
        torch.manual_seed(0)
        paths[arch] = save(root / f"{arch}.pt", vocab, config.to_dict(), model(config).state_dict())
    return paths


def save(path, vocab, settings, weights):
    save_checkpoint(path, {"format": FORMAT, "vocab": vocab.tokens, "model_config": settings, "model": weights})
    return path


@pytest.mark.parametrize("options, error, message", [
    ({"batch_size": -1}, ValueError, "batch_size must be between 1 and 4096, got -1"),
    ({"ratio": 5.0, "length": None}, ValueError, "ratio must be in (0, 1]"),
    ({"length": 3.7}, TypeError, "length must be an integer, got float 3.7"),
    ({"length": 10**9}, ValueError, "length must be between 1 and 4096"),
    ({"beam_size": 10**6}, ValueError, "beam_size must be between 1 and 256, got 1000000"),
    ({"chars": 10**9}, ValueError, "chars must be between 1 and 10000"),
    ({"batch_size": "64"}, TypeError, "batch_size must be an integer, got str"),
])
def test_the_library_checks_what_the_command_line_checks(checkpoints, options, error, message):
    summarizer = Summarizer.from_checkpoint(checkpoints["naus"], "cpu")
    with pytest.raises(error) as raised:
        summarizer.summarize(TEXT, **options)
    assert message in str(raised.value) and "\n" not in str(raised.value)


@pytest.mark.parametrize("sentences, message", [
    ("police arrest five", r"an iterable of strings \(a list of str\), got str: one sentence is \[text\]"),
    (["police", 7], r"sentences must be strings, got int at sentences\[1\]"),
    ([b"police arrest"], r"got bytes at sentences\[0\] \(decode bytes first"),
    (b"police arrest", r"an iterable of strings \(a list of str\), got bytes"),
    (None, r"an iterable of strings \(a list of str\), got NoneType")])
def test_sentences_that_are_not_strings_are_a_type_error(checkpoints, sentences, message):
    with pytest.raises(TypeError, match=message):
        Summarizer.from_checkpoint(checkpoints["naus"], "cpu").summarize(sentences)


def test_a_source_longer_than_the_students_positions_is_logged_and_read_on_its_first_words(checkpoints, caplog):
    long = " ".join(["police arrest five protesters"] * 5000)  # 20,000 words; the student has 32 positions
    with caplog.at_level(logging.WARNING, logger="naus.decoding.summarizer"):
        results = Summarizer.from_checkpoint(checkpoints["naus"], "cpu").summarize([long, TEXT[1]], length=4)
    assert "1 of 2 sentences are longer than this student's 32 positions" in caplog.text
    assert "sentence 1, 20000 words" in caplog.text and len(results[0].summary.split()) == 4


def test_a_length_or_budget_beyond_what_the_slots_hold_gives_what_the_slots_allow():
    """No table wider than the source: L above the slots is the longest reachable summary, as with L = T,
    and a budget above what T of the longest words fill is the best summary of any length."""
    gen = torch.Generator().manual_seed(3)
    lp = (torch.randn(2, 6, 9, generator=gen) * 2).log_softmax(-1)
    lengths = torch.tensor([6, 4])
    huge = length_control_batch(lp, lengths, [10**9, 10**9], 3)
    exact = length_control_batch(lp, lengths, [6, 4], 3)
    assert [(h.path, h.log_prob) for h in huge] == [(h.path, h.log_prob) for h in exact]
    word_chars = [0, 0, 0, 5, 1, 7, 2, 3, 4]
    wide = char_control_batch(lp, lengths, [10**9, 10**9], word_chars, 3)
    fitted = char_control_batch(lp, lengths, [6 * 8, 4 * 8], word_chars, 3)
    assert [(h.path, h.log_prob) for h in wide] == [(h.path, h.log_prob) for h in fitted]


def test_a_decoder_whose_kernel_did_not_finish_is_an_error_not_an_empty_summary():
    lp = torch.full((2, 5, 6), float("nan"))  # what a diverged model gives: no sample's kernel ends with a score
    with pytest.raises(NausError, match="the decoder failed on 2 of 2 samples"):
        length_control_batch(lp, torch.tensor([5, 3]), [2, 2], 2)


def test_an_allocation_that_fails_inside_the_parallel_kernel_is_an_error(tmp_path):
    """numba drops an exception raised inside `prange`: under an address-space limit the tables of a huge
    request cannot be allocated, and the decoder must say so instead of returning empty paths."""
    import subprocess
    import sys

    script = write(tmp_path / "oom.py", """
import resource, sys, torch
from naus import NausError
from naus.decoding import length_control_batch
torch.set_num_threads(2)  # the two samples on threads of their own, whatever the suite's one thread a worker
lp = torch.randn(2, 3000, 6).log_softmax(-1)
length_control_batch(lp[:, :5].contiguous(), torch.tensor([5, 5]), [2, 2], 2)  # compiled before the limit
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
try:
    length_control_batch(lp, torch.tensor([3000, 3000]), [3000, 3000], 200)  # 2 x 46 GB of tables
except NausError as err:
    sys.exit(f"refused: {err}")
""")
    result = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 1 and "refused: the decoder failed" in result.stderr, result.stderr[-2000:]


def test_a_checkpoint_with_settings_of_another_version_is_refused_in_one_line(checkpoints, tmp_path):
    payload = load_checkpoint(checkpoints["naus"])
    odd = save(tmp_path / "odd.pt", Vocab(payload["vocab"]), {**payload["model_config"], "rotary": True}, payload["model"])
    with pytest.raises(NausError, match=r"model_config has settings this naus does not know: \['rotary'\]"):
        model_from_checkpoint(load_checkpoint(odd), odd)


def test_weights_relabelled_as_another_architecture_are_refused(checkpoints, tmp_path):
    """An AR student's weights fit a vanilla NAR student's layers name for name: only their mark tells them apart."""
    payload = load_checkpoint(checkpoints["ar"])
    relabelled = save(tmp_path / "nar.pt", Vocab(payload["vocab"]), {**payload["model_config"], "arch": "nar"},
                      payload["model"])
    with pytest.raises(NausError, match="weights of a 'ar' student, but its model_config says 'nar'"):
        model_from_checkpoint(load_checkpoint(relabelled), relabelled)


@pytest.mark.parametrize("value", [float("nan"), 2231.0, -3.0, "27.1", None, True])
def test_the_report_refuses_an_implausible_metric_naming_the_file_and_key(tmp_path, value):
    from naus.report import METRIC_BOUNDS, METRIC_KEYS
    from naus.files import read_json

    path = write(tmp_path / "L10.json", json.dumps({"rouge1": value, "rouge2": 9.1, "rougeL": 24.4, "avg_words": 9.8}))
    with pytest.raises(NausError, match=f"{path}: rouge1 is .*, expected a number in \\[0, 100\\]"):
        read_json(path, METRIC_KEYS, METRIC_BOUNDS)
    assert not math.isnan(read_json(write(tmp_path / "ok.json", json.dumps(
        {"rouge1": 27.1, "rouge2": 9.1, "rougeL": 24.4, "avg_words": 9.8})), METRIC_KEYS, METRIC_BOUNDS)["rouge1"])


def test_a_huge_length_under_a_4_gb_limit_is_one_error_line_or_the_whole_source(checkpoints, tmp_path, env):
    """The case of the report: --length 10^9 was killed at 23 GB, or gave empty summaries under a limit."""
    import resource
    import subprocess

    text = write(tmp_path / "text.txt", "\n".join(TEXT) + "\n")

    def decode(*options):
        limit = lambda: resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))  # noqa: E731
        return subprocess.run(["naus", "decode", "--checkpoint", checkpoints["naus"], "--input", text, *options],
                              capture_output=True, text=True, env=env, preexec_fn=limit, timeout=300)

    refused = decode("--length", "1000000000")
    assert refused.returncode == 2 and refused.stderr.strip().splitlines()[-1] == \
        "naus decode: error: argument --length: must be between 1 and 4096, got 1000000000"
    refused = decode("--chars", "1000000000")  # was a MemoryError traceback
    assert refused.returncode == 2 and refused.stderr.strip().splitlines()[-1] == \
        "naus decode: error: argument --chars: must be between 1 and 10000, got 1000000000"
    widest = decode("--length", "4096", "--beam-size", "256")
    assert widest.returncode == 0, widest.stderr[-2000:]
    assert [len(line.split()) for line in widest.stdout.splitlines()] == [len(t.split()) for t in TEXT]


@pytest.mark.parametrize("seconds", [-0.002, float("nan"), "fast"])
def test_the_report_refuses_an_implausible_time(tmp_path, seconds):
    """A negative time was shown as a speedup of −76×."""
    from naus.report.rows import first_timing

    stem = "decode/test/L10/length-control-10"
    path = write(tmp_path / f"{stem}.timing.json", json.dumps({"seconds_per_sample": seconds, "device": "cpu"}))
    with pytest.raises(NausError, match=f"{path}: seconds_per_sample is .*, expected a number in"):
        first_timing(tmp_path, (stem,))
