import json
import os
import stat
import zipfile

import pytest

from naus import NausError
from naus.data.corpus import DEMO_MEMBER, build_gigaword, read_demo_news, read_duc2004, read_rush, split_pairs
from naus.plumbing.files import read_lines, sha256sum
from naus.plumbing.outputs import write_lines
from naus.settings import ALL_TITLES
from naus.data.sources import download
from tests.helpers import write


def _rush(tmp_path, name, articles, titles):
    a = write(tmp_path / name / "article.txt", "".join(x + "\n" for x in articles))
    t = write(tmp_path / name / "title.txt", "".join(x + "\n" for x in titles))
    return a, t


def test_read_rush_rewrites_unk(tmp_path):
    pairs = read_rush(*_rush(tmp_path, "p", ["a <unk> b"], ["<unk> c"]))
    assert pairs == [("a UNK b", "UNK c")]


def test_build_gigaword_dedupes_drops_test_overlap_and_empty(tmp_path):
    pool = _rush(
        tmp_path,
        "pool",
        ["one two", "one two", "", "test article", "three four", "five six", "seven"],
        ["t1", "t1b", "t2", "t3", "t4", "t5", "t6"],
    )
    test = _rush(tmp_path, "test", ["test article"], ["ref"])
    extra = write(tmp_path / "extra.txt", "extra <unk> headline\n")
    corpus = build_gigaword(pool, test, dev_size=1, seed=0, extra_headlines=[extra])
    assert corpus.stats["pool_duplicates_dropped"] == 1
    assert corpus.stats["pool_empty_dropped"] == 1
    assert corpus.stats["pool_test_overlap_dropped"] == 1
    assert len(corpus.pairs["pool"]) == 3 and len(corpus.pairs["dev"]) == 1
    assert corpus.pairs["test"] == [("test article", "ref")]
    dev_title = corpus.pairs["dev"][0][1]
    assert dev_title not in corpus.headlines, "dev titles must not reach the LM"
    assert "extra UNK headline" in corpus.headlines
    counts = corpus.write(tmp_path / "out")
    assert json.loads((tmp_path / "out" / "stats.json").read_text())["pool_pairs"] == counts["pool_pairs"] == 3
    assert read_lines(tmp_path / "out" / "test" / "title.txt") == ["ref"]


def test_split_is_seeded_and_disjoint():
    pairs = [(f"a{i}", f"t{i}") for i in range(20)]
    one, two = split_pairs(pairs, 3, 4, seed=7), split_pairs(pairs, 3, 4, seed=7)
    assert one == two
    assert sorted(sum(one.values(), [])) == sorted(pairs)
    with pytest.raises(NausError, match="must be below the corpus size"):
        split_pairs(pairs, 10, 10, seed=0)


def test_a_select_split_leaves_dev_and_test_as_they_were_and_its_titles_reach_nothing(tmp_path):
    """The second dev split comes out of the pool only: the same dev and test, a disjoint select split, and
    neither its titles in the LM's headlines nor its pairs in the pool the students learn from."""
    pairs = [(f"a{i}", f"t{i}") for i in range(20)]
    plain, selected = split_pairs(pairs, 3, 4, seed=7), split_pairs(pairs, 3, 4, seed=7, select_size=5)
    assert selected["dev"] == plain["dev"] and selected["test"] == plain["test"] and "select" not in plain
    assert len(selected["select"]) == 5 and selected["pool"] == [p for p in plain["pool"] if p not in selected["select"]]
    pool = _rush(tmp_path, "pool", [f"article {i}" for i in range(12)], [f"title {i}" for i in range(12)])
    corpus = build_gigaword(pool, _rush(tmp_path, "test", ["test article"], ["ref"]), dev_size=2, seed=0, select_size=3,
                            searched=4)
    held = {title for _, title in corpus.pairs["select"]}
    assert len(held) == 3 and not held & set(corpus.headlines) and not held & {t for _, t in corpus.pairs["pool"]}
    counts = corpus.write(tmp_path / "out")
    assert counts["select_pairs"] == 3 and counts["pool_pairs"] == 7
    assert set(read_lines(tmp_path / "out" / "select" / "title.txt")) == held


