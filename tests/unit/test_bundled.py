"""The bundled Gigaword student: loaded with no build, its card the one results/ makes, and headlines a reader
can use from any news line (contractions, several sentences, repeated numbers, budgets in bytes as written, bounded
memory and time)."""

import json
import subprocess
import sys
import time

import pytest

from naus import NausError
from naus.pipeline.bundle import BUNDLED, CARD, MAX_BYTES, PROFILE, check_bundle, shipped
from naus.decoding.summarizer import Summarizer
from naus.text import CLITICS, source_tokens
from tests.helpers import ROOT, naus_main

NEWS = ("The European Union's foreign ministers agreed on Monday to impose new sanctions on the country's "
        "leaders after weeks of talks in Brussels over the disputed election")


@pytest.fixture(scope="module")
def bundled():
    return Summarizer.from_pretrained()


def words(headline: str) -> list[str]:
    """A headline's words as a reader counts them (punctuation alone is none)."""
    return [w for w in headline.split() if any(ch.isalnum() for ch in w)]


def test_the_bundled_student_is_small_and_its_card_is_what_results_make():
    assert BUNDLED.stat().st_size <= MAX_BYTES
    assert check_bundle(ROOT / "results" / PROFILE) == []
    assert Summarizer.pretrained_path(None) == BUNDLED and Summarizer.pretrained_path(BUNDLED.parent) == (
        BUNDLED.parent / "best.pt")
    assert "| length-control |" in CARD.read_text()


def test_the_student_that_ships_is_the_last_generation_the_results_hold_at_8_words(tmp_path):
    """The profile's `train.generations` decides it, through the students its results were made with."""
    def holding(*students):
        (tmp_path / "fingerprints.json").write_text(json.dumps({"students": {name: {} for name in students}}))
        return tmp_path

    assert shipped(holding("L8", "L8-s1", "L8-g2", "L8-g2-s3", "L8-ens", "L10-g3", "L8-f0.1-g3", "nar-ctc-copy-L8")) \
        == "L8-g2"
    assert shipped(holding("L8-s2")) == "L8"
    with pytest.raises(NausError, match="no student of 8 words to ship"):
        shipped(holding("L10-g2"))


@pytest.mark.parametrize("length", [8, 10, 13])
def test_from_pretrained_gives_exactly_l_words_of_the_source_as_written(bundled, length):
    [result] = bundled.summarize([NEWS], length=length)
    assert len(words(result.summary)) == length, result.summary
    written = set(source_tokens(NEWS)) | {"Union's", "country's"}
    assert all(w in written or w.lower() in written for w in result.summary.split()), result.summary
    assert result.summary[0].isupper()


def test_the_command_line_uses_the_bundled_student_by_default(capsys):
    result = naus_main(["summarize", "--length", "8"], capsys, stdin=NEWS + "\n")
    assert result.returncode == 0, result.stderr
    assert len(words(result.stdout.strip())) == 8


def test_contractions_and_possessives_are_kept_whole_and_counted_once(bundled):
    line = "Officials won't say why they can't and don't stop John's cars, police said on Tuesday"
    for length in (5, 8):
        [result] = bundled.summarize([line], length=length)
        tokens = result.summary.split()
        assert not any(t.lower() in CLITICS or t.lower().startswith("n't") for t in tokens), result.summary
        assert "whyn't" not in result.summary and "n'tn't" not in result.summary
        assert len(words(result.summary)) == length, result.summary
        assert all(w.lower() not in ("wo", "ca", "do") for w in tokens), result.summary  # never half a contraction


def test_every_sentence_on_a_line_has_its_full_stop_split_off(bundled):
    line = ("Police arrested five protesters who defied a ban on the march. Protests went on in the capital on "
            "Monday. Officials said nothing.")
    [result] = bundled.summarize([line], length=8)
    assert not any(w.endswith(".") for w in result.summary.split()), result.summary
    assert len(words(result.summary)) == 8


def test_each_number_comes_back_once_in_its_own_place(bundled):
    line = "Rebels freed 25 hostages but kept 31 hostages in 2 towns, a spokesman said on Sunday"
    for length in (4, 6, 8):
        [result] = bundled.summarize([line], length=length)
        numbers = [w.strip(",") for w in result.summary.split() if any(ch.isdigit() for ch in w)]
        assert len(numbers) == len(set(numbers)), result.summary  # no number twice
        assert numbers == [n for n in ("25", "31", "2") if n in numbers], result.summary  # in the source's order


