"""Every raw input a profile needs, from its public origin (`naus/data/manifest.yaml`): fetched, checked, derived.

`naus data fetch PROFILE --to DIR` downloads each raw file with pooch (a registry of sha256s and a cache; chosen over
DVC's `import-url` and Snakemake's storage plugins because it needs no repository or workflow around it and runs the
same from the command line, the library and a rule), each stopped past the size the manifest gives for it, then runs
the recipes of `naus.data.derive` that make the files the profile's configuration names, and writes them only if every
one has the sha256 the manifest commits for it, and only under DIR itself. A file already there with that sha256 is
kept. A file a user must bring (DUC2004) is looked for where they put it and refused, naming it, unless its sha256 is
the manifest's; without it the other files are derived and the ones it makes wait, named.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from naus import NausError
from naus.data.derive import RECIPES, Recipe
from naus.plumbing.files import same_digest, sha256sum
from naus.plumbing.outputs import atomic_open, output_mode
from naus.data.manifest import RawFile, expected, manifest, raw_file
from naus.settings import MAX_DOWNLOAD_MB

log = logging.getLogger(__name__)

RAW = ".raw"  # under --to: the raw files, one folder a source (pooch's cache)


def profile_paths(config: dict) -> list[str]:
    """The files and folders under the data directory that a profile's configuration (its `data` section) reads."""
    data = config.get("data", {})
    gigaword = () if data.get("download") else ("pool_article", "pool_title", "test_article", "test_title")
    paths = [data[k] for k in gigaword if data.get(k)]  # a download's files are inside its archive, not here
    paths += list(data.get("extra_headlines") or [])
    paths += [data[k] for k in ("duc_dir", "published_dir") if data.get(k)]
    paths += list((data.get("peers") or {}).values())
    return paths


def recipes_for(paths: list[str]) -> list[Recipe]:
    """The recipes whose outputs lie at or under `paths`; a path no recipe makes is refused, naming it."""
    def under(output: str, path: str) -> bool:
        return output == path or output.startswith(path.rstrip("/") + "/")

    for path in paths:
        if not any(under(output, path) for recipe in RECIPES for output in recipe.outputs):
            raise NausError(f"{path}: no recipe of the data manifest makes it (naus/data/derive.py lists its outputs)")
    return [recipe for recipe in RECIPES if any(under(o, p) for o in recipe.outputs for p in paths)]


class _Cap:
    """Counts what arrives and stops past `limit` bytes (a stream that never ends, a wrong file): a raw file's size
    from the manifest, a download's --max-mb (`says`: the limit in words)."""

    def __init__(self, address: str, limit: int | None, says: str):
        self.address, self.limit, self.says, self.seen, self.said = address, limit, says, 0, 0

    def update(self, size: int) -> None:
        self.seen += size
        if self.limit is not None and self.seen > self.limit:
            raise NausError(f"{self.address}: more than {self.says}: not the file its sha256 pins; nothing is kept")
        if self.seen >> 26 > self.said:  # a line every 64 MB of a long download (the paper's release: 578 MB)
            self.said = self.seen >> 26
            log.info("%s: %d MB so far", self.address, self.seen >> 20)


CHUNK = 1 << 16


def _downloader(address: str, limit: int | None, says: str):
    """pooch's downloader for the address: an https:// or http:// one streamed by requests (pooch's own, whose
    progress bar counts a fixed chunk size, not the bytes that came), a file:// one (a local mirror) copied; both
    count the bytes that arrive and stop past `limit`, and pooch checks the hash of what arrived either way."""
    cap = _Cap(address, limit, says)

    def stream(url: str):
        if url.startswith("file://"):
            with open(urllib.parse.unquote(urllib.parse.urlparse(url).path), "rb") as source:
                while chunk := source.read(CHUNK):
                    yield chunk
            return
        import requests

        with requests.get(url, stream=True, timeout=60) as response:
            response.raise_for_status()
            yield from response.iter_content(CHUNK)

    def download(url: str, output_file, _pooch) -> None:
        with (open(output_file, "wb") if isinstance(output_file, str) else contextlib.nullcontext(output_file)) as out:
            for chunk in stream(url):
                cap.update(len(chunk))
                out.write(chunk)

    return download


