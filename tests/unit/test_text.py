import subprocess
import sys

import pytest

from naus.text import (
    copy_key,
    gigaword_line,
    headline,
    hosts,
    is_word,
    mask_digits,
    normalize,
    restore_digits,
    sentences,
    source_tokens,
)
from tests.helpers import HOSTILE_CHARACTERS, ROOT, shown


def test_normalize_follows_gigaword_convention():
    assert normalize('He said "it\'s 50-50" (roughly) on Wednesday.') == (
        "he said `` it 's ##-## '' -lrb- roughly -rrb- on wednesday ."
    )
    assert normalize("U.S. shares don't rise 3.5% in Japan's markets") == (
        "u.s. shares do n't rise #.# % in japan 's markets"
    )


def test_normalize_maps_typographic_quotes_and_blank_input():
    assert normalize("The \u201cbig\u201d deal\u2019s off \u2014 again") == "the `` big '' deal 's off -- again"
    assert normalize("   \t ") == ""


def test_a_summary_is_written_as_its_source_wrote_its_words():
    source = 'Apple\'s iPhone sales didn\'t rise 7.5% (again) in Q3, "analysts" said; apple pie sold 12.'
    tokens = source_tokens(source)
    assert " ".join(t.lower() for t in tokens) != normalize(source) and len(tokens) == len(normalize(source).split())
    assert headline("apple 's iphone sales did n't rise #.# %", tokens) == "Apple's iPhone sales didn't rise 7.5%"
    assert headline("iphone sales -lrb- again -rrb- in q#", tokens) == "iPhone sales (again) in Q3"
    # a word takes its clitics (the possessive is Apple's); the next position holding it, then any left
    assert headline("apple pie sold ## , apple", tokens) == "Apple's pie sold 12, apple"
    assert headline("sales unseen", tokens) == "Sales unseen"  # a word not in the source stays as given
    assert headline("", tokens) == ""
    assert [is_word(t) for t in ("-lrb-", ",", "'s", "#.#", "n't", "--", "u.s.", "'S")] == [
        False, False, False, True, False, False, True, False]  # a clitic is part of the word before it


def test_gigaword_line_rewrites_unk():
    assert gigaword_line("the <unk> said  <unk>") == "the UNK said UNK"


def test_digits_masked_for_the_models_are_restored_from_the_source_in_order():
    source = "in 1998 , 12 people and 1,000 more died ; 1999 saw 12"
    assert mask_digits(source) == "in #### , ## people and #,### more died ; #### saw ##"
    summary = "#### : ## people , #,### died ; #### ##"
    assert restore_digits(summary, source) == "1998 : 12 people , 1,000 died ; 1999 12"
    assert restore_digits("## ## ##", "12") == "12 ## ##"  # no source word left: stays masked
    assert restore_digits("no digits here", source) == "no digits here"


def test_nltk_parts_load_without_nltks_init_and_a_later_import_of_nltk_is_whole():
    """Scoring and normalising import only the NLTK modules they use (not scikit-learn through NLTK's
    `__init__`), stem and tokenise as before, and leave `import nltk` whole after."""
    script = """
import sys
from naus.evaluation.evaluate import rouge
from naus.text import normalize
scores = rouge(["polices were running in cities", "the talks ended"], [["police ran in the city", "talks end"]])
assert {k: scores[k] for k in ("rouge1", "rouge2", "rougeL")} == {"rouge1": 70.0, "rouge2": 33.33, "rougeL": 70.0}
assert normalize("They're (in 2019).") == "they 're -lrb- in #### -rrb- ."
assert not {"sklearn", "nltk"} & set(sys.modules), {"sklearn", "nltk"} & set(sys.modules)
import nltk
assert nltk.stem.porter.PorterStemmer().stem("cities") == "citi" and nltk.tokenize.TreebankWordTokenizer
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr


def test_contractions_and_possessives_are_written_whole_with_the_word_before_them():
    tokens = source_tokens("Officials won't say why they can't and don't; John's and the workers' cars stopped.")
    assert "n't" in tokens and "'s" in tokens  # the student reads Treebank's pieces, as it learned them
    assert hosts(tokens)[:2] == ["Officials", "won't"] and hosts(tokens)[tokens.index("'s")] == ""
    assert headline("officials wo say why they ca stop", tokens) == "Officials won't say why they can't stop"
    assert headline("john cars stopped", tokens) == "John's cars stopped"
    assert headline("workers cars", tokens) == "Workers' cars"


def test_a_number_is_written_with_the_signs_treebank_split_off_it():
    """`$500` and `30%` were written `500` and `30`: a word the source never wrote, and another sense."""
    tokens = source_tokens("Apple will invest $500 billion, about US$25 a head and 30% more; $ signs stay apart.")
    assert "$" in tokens and "%" in tokens  # the student reads Treebank's pieces
    written = hosts(tokens)
    assert {"$500", "$25", "30%"} <= set(written) and written[tokens.index("%")] == ""
    assert written[len(tokens) - 1 - tokens[::-1].index("$")] == "$"  # no number after it: left as it is
    assert headline("", tokens, [0, 2, 4, 5, 14, 16]) == "Apple invest $500 billion 30% more"


def test_every_sentence_of_a_line_has_its_full_stop_split_off():
    line = "Police arrested five protesters. Mr. Smith of the U.S. said so on Monday! Protests went on (they said.)"
    assert sentences(line) == ["Police arrested five protesters.", "Mr. Smith of the U.S. said so on Monday!",
                               "Protests went on (they said.)"]
    tokens = source_tokens(line)
    assert "protesters" in tokens and "Monday" in tokens and "protesters." not in tokens
    assert "Mr." in tokens and "U.S." in tokens  # abbreviations end no sentence
    assert normalize("He left. 25 stayed.") == "he left . ## stayed ."
    assert sentences("one sentence only") == ["one sentence only"] and source_tokens("") == []


def test_a_number_is_a_copy_word_of_its_own_and_comes_back_in_its_own_place():
    tokens = source_tokens("Rebels freed 25 hostages but kept 31 hostages in 2 towns")
    assert [copy_key(t) for t in tokens if any(c.isdigit() for c in t)] == ["25", "31", "2"]
    assert copy_key("Rebels") == "rebels" and copy_key("-lrb-") == "-lrb-"
    assert headline("rebels freed 25 hostages kept 31", tokens) == "Rebels freed 25 hostages kept 31"
    assert headline("rebels kept 31 hostages freed 25", tokens) == "Rebels kept 31 hostages freed 25"

# -- hostile and careless input (the review rounds): each test names the input it spoils and what it did before --

@pytest.mark.parametrize("name", list(HOSTILE_CHARACTERS))
def test_control_and_format_characters_of_raw_text_never_reach_a_summary(name):
    """`'Police \\u202earrested five protesters'` was written as it came, reversing what a terminal shows."""
    from naus import Summarizer

    bad = HOSTILE_CHARACTERS[name]
    lines = [f"Police {bad}arrested five protesters{bad} in Paris on Monday", f"{bad}Stocks closed{bad} lower"]
    for result in Summarizer.from_pretrained().summarize(lines, length=4):
        assert result.summary and shown(result.summary), (name, result.summary)
