"""Frozen states (`naus.student.frozen`): checked against the lines they encode, refused when their numbers are
not a state's, computed without a pass for a blank line."""

import numpy as np
import pytest

from naus import NausError
from tests.helpers import SENTENCE, naus_main, write


def test_states_of_an_edited_or_reordered_source_are_refused_naming_the_file_and_line(tmp_path):
    """Checked by word counts only, states of an edited source (or two same-length sentences swapped) trained and
    decoded without a word: 89 of 100 sentences trained on another sentence's states."""
    from naus.decoding.summarizer import Summarizer
    from naus.student.train import load_pairs
    from naus.student.vocab import Vocab
    from tests.unit.test_copy_head import word_states

    lines = ["police arrest five men", "stocks close lower today", "rain hits the coast"]
    states = tmp_path / "states.npz"
    word_states(lines).save(states)
    edited = write(tmp_path / "edited.txt", "police arrest six men\nstocks close lower today\nrain hits the coast\n")
    target = write(tmp_path / "target.txt", "a\nb\nc\n")
    with pytest.raises(NausError, match=rf"{states}: no states of line 1 of {edited}"):
        load_pairs(edited, target, Vocab.build(lines), 32, states)
    swapped = word_states(lines)
    swapped.sentences = swapped.sentences[[1, 0, 2]]  # two sentences of four words: the counts agree
    swapped.save(states)
    source = write(tmp_path / "source.txt", "".join(f"{line}\n" for line in lines))
    with pytest.raises(NausError, match=rf"{states}: no states of line 1 of {source}"):
        load_pairs(source, target, Vocab.build(lines), 32, states)
    from naus.student.frozen import States

    with pytest.raises(NausError, match=rf"{states}: the states of sentence 1 \(and 1 more\) encode another"):
        States.load(states).check_lines(lines, States.load(states).source)
    assert Summarizer  # decoding reads the same check (Summarizer._frozen_states): tests/unit/test_copy_head.py


@pytest.mark.parametrize("value", [np.nan, np.inf, 1e6])
def test_states_holding_nan_inf_or_numbers_past_float16_are_refused_naming_the_file(tmp_path, value):
    """NaN states gave "training diverged at step 1 ... Lower --lr", naming no file; float32 past fp16's range
    silently became inf."""
    from naus.student.frozen import WIDTH, States

    flat = np.zeros((2, WIDTH), dtype=np.float32)
    flat[1, 5] = value
    np.savez(tmp_path / "s.npz", flat=flat, offsets=np.array([0, 2]), sentences=np.zeros((1, 32), np.uint8))
    with pytest.raises(NausError, match=rf"{tmp_path / 's.npz'}: frozen states hold NaN, infinite or numbers beyond"):
        States.load(tmp_path / "s.npz")


def test_states_of_raw_text_are_those_summarize_reads(tmp_path, capsys):
    """`naus encode-states --input news.txt` then `naus summarize --states` on it was refused (summarize reads the
    normalised line); `--raw` encodes what summarize reads, and its headlines equal those computed without states."""
    from naus.student.frozen import States, digests
    from naus.text import normalize
    from tests.helpers import naus_main

    news = write(tmp_path / "news.txt", "Police arrested 5 protesters in Paris on Monday.\nStocks closed LOWER.\n")
    assert naus_main(["encode-states", "--input", news, "--out", tmp_path / "plain.npz"], capsys).returncode == 0
    assert naus_main(["encode-states", "--raw", "--input", news, "--out", tmp_path / "raw.npz"], capsys).returncode == 0
    lines = [normalize(line) for line in news.read_text().splitlines()]
    assert np.array_equal(States.load(tmp_path / "raw.npz").sentences, digests(lines))
    with pytest.raises(NausError, match="naus encode-states --raw"):
        States.load(tmp_path / "plain.npz").check_lines(lines, "plain.npz", "naus encode-states --raw")


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
