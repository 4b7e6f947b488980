"""Other unsupervised summarizers whose released outputs we rescore beside ours, each declared once: its
files (checked by SHA-256, so a configured file is the release and nothing else), the scores its paper
reports (our rescoring is checked against them) and how it cut DUC2004. A profile points at a peer's
directory under its data directory (config key `data.peers`); the files are never committed (they
quote the test sets). Plain Python: the workflow, the tables and the command line read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from naus import NausError
from naus.files import read_lines, sha256sum

GIGAWORD, DUC = "test", "duc"  # the collections a peer's output covers (the splits our tables score)


@dataclass(frozen=True)
class Peer:
    label: str  # its rows' name in Tables 2 and 3, its column `p vs {label}` and its point in the figures
    citation: str
    files: dict[tuple[str, int], tuple[str, str]]  # (collection, summary length) -> (file in its directory, sha256)
    reported: dict[tuple[str, int], tuple[float, float, float]]  # R-1 / R-2 / R-L its paper reports on them
    duc_cut: str  # how its DUC2004 scores were cut (ours: 75 bytes)


PEERS = {
    "msrp": Peer(
        "MSRP", "Hyun et al., Findings of EMNLP 2022 (repository dmhyun/MSRP, commit fd71def)",
        {(GIGAWORD, 8): ("msrp_length_Giga_Len8.txt", "662da5fa81c5332656f3e05fb8b08033fee4aa714f65d800e43d5ea159d9d3d0"),
         (GIGAWORD, 10): ("msrp_length_Giga_Len10.txt", "4986e4483bb3a493dbad907159ba0c2938fc00ab7da0d057841938735b787859"),
         (DUC, 13): ("msrp_length_DUC2004_Len13.txt", "87aac0a33193bf6bae61beee32a280111853b3f941b1770cdaceafe368383429")},
        {(GIGAWORD, 8): (29.09, 11.46, 26.80), (GIGAWORD, 10): (29.94, 11.86, 27.12), (DUC, 13): (27.88, 9.35, 24.49)},
        "75 characters"),
}


def peer(name: str) -> Peer:
    if name not in PEERS:
        raise NausError(f"unknown peer {name!r}: the peers are {sorted(PEERS)}")
    return PEERS[name]


def check_output(name: str, collection: str, length: int, path: str | Path, source: str | Path) -> list[str]:
    """A peer's released output, refused unless it is the declared file (SHA-256) with a line per source line."""
    declared = peer(name).files.get((collection, length))
    if declared is None:
        raise NausError(f"{peer(name).label} released no output on {collection} at L = {length} (naus.evaluation.peers)")
    found = sha256sum(path)
    if found != declared[1]:
        raise NausError(f"{path}: sha256 {found[:16]}… is not {peer(name).label}'s released {declared[0]} "
                        f"({declared[1][:16]}…)")
    lines, sources = read_lines(path), read_lines(source)
    if len(lines) != len(sources):
        raise NausError(f"{path}: {len(lines)} lines, but {source} has {len(sources)}: not this collection's output")
    return lines