@pytest.mark.parametrize("line, budget", [("STRAẞE BLOCKED BY PROTEST IN BERLIN ON MONDAY", 7),
                                          ("Prices rose ١٢٣٤ percent in the year to June", 4),
                                          ("Prices rose 1234 percent in the year to June", 11)])
def test_a_character_budget_counts_the_bytes_the_headline_writes(bundled, line, budget):
    for result in bundled.summarize([line], chars=budget):
        assert len(result.summary.encode()) <= budget, (result.summary, len(result.summary.encode()))


def test_a_character_budget_past_the_line_is_one_pass_and_a_table_too_large_is_refused(bundled):
    line = " ".join(f"word{i} of the news" for i in range(32))  # 128 words
    for method in ("source-order-chars", "char-control"):
        tick = time.perf_counter()
        [result] = bundled.summarize([line], chars=2000, beam_size=6, method=method)
        assert time.perf_counter() - tick < 30 and len(result.summary.encode()) <= 2000
    with pytest.raises(NausError, match="max_memory_mb 1024: lower the budget"):
        bundled.summarize([line], chars=2000, beam_size=256, method="char-control")


# A fresh parent for the command: its children's peak is the command's alone (this test process's children's
# peak would hold every earlier child's too, such as another test's pipeline run in the same worker).
PEAK = ("import resource, subprocess, sys; code = subprocess.run(sys.argv[1:]).returncode; "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); sys.exit(code)")


def run_bounded(args: list[str], stdin) -> tuple[subprocess.CompletedProcess, float]:
    """`naus` in a child process, and the most memory it held (GB)."""
    result = subprocess.run([sys.executable, "-c", PEAK, sys.executable, "-m", "naus", *args], stdin=stdin,
                            capture_output=True, cwd=ROOT, timeout=300)
    *errors, peak = result.stderr.splitlines()
    result.stderr = b"".join(line + b"\n" for line in errors)
    return result, int(peak) / 2**20


def test_a_line_of_a_megabyte_is_cut_before_minilm_and_standard_input_of_zeros_is_refused(tmp_path):
    big = tmp_path / "big.txt"
    big.write_text(" ".join(["protesters marched through the capital"] * 40_000) + "\n")  # 1.6 MB, one line
    with open(big, "rb") as handle:
        result, peak = run_bounded(["summarize", "--length", "8"], handle)
    assert result.returncode == 0 and len(words(result.stdout.decode().strip())) == 8, result.stderr[-500:]
    assert peak < 1.5, peak
    with open("/dev/zero", "rb") as zeros:
        result, peak = run_bounded(["summarize", "--length", "8"], zeros)
    assert result.returncode != 0 and b"standard input: line 1: longer than" in result.stderr
    assert len(result.stderr.decode().strip().splitlines()) == 1 and peak < 1.5


def test_timing_without_states_counts_minilm(bundled, tmp_path, monkeypatch):
    from naus.decoding.timing import time_decoding
    from naus.student import frozen

    slow = frozen.encoder()
    real = slow.encode

    def encode(sentences, progress=False):
        time.sleep(0.2)
        return real(sentences, progress)

    monkeypatch.setattr(slow, "encode", encode)
    report = time_decoding(bundled, [NEWS] * 4, {"length": 8, "beam_size": 6}, 64, 1, 0)
    assert report["seconds_per_sample"] * report["samples"] >= 0.2, report
    assert json.dumps(report)


def test_one_sentence_at_a_time_is_timed_on_one_thread_as_the_teacher_searches(bundled):
    """The speedup divides like by like: the batch-1 pass runs on one thread (the teacher's one core a sentence), and
    the threads the rest of the process uses come back after it."""
    import torch

    from naus.decoding.timing import time_decoding

    seen = []
    summarize = bundled.summarize

    def spy(*args, **kwargs):
        seen.append((kwargs.get("batch_size"), torch.get_num_threads()))
        return summarize(*args, **kwargs)

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        bundled.summarize = spy
        report = time_decoding(bundled, [NEWS] * 4, {"length": 8, "beam_size": 6}, 64, 1, 2)
    finally:
        del bundled.summarize
        torch.set_num_threads(before)
    assert report["batch1_threads"] == 1 and report["threads"] == 2
    assert {threads for batch, threads in seen if batch == 1} == {1}
    assert {threads for batch, threads in seen if batch == 64} == {2}
