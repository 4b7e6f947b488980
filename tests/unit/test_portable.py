"""benchmarks.portable_fingerprints: a build on another CPU against the committed one, by bytes and by score."""

from benchmarks.portable_fingerprints import compare, compare_scores


def test_outputs_are_compared_by_their_fingerprints_and_the_tables_by_every_score_both_hold():
    built = {"search": {"L8": {"sha256": "a"}}, "students": {"L8": {"sha256": "b"}}, "decodings": {}}
    committed = {"search": {"L8": {"sha256": "a"}}, "students": {"L8": {"sha256": "c"}, "L10": {"sha256": "d"}},
                 "decodings": {}}
    sections = compare(built, committed)
    assert sections["search"] == {"built": 1, "committed": 1, "equal": 1, "differ": []}
    assert sections["students"]["equal"] == 0 and sections["students"]["differ"] == ["L10", "L8"]
    scores = compare_scores({"decode/L8": {"rouge1": 30.1, "rouge2": 9.5, "note": "x"}, "only/ours": {"rouge1": 1.0}},
                            {"decode/L8": {"rouge1": 30.1, "rouge2": 9.62}, "only/theirs": {"rouge1": 2.0}})
    assert scores == {"compared": 2, "equal": 1, "largest_difference": 0.12, "outputs_that_differ": ["decode/L8"]}
