import ast
import re

import pytest

from naus import NausError
from naus.evaluation.evaluate import evaluate_files, lead, rouge, truncate_bytes
from naus.plumbing.files import read_lines
from tests.helpers import run_cli, write


def test_f1_on_a_hand_computed_case():
    # hyp "police arrest protesters" vs ref "police arrest five protesters":
    # unigrams: 3 matches, P = 3/3, R = 3/4 -> F1 = 6/7; bigrams: 1 match ("police arrest"), P = 1/2, R = 1/3 -> 0.4
    # LCS = 3 -> same as unigrams
    scores = rouge(["police arrest protesters"], [["police arrest five protesters"]])
    assert scores["rouge1"] == round(100 * 6 / 7, 2)
    assert scores["rouge2"] == 40.0
    assert scores["rougeL"] == round(100 * 6 / 7, 2)
    assert scores["avg_words"] == 3 and scores["n"] == 1


def test_multi_reference_recall_is_averaged_over_references():
    scores = rouge(["Police Arrest"], [["police arrest five"], ["five protesters"]], metric="recall")
    assert scores["rouge1"] == round(100 * (2 / 3 + 0 / 2) / 2, 2)  # both sides lowercased


def test_byte_truncation_respects_utf8_characters():
    assert truncate_bytes("café au lait", 4) == "caf"  # é is two bytes: cut before it, never inside
    assert truncate_bytes("café au lait", 5) == "café"
    scores = rouge(["aaaa bbbb cccc"], [["cccc"]], metric="recall", max_bytes=9)
    assert scores["rouge1"] == 0.0  # cccc was cut off


def test_empty_hypothesis_scores_zero_and_is_counted():
    scores = rouge(["", "police arrest"], [["police arrest", "police arrest"]])
    assert scores["empty"] == 1 and scores["rouge1"] == 50.0


def test_count_mismatch_names_both_counts(tmp_path):
    hyp = write(tmp_path / "hyp.txt", "a\nb\n")
    ref = write(tmp_path / "ref.txt", "a\n")
    with pytest.raises(NausError, match=r"hyp\.txt has 2 lines but .*ref\.txt has 1"):
        evaluate_files(hyp, [ref])
    with pytest.raises(NausError, match="file not found"):
        evaluate_files(tmp_path / "none.txt", [ref])


def test_lead():
    assert lead(["a b c d", "x"], 2) == ["a b", "x"]


PUBLISHED = {  # ../shared/data/README.md: rouge-score, stemming
    "HC_8_truncating": (27.49, 9.27, 25.09),
    "HC_8_length_control": (27.92, 9.31, 25.40),
    "HC_10_truncating": (28.11, 9.97, 25.31),
    "HC_10_length_control": (28.30, 9.95, 25.51),
}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_reproduces_the_published_gigaword_scores(shared_data, name):
    base = shared_data / "published/naus/gigaword"
    scores = evaluate_files(base / f"{name}.txt", [base / "ref_summary.txt"])
    assert (scores["rouge1"], scores["rouge2"], scores["rougeL"]) == PUBLISHED[name]


def test_reproduces_the_published_duc2004_scores(shared_data):
    text = (shared_data / "published/naus/duc2004/summary_index.txt").read_text()
    order = ast.literal_eval(text[text.index("[") : text.rindex("]") + 1])
    refs = [read_lines(shared_data / f"duc2004/task1_ref{i}.txt") for i in range(4)]
    expected = {"HC_13_truncating": (26.26, 8.10, 22.95), "HC_13_length_control": (27.10, 8.11, 23.48)}
    for name, triple in expected.items():
        lines = read_lines(shared_data / f"published/naus/duc2004/{name}.txt")
        ordered = [""] * len(lines)
        for k, i in enumerate(order):
            ordered[i] = lines[k]
        scores = rouge(ordered, refs, metric="recall", max_bytes=75)
        assert (scores["rouge1"], scores["rouge2"], scores["rougeL"]) == triple
    lead_scores = rouge(read_lines(shared_data / "duc2004/input.txt"), refs, metric="recall", max_bytes=75)
    assert (lead_scores["rouge1"], lead_scores["rouge2"], lead_scores["rougeL"]) == (22.67, 6.62, 19.93)


def test_perl_backend_agrees_on_a_hand_computed_case():
    scores = rouge(["police arrest protesters"], [["police arrest five protesters"]], backend="perl")
    assert (scores["rouge1"], scores["rouge2"]) == (round(100 * 6 / 7, 2), 40.0)
    recall = rouge(["Police Arrest", ""], [["police arrest five", "x"]], metric="recall", backend="perl")
    assert recall["rouge1"] == round(100 * (2 / 3) / 2, 2) and recall["empty"] == 1

# -- hostile and careless input (the review rounds): each test names the input it spoils and what it did before --

def test_an_empty_reference_line_is_an_error_naming_it(tmp_path):
    from naus.evaluation.evaluate import evaluate_files

    refs = write(tmp_path / "refs.txt", "police arrest\n\nstocks\n")
    with pytest.raises(NausError, match=r"refs.txt: line 2: an empty reference"):
        evaluate_files(write(tmp_path / "hyp.txt", "a\nb\nc\n"), [refs])


def test_the_perl_backend_refuses_a_line_longer_than_it_can_hold_naming_file_and_line(tmp_path, capsys):
    """`naus evaluate --backend perl` on one 5,000-word line took 3.0 GB (ROUGE-1.5.5's memory is quadratic)."""
    from tests.helpers import naus_main

    hyp = write(tmp_path / "hyp.txt", "police arrest\n" + " ".join(["word"] * 5000) + "\n")
    ref = write(tmp_path / "ref.txt", "police arrest five\nstocks fall\n")
    result = naus_main(["evaluate", "--hyp", hyp, "--ref", ref, "--backend", "perl", "--out", tmp_path / "m.json"],
                       capsys)
    assert result.returncode == 2 and f"{hyp}: line 2: 5,000 words; the perl backend takes at most 1,000" in result.stderr
    assert not (tmp_path / "m.json").exists()


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