def test_the_lm_reads_no_title_of_a_searched_article_not_even_a_copy_and_the_paper_protocol_reads_every_one(tmp_path):
    """Under the default protocol the LM reads the titles of the pool articles after the searched first N and
    the extra headlines, less any line equal to a searched article's title (pool's first N, dev's, test's);
    `all` is the paper's: every pool title, then every extra headline."""
    pool = _rush(tmp_path, "pool", [f"article {i}" for i in range(12)], [f"title {i}" for i in range(12)])
    test = _rush(tmp_path, "test", ["test article"], ["ref"])
    plain = build_gigaword(pool, test, dev_size=2, seed=0, lm_titles=ALL_TITLES)
    searched = [title for _, title in plain.pairs["pool"][:4]]
    dev = [title for _, title in plain.pairs["dev"]]
    extra = write(tmp_path / "extra.txt", "".join(f"{line}\n" for line in ["other news", searched[0], dev[0], "ref"]))
    paper = build_gigaword(pool, test, dev_size=2, seed=0, extra_headlines=[extra], lm_titles=ALL_TITLES)
    assert paper.headlines == [title for _, title in paper.pairs["pool"]] + ["other news", searched[0], dev[0], "ref"]
    corpus = build_gigaword(pool, test, dev_size=2, seed=0, extra_headlines=[extra], searched=4)
    assert corpus.pairs == paper.pairs, "the protocol changes the LM's corpus, never the splits"
    assert corpus.headlines == [title for _, title in corpus.pairs["pool"][4:]] + ["other news"]
    read = set(corpus.headlines)
    assert not read & set(searched) and not read & set(dev) and "ref" not in read
    assert corpus.stats["lm_searched_titles_left_out"] == 4 and corpus.stats["lm_copies_of_searched_titles_left_out"] == 3
    whole = build_gigaword(pool, test, dev_size=2, seed=0, extra_headlines=[extra])  # every pool article searched
    assert whole.headlines == ["other news"] and whole.stats["lm_searched_titles_left_out"] == len(whole.pairs["pool"])
    with pytest.raises(NausError, match="would read no headline.*data.lm_titles"):
        build_gigaword(pool, test, dev_size=2, seed=0)


def test_read_duc2004(tmp_path):
    write(tmp_path / "input.txt", "x y\n")
    for i in range(4):
        write(tmp_path / f"task1_ref{i}.txt", f"R{i}\n")
    duc = read_duc2004(tmp_path)
    assert duc["input"] == ["x y"] and duc["ref3"] == ["R3"]


def test_line_count_mismatch_names_both_files(tmp_path):
    a = write(tmp_path / "a.txt", "x\ny\n")
    t = write(tmp_path / "t.txt", "x\n")
    with pytest.raises(NausError, match=r"a\.txt has 2, .*t\.txt has 1"):
        read_rush(a, t)


def test_non_utf8_names_file_and_line(tmp_path):
    a = write(tmp_path / "a.txt", b"fine\nbad \xff byte\n")
    with pytest.raises(NausError, match=r"a\.txt: line 2: not valid UTF-8"):
        read_lines(a)


def test_empty_corpus_and_missing_file(tmp_path):
    a, t = _rush(tmp_path, "e", [], [])
    with pytest.raises(NausError, match="corpus is empty"):
        read_rush(a, t)
    with pytest.raises(NausError, match=r"missing\.txt: file not found"):
        read_lines(tmp_path / "missing.txt")


def test_write_is_atomic_on_failure(tmp_path):
    target = tmp_path / "out.txt"
    write_lines(target, ["old"])

    def lines():
        yield "new"
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        write_lines(target, lines())
    assert read_lines(target) == ["old"]
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"], "no temporary file left behind"


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_atomic_writes_respect_the_umask(tmp_path, umask):
    previous = os.umask(umask)
    try:
        write_lines(tmp_path / "out.txt", ["x"])
        plain = tmp_path / "plain.txt"
        plain.write_text("x\n")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "out.txt").stat().st_mode) == 0o666 & ~umask == stat.S_IMODE(plain.stat().st_mode)


