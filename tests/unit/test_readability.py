"""Phrases a headline keeps whole (`naus.text.phrases`), the faults an editor fixes (`naus.evaluation.readability`),
and what the default decoding guarantees of them on constructed news: no number without its unit, no name cut."""

import itertools
import random

import pytest

from naus.evaluation.readability import (DANGLING, FAULTS, NAME_CUT, NUMBER_CUT, OUT_OF_ORDER, QUOTATION_CUT,
                                         REPEAT, _in_order, aligned, faults, shares)
from naus.text import phrase_ties, phrases, source_tokens
from tests.helpers import ROOT


def spans(text: str) -> list[str]:
    tokens = source_tokens(text)
    return [" ".join(tokens[a:b]) for a, b in phrases(tokens)]


@pytest.mark.parametrize("text, expected", [
    ("Shares in Nordvik Motors fell 18 percent on Monday.", ["Nordvik Motors", "18 percent"]),
    ("The parliament voted 97 to 72 to raise it.", ["97 to 72"]),
    ("Harvard must get $4.2 billion in grants.", ["4.2 billion"]),  # Treebank's `$` is no word: it ends nothing
    ("It made 300 million euros, a record.", ["300 million euros"]),
    ("U.S. District Judge Amy Berman Jackson ruled.", ["Amy Berman Jackson"]),  # of a long run, the name
    ('She called it "a betrayal of pensioners" and left.', ["a betrayal of pensioners"]),
    ('She called it "a betrayal of all the pensioners" and left.', []),  # longer than a phrase
    ("The Bank held rates at 2.5 percent.", ["2.5 percent"]),  # a sentence's first capital is no name
    ("POLICE ARREST FIVE IN PARIS AFTER RIOT", []),  # capitals everywhere show no name
    ("Police Arrest Five In Paris After Riot", []),  # nor does Title Case
    ("Prices rose 3 percent in the strife-torn south.", ["3 percent"]),  # a hyphenated word is one token
    ("He won 40 of the votes.", []),  # a function word is no unit
])
def test_phrases_of_constructed_news(text, expected):
    """Numbers with their unit, ranges, names where case shows them, short quotations; none else (outsider text:
    capitals, signs, long quotations)."""
    assert spans(text) == expected


def test_gigaword_text_has_numbers_with_units_and_no_names():
    tokens = "australian shares closed down #.# percent monday , said john howard".split()
    assert [" ".join(tokens[a:b]) for a, b in phrases(tokens)] == ["#.# percent"]


def test_ties_mark_each_word_a_phrase_continues_from():
    tokens = source_tokens("Shares in Nordvik Motors fell 18 percent.")
    assert phrase_ties(tokens) == [False, False, True, False, False, True, False, False]


@pytest.mark.parametrize("summary, fault", [
    ("nordvik motors fell 18", NUMBER_CUT),
    ("shares motors fell 18 percent", NAME_CUT),
    ("varga called budget betrayal of pensioners", QUOTATION_CUT),
    ("nordvik motors shares fell in", DANGLING),
    ("nordvik motors fell 18 percent 18 percent", REPEAT),
    ("18 percent nordvik motors fell", OUT_OF_ORDER),
])
def test_each_fault_is_found(summary, fault):
    """Each mechanical fault of the issue's editor, on a constructed headline of constructed news."""
    source = source_tokens('Shares in Nordvik Motors fell 18 percent after Helena Varga called the budget "a betrayal'
                           ' of pensioners".')
    assert fault in faults(summary.split(), source)


def test_a_clean_headline_has_no_fault_and_shares_count_headlines():
    source = source_tokens("Shares in Nordvik Motors fell 18 percent on Monday.")
    assert faults("nordvik motors shares fell 18 percent".split(), source) == {OUT_OF_ORDER}
    assert faults("shares nordvik motors fell 18 percent".split(), source) == set()
    assert aligned("shares ## percent".split(), source) == [0, 5, 6]  # a masked number matches it as written
    found = shares([["shares", "fell", "18"], ["shares", "fell"]], [source, source])
    assert found[NUMBER_CUT] == 50.0 and found["any fault"] == 50.0 and set(found) == {*FAULTS, "any fault"}


