"""The data manifest and `naus data fetch`: every raw input pinned and checked, every derived file the committed one.

The suite never contacts a manifest address: the fetch runs against a local mirror (`file://`) of the public raw
files, laid out from the copies the development data holds (found by sha256) and, where $NAUS_MIRROR names one, a
full mirror (SOURCE/PATH).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from naus import NausError
from naus.derive import RECIPES, ag_news_titles, line_index, pool, reuters_titles
from naus.files import sha256sum
from naus.manifest import manifest, raw_file
from naus.sources import fetch, fetch_raw, profile_paths, recipes_for, verify

ROOT = Path(__file__).resolve().parents[2]
NEW_RECIPE = "headlines/extra_titles.txt"  # defined anew: the development data's copy was made by hand
PINNED = re.compile(r"/[0-9a-f]{40}/")  # a GitHub address at a full commit


def test_every_source_is_pinned_licensed_and_checked():
    for name, source in manifest()["sources"].items():
        assert source.get("commit") or source.get("version"), name
        assert source["licence"] and source["checked"] and source["what"], name
        for path, entry in source["files"].items():
            assert re.fullmatch(r"[0-9a-f]{64}", entry["sha256"]) and entry["size"] > 0, (name, path)
            if "bring_your_own" in source:
                assert "url" not in entry, (name, path)
            elif source.get("commit"):
                assert PINNED.search(entry["url"]) and source["commit"] in entry["url"], (name, path)
            else:
                assert source["version"] in entry["url"], (name, path)


def test_every_recipe_reads_manifest_files_and_every_output_is_committed():
    derived = manifest()["derived"]
    outputs = [output for recipe in RECIPES for output in recipe.outputs]
    assert sorted(outputs) == sorted(derived) and len(set(outputs)) == len(outputs)
    for recipe in RECIPES:
        for source, path in recipe.inputs:
            raw_file(source, path)  # a KeyError names what the manifest lacks


def test_each_profile_reads_only_derivable_files():
    for profile in ("gigaword-sample", "paper"):  # the paper's Gigaword comes from its download: DUC2004 alone here
        config = yaml.safe_load((ROOT / "config" / f"{profile}.yaml").read_text())
        assert recipes_for(profile_paths(config))
    config = yaml.safe_load((ROOT / "config/paper.yaml").read_text())
    del config["data"]["download"]
    with pytest.raises(NausError, match="org_data/train.src.txt: no recipe"):  # without it, a file nothing derives
        recipes_for(profile_paths(config))


def test_pool_keeps_the_first_of_each_article_in_order_without_the_test_set():
    train = (["a b <unk>", "c d", "a b <unk>", "t e s t"], ["x", "y", "z", "w"])
    valid = (["e f", "c d", "g\u00a0h"], ["v", "u", "s"])
    articles, titles = pool([train, valid], ["t e s t"])
    assert articles == ["a b UNK", "c d", "e f", "g\u00a0h"]  # a no-break space stays inside its token
    assert titles == ["x", "y", "v", "s"]


def test_line_index_matches_article_and_reference_with_unknown_words_and_ties():
    articles = ["the cat sat", "a dog ran", "the cat sat", "some\u00a0#\\/# thing"]
    references = ["cat", "dog", "cat", "thing"]
    released = (["a dog ran", "the <|unk|> sat", "the cat sat", "some #\\/# thing"], ["dog", "cat", "cat", "thing"])
    assert line_index(*released, articles, references) == ["1", "0", "2", "3"]
    with pytest.raises(NausError, match="line 1 of the release matches no test line"):
        line_index(["a cow ran"], ["dog"], articles, references)


def test_headline_recipes_drop_tickers_markup_and_source_tags_and_write_each_digit_a_token():
    sgml = ["<REUTERS><TITLE>STANDARD OIL &lt;SRD> TO FORM 8.75 PCT UNIT</TITLE>",
            "<TITLE>&lt;RESER'S FINE FOODS INC> TO GO PRIVATE</TITLE></REUTERS>"]
    assert reuters_titles(sgml) == ["standard oil to form # . # # pct unit", "reser 's fine foods inc to go private"]
    rows = ['"3","Wal-Mart #39;s sales up (AP)","x"', '"1","Sharon pushes on &lt;b&gt;...&lt;/b&gt;","y"',
            '"4","Ky. Company Wins Grant (SPACE.com)","z"']
    assert ag_news_titles(rows) == ["wal-mart 's sales up", "sharon pushes on ...", "ky. company wins grant"]


def test_a_duc_copy_with_one_byte_changed_is_refused_naming_the_file(tmp_path):
    raw = raw_file("duc2004", "input.txt")
    copy = tmp_path / "input.txt"
    copy.write_bytes(b"x" * raw.size)
    with pytest.raises(NausError) as err:
        fetch_raw(raw, tmp_path / "cache", bring=tmp_path)
    assert str(copy) in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(NausError, match="missing; duc2004 is not downloaded: request DUC2004 from NIST"):
        fetch_raw(raw_file("duc2004", "task1_ref0.txt"), tmp_path / "cache", bring=tmp_path)


def test_a_changed_copy_in_the_data_directory_is_refused_naming_it(tmp_path):
    test_input = tmp_path / "gigaword" / "test" / "input.txt"
    test_input.parent.mkdir(parents=True)
    test_input.write_text("one changed line\n")
    config = {"data": {"test_article": "gigaword/test/input.txt"}}
    with pytest.raises(NausError, match=re.escape(f"{test_input}: not the file the data manifest commits")):
        verify(config, tmp_path)
    result = subprocess.run([sys.executable, "-m", "naus", "data", "verify", "gigaword-sample", "--data-dir",
                             str(tmp_path)], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_a_mirror_file_with_another_checksum_is_not_kept(tmp_path):
    mirror = tmp_path / "mirror" / "bottlesum" / "outputs" / "DUC"
    mirror.mkdir(parents=True)
    (mirror / "DUC2004_bottleSumEx.txt").write_text("not the release\n")
    config = {"data": {"peers": {"bottlesum-ex": "published/bottlesum/duc2004/bottlesum_ex.txt"}}}
    with pytest.raises(NausError, match="1 of 1 raw files could not be had"):
        fetch(config, tmp_path / "data", mirror=(tmp_path / "mirror").as_uri())
    assert not list((tmp_path / "data").rglob("*.txt"))


def _mirror(shared_data: Path, into: Path) -> set[tuple[str, str]]:
    """A `file://` mirror (SOURCE/PATH) of the manifest's raw files that a full mirror ($NAUS_MIRROR) or the
    development data holds (there, copies of public files under other names: found by sha256); returns which."""
    wanted: dict[str, list[tuple[str, str]]] = {}
    for source, entry in manifest()["sources"].items():
        for path, file in entry["files"].items():
            wanted.setdefault(file["sha256"], []).append((source, path))
    roots = [Path(os.environ["NAUS_MIRROR"])] if os.environ.get("NAUS_MIRROR") else []
    held = set()
    for file in (f for root in (*roots, shared_data) for f in sorted(root.rglob("*")) if f.is_file()):
        for source, path in wanted.pop(sha256sum(file), []):
            (into / source / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(file, into / source / path)
            held.add((source, path))
    return held


def _fetch_from_mirror(shared_data: Path, tmp_path: Path, whole: bool) -> tuple[list[str], Path]:
    """`naus data fetch` of gigaword-sample's files whose raw inputs the local mirror holds (`whole`: all of them,
    or the test skips naming what it lacks); returns the derived files and where they are."""
    held = _mirror(shared_data, tmp_path / "mirror")
    profile = yaml.safe_load((ROOT / "config/gigaword-sample.yaml").read_text())
    paths = [p for p in profile_paths(profile) if all(set(r.inputs) <= held for r in recipes_for([p]))]
    lacking = sorted({s for p in profile_paths(profile) for r in recipes_for([p]) for s, _ in set(r.inputs) - held})
    if whole and lacking:
        pytest.skip(f"no local copy of {', '.join(lacking)}'s raw files (NAUS_MIRROR names a full mirror)")
    if not {"gigaword/pool/article.txt", "gigaword/test/input.txt"} <= set(paths):
        pytest.skip(f"{shared_data} holds no copy of the Gigaword raw files")
    config = tmp_path / "profile.yaml"
    config.write_text(yaml.safe_dump({"data": _restricted(profile["data"], paths)}))
    out = tmp_path / "data"
    result = subprocess.run([sys.executable, "-m", "naus", "data", "fetch", str(config), "--to", str(out),
                             "--mirror", (tmp_path / "mirror").as_uri()], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    outputs = [o for r in recipes_for(paths) for o in r.outputs]
    verified = subprocess.run([sys.executable, "-m", "naus", "data", "verify", str(config), "--data-dir", str(out)],
                              cwd=ROOT, capture_output=True, text=True)
    assert verified.returncode == 0 and f"{len(outputs)} files" in verified.stdout, verified.stderr
    return outputs, out


def _restricted(data: dict, paths: list[str]) -> dict:
    """A profile's data section naming only `paths`."""
    kept = {k: v for k, v in data.items() if isinstance(v, str) and v in paths}
    kept["extra_headlines"] = [p for p in data.get("extra_headlines", []) if p in paths]
    kept["peers"] = {k: v for k, v in (data.get("peers") or {}).items() if v in paths}
    return kept


def test_fetch_derives_the_files_the_development_data_holds_the_raw_inputs_of(shared_data, tmp_path):
    outputs, out = _fetch_from_mirror(shared_data, tmp_path, whole=False)
    assert len(outputs) >= 28, outputs  # the pool, the test set, DUC2004, the authors' and four peers' releases
    for output in outputs:
        assert sha256sum(out / output) == manifest()["derived"][output]["sha256"], output
        if output != NEW_RECIPE and (shared_data / output).is_file():  # today's development data
            assert sha256sum(shared_data / output) == manifest()["derived"][output]["sha256"], output


def test_fetch_derives_every_file_gigaword_sample_reads(shared_data, tmp_path):
    outputs, out = _fetch_from_mirror(shared_data, tmp_path, whole=True)
    assert len(outputs) == len(manifest()["derived"])
    for output in outputs:
        assert sha256sum(out / output) == manifest()["derived"][output]["sha256"], output