def test_download_verifies_checksum(tmp_path):
    source = tmp_path / "src.zip"
    with zipfile.ZipFile(source, "w") as zf:
        zf.writestr("x.txt", "hello\n")
    good = sha256sum(source)
    dest = download(source.as_uri(), tmp_path / "dl" / "x.zip", good)
    assert sha256sum(dest) == good
    with pytest.raises(NausError, match="checksum mismatch"):
        download(source.as_uri(), tmp_path / "dl" / "y.zip", "0" * 64)
    assert not (tmp_path / "dl" / "y.zip").exists()
    with pytest.raises(NausError, match="download failed"):
        download((tmp_path / "nope.zip").as_uri(), tmp_path / "dl" / "z.zip", good)


def test_gigaword_sample_data_counts(shared_data, tmp_path):
    corpus = build_gigaword(
        (shared_data / "gigaword/pool/article.txt", shared_data / "gigaword/pool/title.txt"),
        (shared_data / "gigaword/test/input.txt", shared_data / "gigaword/test/task1_ref0.txt"),
        dev_size=500,
        seed=0,
        extra_headlines=[shared_data / "headlines/extra_titles.txt"],
        searched=16842,
    )
    assert len(corpus.pairs["test"]) == 1951
    lm_lines, searched = set(corpus.headlines), {title for _, title in corpus.pairs["pool"][:16842]}
    assert not lm_lines & searched and not lm_lines & {title for _, title in corpus.pairs["dev"]}
    assert corpus.stats["lm_searched_titles_left_out"] == 16842
    assert len(corpus.pairs["pool"]) + len(corpus.pairs["dev"]) <= 36183
    assert all("<unk>" not in a for a, _ in corpus.pairs["pool"])


def test_demo_news_lead_sentences_are_the_same_split_in_parallel(tmp_path):
    rows = [("Storm hits coast", "A storm hit the coast on Monday. Thousands lost power. More rain is due."),
            ("Dr. Smith wins", "Dr. Smith won the prize in St. Louis on Friday, officials said. She thanked her team."),
            ("Empty", "")] * 70
    csv_text = "title,text\n" + "".join(f'"{title}","{text}"\n' for title, text in rows)
    inner = tmp_path / "NewsArticles.zip"
    with zipfile.ZipFile(inner, "w") as z:
        z.writestr("NewsArticles.csv", csv_text)
    wheel = tmp_path / "fake.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.write(inner, DEMO_MEMBER)
    serial = read_demo_news(wheel, workers=1)
    assert read_demo_news(wheel, workers=2) == serial
    assert serial[:3] == [("a storm hit the coast on monday .", "storm hits coast"),
                          ("dr. smith won the prize in st. louis on friday , officials said .", "dr. smith wins"),
                          ("", "empty")]


def _tar(path, members):
    """A tar archive of (TarInfo, bytes or None) pairs."""
    import io
    import tarfile

    with tarfile.open(path, "w") as tf:
        for info, data in members:
            info.size = len(data) if data is not None else 0
            tf.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