def download(url: str, dest: str | Path, sha256: str, max_mb: int = MAX_DOWNLOAD_MB) -> Path:
    """`naus download`: `url` to `dest` unless a file with the right checksum is already there (`retrieve`)."""
    log.info("downloading %s", url)
    return retrieve(url, sha256, Path(dest), max_mb * 2**20, f"{max_mb} MB (--max-mb)")


def retrieve(address: str, sha256: str, target: Path, limit: int | None = None, says: str = "") -> Path:
    """`address` (https:// or file://) as `target`, by pooch, unless a copy with `sha256` is there: kept only with that
    sha256, stopped past `limit` bytes (`says`: that limit in words), written with the umask's permissions as every
    output is; each failure one line naming the address."""
    import pooch

    pooch.get_logger().setLevel(logging.WARNING)  # its "Downloading ..." line: ours says which file of how many
    try:
        path = Path(pooch.retrieve(address, known_hash=f"sha256:{sha256.lower()}", fname=target.name,
                                   path=target.parent, downloader=_downloader(address, limit, says), progressbar=False))
    except NausError:
        raise
    except ValueError as err:  # pooch's hash mismatch: the file is not kept
        raise NausError(f"{address}: checksum mismatch ({str(err).splitlines()[0]})") from None
    except OSError as err:
        raise NausError(f"{address}: download failed ({err})") from None
    except Exception as err:  # requests' errors: no connection, HTTP 404
        raise NausError(f"{address}: download failed ({type(err).__name__}: {str(err).splitlines()[0][:200]})") \
            from None
    path.chmod(output_mode())  # pooch's temporary file is private: the kept one is as any output
    return path


def mirror_address(mirror: str | None) -> str | None:
    """A mirror as an address: https:// or file:// as given, a plain folder as its file:// address (refused, naming
    it, where there is none)."""
    if not mirror or "://" in mirror:
        return mirror
    if not Path(mirror).is_dir():
        raise NausError(f"{mirror}: no such folder (--mirror takes a folder laid out as SOURCE/PATH, or an https:// or "
                        "file:// address)")
    return Path(mirror).resolve().as_uri()


def _address(raw: RawFile, mirror: str | None) -> str:
    """The file's manifest address, or its place in a mirror laid out as `{mirror}/{source}/{path}`."""
    return f"{mirror.rstrip('/')}/{raw.source}/{raw.path}" if mirror else raw.url


class Unbrought(NausError):
    """A file the user brings (DUC2004) that is not where they were to put it: the recipes that read it wait."""


def fetch_raw(raw: RawFile, cache: Path, mirror: str | None = None, bring: Path | None = None) -> Path:
    """The raw file, downloaded into `cache` (from `mirror` when given) unless a copy with its sha256 is there, or,
    one a user brings, found in `bring` (default: the cache's folder of its source); any copy whose sha256 differs
    is refused, naming it, and every download stops past the manifest's size of the file."""
    if raw.url is None:
        where = (bring or cache / raw.source) / raw.path
        if not where.is_file():
            how = manifest()["sources"][raw.source].get("bring_your_own", "")
            raise Unbrought(f"{where}: missing; {raw.source} is not downloaded: {how}, in {where.parent} or in a "
                            "folder --duc names")
        found = sha256sum(where)
        if not same_digest(found, raw.sha256):
            raise NausError(f"{where}: sha256 {found[:16]}… is not the {raw.source} file the pipeline expects "
                            f"({raw.sha256[:16]}…): a changed or different copy")
        return where
    return retrieve(_address(raw, mirror), raw.sha256, cache / raw.source / raw.path, raw.size,
                    f"its {raw.size} bytes (naus/data/manifest.yaml)")


@dataclass
class Fetched:
    """What `fetch` left: each file's sha256 (`derived` now, `kept`: already the manifest's), and the files that
    wait for one the user brings (`waiting`), with what was said of it."""

    derived: dict[str, str] = field(default_factory=dict)
    kept: dict[str, str] = field(default_factory=dict)
    waiting: list[str] = field(default_factory=list)
    unbrought: str = ""


