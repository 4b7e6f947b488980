import subprocess
import sys

from naus.text import gigaword_line, headline, is_word, mask_digits, normalize, restore_digits, source_tokens
from tests.helpers import ROOT


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
    assert headline("apple pie sold ## , apple", tokens) == "Apple pie sold 12, apple"  # the next, then any left
    assert headline("sales unseen", tokens) == "Sales unseen"  # a word not in the source stays as given
    assert headline("", tokens) == ""
    assert [is_word(t) for t in ("-lrb-", ",", "'s", "#.#", "n't", "--", "u.s.")] == [False, False, True, True, True,
                                                                                      False, True]


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