@pytest.mark.parametrize("kind", ["absolute link", "hard link", "device", "parent path", "absolute path"])
def test_a_hostile_tar_member_is_refused_before_anything_is_unpacked(tmp_path, kind):
    """Hostile input, round nine, kind 2 (every download bounded by what it should be): a tar member that is a link,
    a hard link, a device or a path out of the folder is refused in one line naming it, and nothing of the archive
    (not even the plain files before it) is unpacked."""
    import tarfile

    from naus.data.corpus import unpack

    plain = tarfile.TarInfo("org_data/a.txt")
    bad = tarfile.TarInfo({"parent path": "org_data/../../x.txt", "absolute path": "/tmp/x.txt"}.get(kind, "org_data/b"))
    if kind == "absolute link":
        bad.type, bad.linkname = tarfile.SYMTYPE, "/etc/passwd"
    elif kind == "hard link":
        bad.type, bad.linkname = tarfile.LNKTYPE, "org_data/a.txt"
    elif kind == "device":
        bad.type, bad.devmajor, bad.devminor = tarfile.CHRTYPE, 1, 3
    archive = _tar(tmp_path / "a.tar", [(plain, b"hello\n"), (bad, None if kind.endswith("link") or kind == "device"
                                                                   else b"x\n")])
    with pytest.raises(NausError, match="member .*not a plain file|unsafe member path"):
        unpack(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists() or not [p for p in (tmp_path / "out").rglob("*") if not p.is_dir()]


def test_an_archive_that_unpacks_to_more_than_its_bound_is_refused_before_unpacking(tmp_path):
    """Kind 2: what an archive unpacks is bounded as the download is (--max-mb) and by its size (a 2 MB zip that
    becomes 2 GiB is refused from the sizes it declares, which the extraction keeps to)."""
    from naus.data.corpus import UNPACK_RATIO, unpack

    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("org_data/zeros.txt", b"\0" * (8 << 20))
    assert bomb.stat().st_size * UNPACK_RATIO < 8 << 20
    with pytest.raises(NausError, match="bomb.zip: its members hold 8388608 bytes, more than"):
        unpack(bomb, tmp_path / "out")
    assert not (tmp_path / "out" / "org_data").exists()
    text = tmp_path / "text.zip"
    with zipfile.ZipFile(text, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("org_data/a.txt", "".join(f"line {i} of some text\n" for i in range(2000)))
    with pytest.raises(NausError, match="more than 100 "):
        unpack(text, tmp_path / "out", max_bytes=100)
    assert [p.name for p in unpack(text, tmp_path / "out")] == ["a.txt"]
    assert (tmp_path / "out/org_data/a.txt").read_text().startswith("line 0 of some text")
    import tarfile

    dot, plain = tarfile.TarInfo("."), tarfile.TarInfo("./org_data/b.txt")  # `tar -C dir -cf x.tar .` writes both
    dot.type = tarfile.DIRTYPE
    assert [p.name for p in unpack(_tar(tmp_path / "dot.tar", [(dot, None), (plain, b"b\n")]), tmp_path / "out")] == [
        "b.txt"]
    assert (tmp_path / "out/org_data/b.txt").read_text() == "b\n"

# -- hostile and careless input (the review rounds): each test names the input it spoils and what it did before --

def _gigaword_files(tmp_path, duc_ref: str = "a summary", test_title: str = "police arrest"):
    articles = "".join(f"article number {i} about the police and the news\n" for i in range(40))
    titles = "".join(f"title {i} police\n" for i in range(40))
    pool = (write(tmp_path / "pool_a.txt", articles), write(tmp_path / "pool_t.txt", titles))
    test = (write(tmp_path / "test_a.txt", "police arrest five protesters\nstocks close lower\n"),
            write(tmp_path / "test_t.txt", f"{test_title}\nstocks close\n"))
    duc = tmp_path / "duc"
    write(duc / "input.txt", "an input sentence\nanother one\n")
    for i in range(4):
        write(duc / f"task1_ref{i}.txt", f"{duc_ref if i == 2 else 'a summary'}\nanother summary\n")
    return pool, test, duc


def test_an_empty_duc2004_reference_is_refused_when_the_corpus_is_built(tmp_path):
    """It was accepted by `naus data gigaword --duc-dir` and refused only when DUC was scored, hours later."""
    from naus.data.corpus import build_gigaword

    pool, test, duc = _gigaword_files(tmp_path, duc_ref="")
    with pytest.raises(NausError, match=r"task1_ref2.txt: line 1: an empty reference"):
        build_gigaword(pool, test, dev_size=5, seed=0, duc_dir=duc)
    pool, test, duc = _gigaword_files(tmp_path, duc_ref="...")
    with pytest.raises(NausError, match=r"task1_ref2.txt: line 1: a reference with no word to score"):
        build_gigaword(pool, test, dev_size=5, seed=0, duc_dir=duc)
    pool, test, duc = _gigaword_files(tmp_path)
    assert build_gigaword(pool, test, dev_size=5, seed=0, duc_dir=duc, lm_titles="all").duc["ref2"][0] == "a summary"


@pytest.mark.parametrize("title, message", [("", "an empty reference"), ("'' ``", "a reference with no word to score")])
def test_an_empty_test_title_is_refused_when_the_corpus_is_built(tmp_path, title, message):
    """An empty title of the test set was taken into the corpus and scored as zeros."""
    from naus.data.corpus import build_gigaword

    pool, test, duc = _gigaword_files(tmp_path, test_title=title)
    with pytest.raises(NausError, match=f"test_t.txt: line 1: {message}"):
        build_gigaword(pool, test, dev_size=5, seed=0)
