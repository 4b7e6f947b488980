"""benchmarks.common.choose (the archived recipes study's rule): the recipe with the highest mean dev ROUGE over the lengths is chosen."""

import pytest

from benchmarks.common import choose
from naus import NausError


def runs(**totals):
    """{model: run} from L<n>_s<k>=total keywords."""
    out = {}
    for key, total in totals.items():
        length, seed = key[1:].split("_s")
        out[f"L{length}-s{seed}"] = {"length": int(length), "seed": int(seed), "total": total}
    return out


def test_the_highest_mean_over_lengths_wins_and_each_length_has_its_winner():
    recipes = {"naus": runs(L8_s0=60.0, L8_s1=58.0, L10_s0=61.0, L10_s1=61.0),   # 59 and 61: mean 60
               "minilm": runs(L8_s0=62.0, L8_s1=62.0, L10_s0=59.0, L10_s1=59.5)}  # 62 and 59.25: mean 60.6
    chosen, summary = choose(recipes)
    assert chosen == "minilm"
    assert summary["winner_per_length"] == {"8": "minilm", "10": "naus"}
    assert summary["mean_dev_total"]["naus"] == {"8": 59.0, "10": 61.0}


def test_a_recipe_missing_a_length_cannot_win_and_none_complete_is_an_error():
    recipes = {"naus": runs(L8_s0=50.0, L10_s0=50.0), "cut": runs(L8_s0=70.0)}
    assert choose(recipes)[0] == "naus"
    with pytest.raises(NausError, match="no recipe has dev scores at every length"):
        choose({"cut": runs(L8_s0=70.0), "other": runs(L10_s0=70.0)})
    with pytest.raises(NausError, match="no recipe has dev scores"):
        choose({"naus": {}, "minilm": {}})  # every run cut before its dev score
