"""Every raw input a profile needs, from its public origin (`naus/manifest.yaml`): fetched, checked, derived.

`naus data fetch PROFILE --to DIR` downloads each raw file with pooch (a registry of sha256s, a cache, retries and a
progress line; chosen over DVC's `import-url` and Snakemake's storage plugins because it needs no repository or
workflow around it and runs the same from the command line, the library and a rule), then runs the recipes of
`naus.derive` that make the files the profile's configuration names, and writes each only if its sha256 is the one
the manifest commits for it. A file a user must bring (DUC2004) is looked for where they put it and refused, naming
it, unless its sha256 is the manifest's.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import urllib.parse
from pathlib import Path

from naus import NausError
from naus.derive import RECIPES, Recipe
from naus.files import same_digest, sha256sum
from naus.outputs import atomic_open, output_mode
from naus.manifest import RawFile, expected, manifest, raw_file
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
            raise NausError(f"{path}: no recipe of the data manifest makes it (naus/derive.py lists what it derives)")
    return [recipe for recipe in RECIPES if any(under(o, p) for o in recipe.outputs for p in paths)]


class _Cap:
    """pooch's progress bar, used to stop a download past `max_mb` (a stream that never ends, a wrong file)."""

    def __init__(self, address: str, max_mb: int | None):
        self.address, self.limit, self.seen, self.total = address, max_mb, 0, 0

    def update(self, size: int) -> None:
        self.seen += size
        if self.limit is not None and self.seen > self.limit * 2**20:
            raise NausError(f"{self.address}: more than {self.limit} MB (--max-mb): not the file its sha256 pins; "
                            "nothing is kept")

    def reset(self) -> None:
        self.seen = 0

    def close(self) -> None:
        pass


def _downloader(address: str, max_mb: int | None):
    """pooch's downloader for the address: HTTP(S) through pooch's own, a file:// one (a local mirror) copied; both
    stop past `max_mb` megabytes, and pooch checks the hash of what arrived either way."""
    import pooch

    cap = _Cap(address, max_mb)
    if not address.startswith("file://"):
        return pooch.HTTPDownloader(progressbar=cap)

    def copy(url: str, output_file, _pooch) -> None:
        with open(urllib.parse.unquote(urllib.parse.urlparse(url).path), "rb") as source, \
                (open(output_file, "wb") if isinstance(output_file, str) else contextlib.nullcontext(output_file)) \
                as out:
            while chunk := source.read(1 << 20):
                cap.update(len(chunk))
                out.write(chunk)

    return copy


def download(url: str, dest: str | Path, sha256: str, max_mb: int = MAX_DOWNLOAD_MB) -> Path:
    """`naus download`: `url` to `dest` unless a file with the right checksum is already there (`retrieve`)."""
    log.info("downloading %s", url)
    return retrieve(url, sha256, Path(dest), max_mb)


def retrieve(address: str, sha256: str, target: Path, max_mb: int | None = None) -> Path:
    """`address` (https:// or file://) as `target`, by pooch, unless a copy with `sha256` is there: kept only with that
    sha256, stopped past `max_mb` megabytes, written with the umask's permissions as every output is; each failure
    one line naming the address."""
    import pooch

    pooch.get_logger().setLevel(logging.WARNING)  # its "Downloading ..." line: ours says which file of how many
    try:
        path = Path(pooch.retrieve(address, known_hash=f"sha256:{sha256.lower()}", fname=target.name,
                                   path=target.parent, downloader=_downloader(address, max_mb), progressbar=False))
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


def _address(raw: RawFile, mirror: str | None) -> str:
    """The file's manifest address, or its place in a mirror laid out as `{mirror}/{source}/{path}`."""
    return f"{mirror.rstrip('/')}/{raw.source}/{raw.path}" if mirror else raw.url


def fetch_raw(raw: RawFile, cache: Path, mirror: str | None = None, bring: Path | None = None) -> Path:
    """The raw file, downloaded into `cache` unless a copy with its sha256 is there, or (one a user brings) found in
    `bring`; any copy whose sha256 differs is refused, naming it."""
    if raw.url is None and not mirror:
        where = (bring or cache / raw.source) / raw.path
        if not where.is_file():
            how = manifest()["sources"][raw.source].get("bring_your_own", "")
            raise NausError(f"{where}: missing; {raw.source} is not downloaded: {how}")
        found = sha256sum(where)
        if not same_digest(found, raw.sha256):
            raise NausError(f"{where}: sha256 {found[:16]}… is not the {raw.source} file the pipeline expects "
                            f"({raw.sha256[:16]}…): a changed or different copy")
        return where
    return retrieve(_address(raw, mirror), raw.sha256, cache / raw.source / raw.path)


def fetch(config: dict, to: str | Path, mirror: str | None = None, bring: str | Path | None = None,
          check: bool = True) -> dict[str, str]:
    """Fetch the raw files a profile needs into `{to}/.raw` and derive the files it reads under `to`; returns each
    derived file's sha256. Every failure is logged on a line of its own before one error ends the fetch; a derived
    file whose sha256 is not the manifest's is not written (`check=False` writes it anyway, for a new recipe)."""
    to = Path(to)
    recipes = recipes_for(profile_paths(config))
    needed = sorted({key for recipe in recipes for key in recipe.inputs})
    fetched, failures = {}, []
    for number, (source, path) in enumerate(needed, 1):
        log.info("raw file %d/%d: %s %s", number, len(needed), source, path)
        try:
            fetched[source, path] = fetch_raw(raw_file(source, path), to / RAW, mirror,
                                              Path(bring) if bring else None)
        except NausError as err:
            log.error("%s", err)
            failures.append(str(err))
    if failures:
        raise NausError(f"{len(failures)} of {len(needed)} raw files could not be had; the first: {failures[0]}")
    digests = {}
    for recipe in recipes:
        made = recipe.make([fetched[key].read_bytes() for key in recipe.inputs])
        for output, content in zip(recipe.outputs, made):
            digests[output] = _write_checked(to / output, output, content, check)
    return digests


def _write_checked(path: Path, output: str, content: bytes, check: bool) -> str:
    digest = hashlib.sha256(content).hexdigest()
    if check and not same_digest(digest, expected(output)):
        raise NausError(f"{output}: derived with sha256 {digest[:16]}…, the manifest commits {expected(output)[:16]}…: "
                        "a recipe or a raw file changed; nothing written")
    with atomic_open(path, "wb") as handle:
        handle.write(content)
    log.info("derived %s (%d bytes)", output, len(content))
    return digest


def verify(config: dict, data_dir: str | Path) -> int:
    """Refuse a data directory whose copy of a file the profile reads is missing or not the one the manifest
    commits, naming the first such file; returns how many were checked."""
    outputs = [output for recipe in recipes_for(profile_paths(config)) for output in recipe.outputs]
    for output in outputs:
        path = Path(data_dir) / output
        if not path.is_file():
            raise NausError(f"{path}: missing; `naus data fetch` derives it")
        if not same_digest(sha256sum(path), expected(output)):
            raise NausError(f"{path}: not the file the data manifest commits for {output} (sha256 "
                            f"{expected(output)[:16]}…): a changed copy; `naus data fetch` derives it anew")
    return len(outputs)
