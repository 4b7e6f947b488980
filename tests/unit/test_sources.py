"""The data manifest and `naus data fetch`: every raw input pinned and checked, every derived file the committed one.

The suite never contacts a manifest address: the fetch runs against a local mirror (`file://`) of the public raw
files, laid out from the copies the development data holds (found by sha256) and, where $NAUS_MIRROR names one, a
full mirror (SOURCE/PATH).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from naus import NausError
from naus.data.derive import RECIPES, ag_news_titles, line_index, pool, reuters_titles
from naus.plumbing.files import sha256sum
from naus.data.manifest import manifest, raw_file
from naus.data.sources import fetch, fetch_raw, profile_paths, recipes_for, verify
from tests.helpers import ROOT, write

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
    """A `file://` mirror (SOURCE/PATH) of the manifest's downloadable raw files that a full mirror ($NAUS_MIRROR) or
    the development data holds (there, copies of public files under other names: found by sha256); returns which."""
    wanted: dict[str, list[tuple[str, str]]] = {}
    for source, entry in manifest()["sources"].items():
        for path, file in entry["files"].items():
            if file.get("url"):
                wanted.setdefault(file["sha256"], []).append((source, path))
    roots = [Path(os.environ["NAUS_MIRROR"])] if os.environ.get("NAUS_MIRROR") else []
    held = set()
    for file in (f for root in (*roots, shared_data) for f in sorted(root.rglob("*")) if f.is_file()):
        for source, path in wanted.pop(sha256sum(file), []):
            (into / source / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(file, into / source / path)
            held.add((source, path))
    return held


def _full_mirror(shared_data: Path, tmp_path: Path) -> Path:
    """A mirror of every downloadable raw file gigaword-sample reads, or the test skips naming what it lacks."""
    held = _mirror(shared_data, tmp_path / "mirror")
    profile = yaml.safe_load((ROOT / "config/gigaword-sample.yaml").read_text())
    lacking = sorted({s for r in recipes_for(profile_paths(profile)) for s, p in r.inputs
                      if raw_file(s, p).url and (s, p) not in held})
    if lacking:
        pytest.skip(f"no local copy of {', '.join(lacking)}'s raw files (NAUS_MIRROR names a full mirror)")
    return tmp_path / "mirror"


def _naus(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "naus", *args], cwd=ROOT, capture_output=True, text=True)


def test_fetch_without_duc2004_derives_the_gigaword_files_and_names_the_tables_that_wait(shared_data, tmp_path):
    """Hostile input, round nine, kind 5 (an outsider's fetch): from the public files alone (a mirror given as a
    plain folder), every file but DUC2004's is derived, each the manifest's; the fetch names the five it leaves and
    the DUC2004 table that waits, and where to put them. With --duc (at its default place, beside the raw files'
    cache) the rest is derived and the files already there are kept."""
    mirror, out = _full_mirror(shared_data, tmp_path), tmp_path / "data"
    result = _naus("data", "fetch", "gigaword-sample", "--to", str(out), "--mirror", str(mirror))
    assert result.returncode == 0, result.stderr[-2000:]
    duc = [o for o in manifest()["derived"] if o.startswith("duc2004/")]
    assert len(duc) == 5 and f"{len(manifest()['derived']) - 5} files derived and 0 already there" in result.stdout
    said = result.stderr.strip().splitlines()[-1]
    assert all(o in said for o in duc) and "the DUC2004 table (table3)" in said, said
    assert f"{out}/.raw/duc2004/input.txt: missing" in said and "--duc" in said, said
    for output in manifest()["derived"]:
        assert (out / output).is_file() is (output not in duc), output
        if output not in duc:
            assert sha256sum(out / output) == manifest()["derived"][output]["sha256"], output
    shutil.copytree(shared_data / "duc2004", out / ".raw/duc2004")
    result = _naus("data", "fetch", "gigaword-sample", "--to", str(out), "--mirror", mirror.as_uri(),
                   "--duc", str(out / ".raw/duc2004"))
    assert result.returncode == 0, result.stderr[-2000:]
    assert f"5 files derived and {len(manifest()['derived']) - 5} already there" in result.stdout, result.stdout
    verified = _naus("data", "verify", "gigaword-sample", "--data-dir", str(out))
    assert verified.returncode == 0 and f"{len(manifest()['derived'])} files" in verified.stdout, verified.stderr


def test_fetch_with_duc2004_derives_every_file_gigaword_sample_reads(shared_data, tmp_path):
    """Kind 5: `--duc` beside `--mirror` (the mirror holds no DUC2004: the user's folder is read), all 34 derived."""
    mirror, out = _full_mirror(shared_data, tmp_path), tmp_path / "data"
    result = _naus("data", "fetch", "gigaword-sample", "--to", str(out), "--mirror", mirror.as_uri(),
                   "--duc", str(shared_data / "duc2004"))
    assert result.returncode == 0 and not result.stderr.count("wait"), result.stderr[-2000:]
    assert f"{len(manifest()['derived'])} files derived" in result.stdout
    for output in manifest()["derived"]:
        assert sha256sum(out / output) == manifest()["derived"][output]["sha256"], output
        if output != NEW_RECIPE and (shared_data / output).is_file():  # today's development data
            assert sha256sum(shared_data / output) == manifest()["derived"][output]["sha256"], output


# -- hostile input, round nine -------------------------------------------------------------------------------------

BOTTLESUM = {"peers": {"bottlesum-ex": "published/bottlesum/duc2004/bottlesum_ex.txt"}}
BOTTLESUM_RAW = ("bottlesum", "outputs/DUC/DUC2004_bottleSumEx.txt")


class _Server:
    """A local HTTP server (the path users take: pooch's HTTP downloader): `files` by path, and an endless stream of
    zeros under /endless/."""

    def __init__(self, files: dict[str, bytes]):
        import http.server
        import threading

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path.startswith("/endless/"):
                    self.send_response(200)
                    self.end_headers()
                    try:
                        while True:
                            self.wfile.write(b"\0" * 65536)
                    except (BrokenPipeError, ConnectionResetError):
                        return
                body = files.get(self.path)
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Length", str(len(body or b"")))
                self.end_headers()
                self.wfile.write(body or b"")

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.address = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def test_an_http_mirror_is_fetched_with_progress_and_stopped_at_the_manifests_size(shared_data, tmp_path):
    """Hostile input, round nine, kind 2 (every download bounded by what it should be) and kind 5: through a local
    HTTP server, the real download path: a release is fetched, checked and derived, each raw file counted as it
    comes; an endless stream stops just past the size the manifest gives for the file, and nothing is kept; a file
    the server lacks is one line naming it."""
    raw = raw_file(*BOTTLESUM_RAW)
    copy = next(f for f in (shared_data / "published/bottlesum/duc2004").iterdir() if sha256sum(f) == raw.sha256)
    server = _Server({f"/bottlesum/{raw.path}": copy.read_bytes()})
    try:
        config = {"profile": "x", "data": BOTTLESUM}
        result = fetch(config, tmp_path / "data", mirror=server.address)
        assert result.derived == {"published/bottlesum/duc2004/bottlesum_ex.txt": raw.sha256}
        with pytest.raises(NausError, match=rf"more than its {raw.size} bytes \(naus/data/manifest.yaml\)"):
            fetch(config, tmp_path / "endless", mirror=f"{server.address}/endless")
        assert not [p for p in (tmp_path / "endless").rglob("*") if p.is_file()]
        with pytest.raises(NausError, match=r"DUC2004_bottleSumEx.txt: download failed \(404 Client Error: Not Found"):
            fetch(config, tmp_path / "missing", mirror=f"{server.address}/nothing-here")
    finally:
        server.close()
    result = _naus("data", "fetch", str(write_profile(tmp_path, BOTTLESUM)), "--to", str(tmp_path / "again"),
                   "--mirror", str(tmp_path / "nowhere"))
    assert result.returncode == 2 and f"{tmp_path}/nowhere: no such folder (--mirror" in result.stderr


def write_profile(tmp_path: Path, data: dict) -> Path:
    """gigaword-sample's profile with `data` for its data section's files (a profile the schema takes)."""
    profile = yaml.safe_load((ROOT / "config/gigaword-sample.yaml").read_text())
    profile["data"] = {k: v for k, v in profile["data"].items() if k not in ("peers", "published_dir", "duc_dir",
                                                                             "extra_headlines")} | data
    profile.pop("duc", None)
    path = tmp_path / "profile.yaml"
    path.write_text(yaml.safe_dump(profile))
    return path


def test_a_mirror_file_that_never_ends_stops_at_the_manifests_size(tmp_path):
    """Kind 2: a `file://` mirror whose file is /dev/zero grows no further than the manifest's size of the file."""
    raw = raw_file(*BOTTLESUM_RAW)
    (tmp_path / "mirror/bottlesum/outputs/DUC").mkdir(parents=True)
    (tmp_path / "mirror/bottlesum" / raw.path).symlink_to("/dev/zero")
    with pytest.raises(NausError, match=rf"DUC2004_bottleSumEx.txt: more than its {raw.size} bytes"):
        fetch({"data": BOTTLESUM}, tmp_path / "data", mirror=str(tmp_path / "mirror"))
    assert not [p for p in (tmp_path / "data").rglob("*") if p.is_file()]


def _mirror_of(shared_data: Path, tmp_path: Path, raws: list[tuple[str, str]]) -> Path:
    for source, path in raws:
        raw = raw_file(source, path)
        copy = next(f for f in shared_data.rglob("*") if f.is_file() and f.stat().st_size == raw.size
                    and sha256sum(f) == raw.sha256)
        (tmp_path / "mirror" / source / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(copy, tmp_path / "mirror" / source / path)
    return tmp_path / "mirror"


def test_a_derived_path_that_is_a_link_is_refused_and_what_it_points_to_untouched(shared_data, tmp_path):
    """Kind 3 (writes only where named): a symbolic link at a derived file, or at a folder on its way, under --to
    would have the fetch write elsewhere: refused before anything is fetched, naming it; the target keeps its bytes."""
    mirror = _mirror_of(shared_data, tmp_path, [BOTTLESUM_RAW])
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("mine\n")
    out = tmp_path / "data"
    (out / "published/bottlesum/duc2004").mkdir(parents=True)
    (out / "published/bottlesum/duc2004/bottlesum_ex.txt").symlink_to(elsewhere)
    with pytest.raises(NausError, match="bottlesum_ex.txt: a symbolic link, where naus data fetch writes"):
        fetch({"data": BOTTLESUM}, out, mirror=mirror.as_uri())
    shutil.rmtree(out)
    (out / "published").mkdir(parents=True)
    (tmp_path / "other").mkdir()
    (out / "published/bottlesum").symlink_to(tmp_path / "other")
    with pytest.raises(NausError, match="published/bottlesum: a symbolic link"):
        fetch({"data": BOTTLESUM}, out, mirror=mirror.as_uri())
    assert elsewhere.read_text() == "mine\n" and not list((tmp_path / "other").iterdir())
    assert not (out / ".raw").exists()


def test_a_derivation_whose_check_fails_leaves_no_file_derived_before_it(shared_data, tmp_path, monkeypatch):
    """Kind 3: every derived file is checked before any is written: one that is not the manifest's leaves the output
    folder without the others too."""
    import naus.data.sources

    data = {"peers": {"bottlesum-ex": "published/bottlesum/duc2004/bottlesum_ex.txt",
                      "bottlesum-self": "published/bottlesum/duc2004/bottlesum_self.txt"}}
    mirror = _mirror_of(shared_data, tmp_path, [BOTTLESUM_RAW, ("bottlesum", "outputs/DUC/DUC2004_bottleSumSelf.txt")])
    real = naus.data.sources.expected
    monkeypatch.setattr(naus.data.sources, "expected", lambda output: "0" * 64 if output.endswith("_self.txt")
                        else real(output))
    with pytest.raises(NausError, match="bottlesum_self.txt: derived with sha256 .* nothing written"):
        fetch({"data": data}, tmp_path / "data", mirror=mirror.as_uri())
    assert not (tmp_path / "data/published").exists()


def test_a_profile_with_no_data_files_is_refused_by_fetch_and_verify(tmp_path):
    """Kind 5: the demo profile reads no file of the data manifest: fetch and verify say so, not success."""
    for args in (("fetch", "demo", "--to", str(tmp_path / "d")), ("verify", "demo", "--data-dir", str(tmp_path))):
        result = _naus("data", *args)
        assert result.returncode == 2 and "the profile reads no file" in result.stderr, result.stderr


@pytest.mark.parametrize("text, said", [
    ("profile: x\ndata: [1, 2]\n", "config key data: [1, 2] is not of type 'object'"),
    ("profile: x\nprofile: y\n", "line 2: key 'profile' given twice"),
    ("profile: [\n", "not valid YAML"),
    ("- a list\n", "a configuration is a mapping of sections, not list"),
])
def test_a_malformed_configuration_is_refused_in_one_line_by_fetch_verify_and_mark_stale(tmp_path, text, said):
    """Kind 6 (messages): data fetch, data verify and mark-stale check a configuration against the schema (as the
    workflow does) and refuse a malformed one in one line naming it, never a traceback."""
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    for args in (("data", "fetch", str(path), "--to", str(tmp_path / "d")),
                 ("data", "verify", str(path), "--data-dir", str(tmp_path))):
        result = _naus(*args)
        assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert said in result.stderr and str(path) in result.stderr, result.stderr

# -- hostile and careless input (the review rounds): each test names the input it spoils and what it did before --

def test_a_download_is_capped_and_written_with_the_umasks_permissions(tmp_path):
    """`naus download` of file:///dev/zero ran until the disk was full, and wrote 0600 where every output is 0644."""
    import hashlib

    from naus.data.sources import download

    source = write(tmp_path / "release.zip", b"x" * (3 << 20))
    with pytest.raises(NausError, match=r"more than 2 MB \(--max-mb\)"):
        download(source.as_uri(), tmp_path / "capped.zip", "0" * 64, max_mb=2)
    assert not (tmp_path / "capped.zip").exists() and not list(tmp_path.glob(".capped.zip.*"))
    old = os.umask(0o022)
    try:
        got = download(source.as_uri(), tmp_path / "kept.zip", hashlib.sha256(source.read_bytes()).hexdigest())
    finally:
        os.umask(old)
    assert got.read_bytes() == source.read_bytes() and (got.stat().st_mode & 0o777) == 0o644


def test_a_download_already_there_with_an_upper_case_checksum_is_kept(tmp_path):
    from naus.data.sources import download

    there = write(tmp_path / "giga.tgz", b"archive")
    assert download("https://example.invalid/giga.tgz", there, hashlib.sha256(b"archive").hexdigest().upper()) == there
