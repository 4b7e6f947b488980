"""Other unsupervised summarizers whose released outputs we rescore beside ours, each declared once: its
files (checked by SHA-256, so a configured file is the release and nothing else), the scores its paper
reports (our rescoring is checked against them) and how it cut DUC2004. A profile points at a peer's
directory under its data directory (config key `data.peers`); the files are never committed (they
quote the test sets). Plain Python: the workflow, the tables and the command line read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from naus import NausError
from naus.evaluation.released import read_index, reordered
from naus.plumbing.files import read_lines, same_digest, sha256sum
from naus.data.manifest import raw_file

GIGAWORD, DUC = "test", "duc"  # the collections a peer's output covers (the splits our tables score)


@dataclass(frozen=True)
class Peer:
    label: str  # its rows' name in Tables 1 and 2, its column `p vs {label}` and its point in the figures
    citation: str
    # (collection, summary length) -> (file in its directory, the released file: its source and path in the data
    # manifest, which holds its sha256)
    files: dict[tuple[str, int], tuple[str, tuple[str, str]]]
    reported: dict[tuple[str, int], tuple[float, float, float]]  # R-1 / R-2 / R-L its paper reports (where entered)
    duc_cut: str  # how its paper cut its DUC2004 outputs (ours: 75 bytes); "" where none or not recorded here
    # (collection, summary length) -> the file in its directory that puts its line k at the collection's line
    # index[k] (outputs released in their authors' order)
    index: dict[tuple[str, int], str] = field(default_factory=dict)
    # (collection, summary length) -> which part of the collection its output covers, where not all of it: its
    # index file then gives each line's line of the collection, and it is scored on those lines only (no paired test)
    subset: dict[tuple[str, int], str] = field(default_factory=dict)
    # the collections where its outputs do not keep the word budget L, so that a second row shows them cut at L
    # words (the budget ours keep); DUC2004's 75 bytes cut every output alike
    cut: tuple[str, ...] = ()


_NACC = "HC_8_ctc_char_length_control_evaluation_result/test"
_CONTEXTUAL_MATCH = "results_elmo_giga/smry_input_unk_Ks10_clust1_ELcat_eosavg0_n6_ns10_nf300_a0.1_b1.0_single.txt"
PEERS = {
    "msrp": Peer(
        "MSRP", "Hyun et al., Findings of EMNLP 2022 (repository dmhyun/MSRP, commit fd71def)",
        {(GIGAWORD, 8): ("msrp_length_Giga_Len8.txt",
                         ("msrp", "outputs/msrp/msrp_length_Giga_Len8.txt")),
         (GIGAWORD, 10): ("msrp_length_Giga_Len10.txt",
                          ("msrp", "outputs/msrp/msrp_length_Giga_Len10.txt")),
         (DUC, 13): ("msrp_length_DUC2004_Len13.txt",
                     ("msrp", "outputs/msrp/msrp_length_DUC2004_Len13.txt"))},
        {(GIGAWORD, 8): (29.09, 11.46, 26.80), (GIGAWORD, 10): (29.94, 11.86, 27.12), (DUC, 13): (27.88, 9.35, 24.49)},
        "75 characters", cut=(GIGAWORD,)),
    "nacc": Peer(
        "NACC", "Liu, Zhang & Mou, NeurIPS 2022 (repository MANGA-UOFA/NACC, commit 6eefea8): the student of 8-word "
        "search output within 50 characters",
        {(GIGAWORD, 8): ("HC_8_char_length_control_50.txt",
                         ("nacc", f"{_NACC}/generated_summary.txt"))},
        {(GIGAWORD, 8): (27.70, 9.10, 25.27)}, "",
        index={(GIGAWORD, 8): "line_to_test_index.txt"}),
    "contextual-match": Peer(
        "Contextual Match", "Zhou & Rush, ACL 2019 (repository jzhou316/Unsupervised-Sentence-Summarization, commit "
        "2f62975): no length budget, 9.3 words on average, shown with the L = 10 rows",
        {(GIGAWORD, 10): ("contextual_match.txt", ("contextual-match", _CONTEXTUAL_MATCH))},
        {}, ""),
    "bottlesum-ex": Peer(
        "BottleSum Ex", "West et al., EMNLP 2019 (repository peterwestuw/BottleSum, commit c6021df): the unsupervised "
        "extractive BottleSum^Ex, cased and detokenised as released, shown with the L = 13 rows",
        {(DUC, 13): ("bottlesum_ex.txt", ("bottlesum", "outputs/DUC/DUC2004_bottleSumEx.txt"))}, {}, ""),
    "bottlesum-self": Peer(
        "BottleSum Self", "West et al., EMNLP 2019 (repository peterwestuw/BottleSum, commit c6021df): the "
        "self-supervised BottleSum^Self, cased and detokenised as released, shown with the L = 13 rows",
        {(DUC, 13): ("bottlesum_self.txt", ("bottlesum", "outputs/DUC/DUC2004_bottleSumSelf.txt"))},
        {}, ""),
    "seq3": Peer(
        "SEQ³", "Baziotis et al., NAACL 2019 (repository cbaziotis/seq3, commit 2c480f3): no length budget, 14.9 "
        "words on average on Gigaword (shown with the L = 10 rows) and 17.2 on DUC2004 (with the L = 13 rows)",
        {(GIGAWORD, 10): ("gigaword/seq3_full_min8.txt",
                          ("seq3", "evaluation/hyps/gigaword_seq3.full_preds.txt")),
         (DUC, 13): ("duc2004/seq3_full.txt", ("seq3", "evaluation/hyps/DUC2004_seq3.full_preds.txt"))},
        {(GIGAWORD, 10): (25.39, 8.21, 22.68)}, "", index={(GIGAWORD, 10): "gigaword/line_to_test_index.txt"},
        subset={(GIGAWORD, 10): "its 1,897 test inputs of more than 8 tokens"}),
}


def peer(name: str) -> Peer:
    if name not in PEERS:
        raise NausError(f"unknown peer {name!r}: the peers are {sorted(PEERS)}")
    return PEERS[name]


def check_output(name: str, collection: str, length: int, path: str | Path, source: str | Path,
                 index: str | Path | None = None) -> list[str]:
    """A peer's released output, refused unless it is the declared file (SHA-256) with a line per source line; put
    in the collection's order by `index` where the peer declares one."""
    declared = peer(name).files.get((collection, length))
    if declared is None:
        raise NausError(f"{peer(name).label} released no output on {collection} at L = {length} "
                        "(naus.data.peers)")
    found, released = sha256sum(path), raw_file(*declared[1]).sha256
    if not same_digest(found, released):
        raise NausError(f"{path}: sha256 {found[:16]}… is not {peer(name).label}'s released {declared[0]} "
                        f"({released[:16]}…)")
    lines, sources = read_lines(path), read_lines(source)
    if ((collection, length) in peer(name).index) != (index is not None):
        raise NausError(f"{peer(name).label}'s output on {collection} at L = {length} is "
                        + (f"in its authors' order: give its {peer(name).index[(collection, length)]} (--index)"
                           if index is None else "in the collection's order: it takes no --index"))
    if (collection, length) in peer(name).subset:
        read_index(index, len(lines), len(sources))  # scored on those lines (`naus evaluate --lines`): kept as released
        return lines
    if index is not None:
        lines = reordered(lines, index)
    if len(lines) != len(sources):
        raise NausError(f"{path}: {len(lines)} lines, but {source} has {len(sources)}: not this collection's output")
    return lines