@pytest.mark.parametrize("budget", [{"length": 6}, {"length": 8}, {"length": 10}, {"chars": 60}])
def test_the_default_decoding_keeps_numbers_with_their_units_and_names_whole(budget):
    """The bundled student's headlines of news no data set holds, decoded as the library does by default: no number
    cut from its unit, no name or quotation cut, no function word last (constraints of the decoder's program, not a
    repair after it)."""
    from naus.decoding.summarizer import Summarizer

    lines = [line for name in ("news.txt", "fresh_news.txt") for line in (ROOT / "tests/data" / name).read_text()
             .splitlines()]
    summarizer = Summarizer.from_pretrained()
    results = summarizer.summarize(lines, headlines=False, **budget)
    for line, result in zip(lines, results):
        assert not faults(result.summary.split(), source_tokens(line)) & {NUMBER_CUT, NAME_CUT, QUOTATION_CUT,
                                                                          DANGLING}, (line, result.summary)


def test_a_copied_span_aligns_where_it_was_copied_from():
    """`to raise` copied from `voted 97 to 72 to raise` is the second `to`: the range is not counted as cut."""
    source = source_tokens("The parliament voted 97 to 72 to raise it.")
    assert aligned("parliament to raise".split(), source) == [1, 6, 7]
    assert NUMBER_CUT not in faults("parliament to raise".split(), source)



def test_a_span_said_twice_aligns_as_two_whole_spans():
    """Kind: a summary the counter could misread. `18 million pounds` kept twice is two whole spans of the source,
    not a part of `18 million dollars` between them: no cut counted where the decoder kept every phrase whole."""
    source = source_tokens("The deficit fell to 18 million pounds (18 million dollars) from 18 million pounds.")
    summary = "deficit fell 18 million pounds 18 million pounds".split()
    assert aligned(summary, source) == [1, 2, 4, 5, 6, 13, 14, 15]
    assert faults(summary, source) == set()


def test_the_in_order_alignment_is_the_brute_forces():
    """The exact alignment against every increasing choice of positions, on small random word strings: the same
    number of adjacent pairs; None exactly when no increasing choice exists."""
    rng = random.Random(7)
    for _ in range(300):
        source = [rng.choice("abc") for _ in range(rng.randint(1, 7))]
        summary = [rng.choice("abcd") for _ in range(rng.randint(1, 4))]
        holding = [[k for k, t in enumerate(source) if t == w] for w in summary]
        choices = [c for c in itertools.product(*holding) if all(a < b for a, b in zip(c, c[1:]))]
        found = _in_order(holding)
        if not choices:
            assert found is None
            continue
        best = max(sum(b == a + 1 for a, b in zip(c, c[1:])) for c in choices)
        assert tuple(found) in choices and sum(b == a + 1 for a, b in zip(found, found[1:])) == best

@pytest.mark.parametrize("given, said", [({"phrases": "some"}, "phrases must be one of"),
                                         ({"last_word": "noun"}, "last_word must be one of"),
                                         ({"adjacency": float("nan")}, "adjacency must be between 0.0 and 10.0, got nan"),
                                         ({"adjacency": -1.0}, "adjacency must be between"),
                                         ({"adjacency": "1"}, "adjacency must be a number")])
def test_the_decoders_settings_refuse_outsider_values_in_one_line(given, said):
    """Outsider input to the new settings (the API's, as the command line's): one line naming the setting."""
    from naus.decoding.summarizer import Summarizer

    with pytest.raises((ValueError, TypeError), match=said):
        Summarizer.from_pretrained().summarize(["Police arrested five protesters."], **given)