def fetch(config: dict, to: str | Path, mirror: str | None = None, bring: str | Path | None = None,
          check: bool = True) -> Fetched:
    """Fetch the raw files a profile needs into `{to}/.raw` and derive the files it reads under `to`. A file already
    there with the manifest's sha256 is kept (its raw files are not fetched); a recipe whose brought file (DUC2004)
    is missing waits, the others are derived. Every failure is logged on a line of its own before one error ends the
    fetch, and nothing is written unless every derived file is the manifest's (`check=False` writes them anyway, for
    a new recipe) and lies under `to` itself, through no symbolic link."""
    to = Path(to)
    mirror = mirror_address(mirror)
    recipes = recipes_for(profile_paths(config))
    if not recipes:
        raise NausError("the profile reads no file that naus data fetch derives (its data section names none of "
                        "naus/data/manifest.yaml's)")
    for output in (o for recipe in recipes for o in recipe.outputs):
        _refuse_links(to, output)
    result = Fetched()
    todo = []
    for recipe in recipes:
        digests = {o: _digest_if_right(to / o, o) for o in recipe.outputs} if check else {}
        if check and all(digests.values()):
            result.kept.update(digests)
        else:
            todo.append(recipe)
    needed = sorted({key for recipe in todo for key in recipe.inputs})
    fetched, failures = {}, []
    for number, (source, path) in enumerate(needed, 1):
        log.info("raw file %d/%d: %s %s", number, len(needed), source, path)
        try:
            fetched[source, path] = fetch_raw(raw_file(source, path), to / RAW, mirror, Path(bring) if bring else None)
        except Unbrought as err:
            result.unbrought = result.unbrought or str(err)
        except NausError as err:
            log.error("%s", err)
            failures.append(str(err))
    if failures:
        raise NausError(f"{len(failures)} of {len(needed)} raw files could not be had; the first: {failures[0]}")
    made = {}
    for recipe in todo:
        if not all(key in fetched for key in recipe.inputs):
            result.waiting.extend(recipe.outputs)
            continue
        for output, content in zip(recipe.outputs, recipe.make([fetched[key].read_bytes() for key in recipe.inputs])):
            made[output] = _checked(output, content, check)
    for output, content in made.items():
        with atomic_open(to / output, "wb") as handle:
            handle.write(content)
        result.derived[output] = hashlib.sha256(content).hexdigest()
        log.info("derived %s (%d bytes)", output, len(content))
    return result


def _refuse_links(to: Path, output: str) -> None:
    """A derived file is written at `to/output` itself: a symbolic link on the way (the file, or a folder under `to`)
    would have it written elsewhere, so it is refused, naming it, before anything is fetched."""
    path = to
    for part in Path(output).parts:
        path = path / part
        if path.is_symlink():
            raise NausError(f"{path}: a symbolic link, where naus data fetch writes {output}: it writes only under "
                            f"{to}, never through a link; remove the link or fetch into another folder")


def _digest_if_right(path: Path, output: str) -> str | None:
    """The file's sha256 when it is the manifest's, else None (missing, or another file: derived anew)."""
    if not path.is_file():
        return None
    digest = sha256sum(path)
    return digest if same_digest(digest, expected(output)) else None


def _checked(output: str, content: bytes, check: bool) -> bytes:
    digest = hashlib.sha256(content).hexdigest()
    if check and not same_digest(digest, expected(output)):
        raise NausError(f"{output}: derived with sha256 {digest[:16]}…, the manifest commits {expected(output)[:16]}…: "
                        "a recipe or a raw file changed; nothing written")
    return content


def missing_files(config: dict, data_dir: str | Path) -> list[str]:
    """The files the profile reads that `naus data fetch` derives and `data_dir` lacks (paths under it)."""
    return [o for recipe in recipes_for(profile_paths(config)) for o in recipe.outputs
            if not (Path(data_dir) / o).is_file()]


def verify(config: dict, data_dir: str | Path) -> int:
    """Refuse a data directory whose copy of a file the profile reads is missing or not the one the manifest
    commits, naming the first such file; returns how many were checked (a profile that reads none is refused)."""
    outputs = [output for recipe in recipes_for(profile_paths(config)) for output in recipe.outputs]
    if not outputs:
        raise NausError("the profile reads no file of the data manifest: there is nothing to verify")
    for output in outputs:
        path = Path(data_dir) / output
        if not path.is_file():
            raise NausError(f"{path}: missing; `naus data fetch` derives it")
        if not same_digest(sha256sum(path), expected(output)):
            raise NausError(f"{path}: not the file the data manifest commits for {output} (sha256 "
                            f"{expected(output)[:16]}…): a changed copy; `naus data fetch` derives it anew")
    return len(outputs)
