"""Tables 1 and 2 in the paper's shape: systems as rows, R-1 / R-2 / R-L / ΔR / Len / time / speedup as columns, the
paired tests as marks against a key, a caption a reader takes in at once. Every row and p-value stays in the table's
supplementary `-full` version, from which this one is cut (`naus.pipeline.declarations.Table.main_rows`)."""

from __future__ import annotations

import pandas as pd

from naus.architectures import ARCHITECTURES
from naus.methods import METHODS, default_method
from naus.report.rows import P_VALUE, SCORES, SIGNIFICANT, p_text
from naus.pipeline.quoted import paper_table
from naus.pipeline.declarations import PROTOCOLS, Spec, Table
from naus.pipeline.tables import BEYOND_METHODS, PAPER_METHODS, last_generation, ours_label

COLUMNS = ["L", "System", "Len", *SCORES, "ΔR", "ΔR sd", "Time (s/sample)", "Speedup"]  # the spread of ΔR alone
TEACHER_MARK, PEER_MARKS = "*", ("‡", "§", "¶", "#")  # a peer's mark in the order `Table.marked_peers` lists them


def marks(table: Table) -> dict[str, str]:
    """Each marked p-value column and its mark."""
    return {f"{P_VALUE}teacher": TEACHER_MARK,
            **{f"{P_VALUE}{peer}": mark for peer, mark in zip(table.marked_peers, PEER_MARKS)}}


def paper_shaped(table: Table, frame: pd.DataFrame) -> pd.DataFrame:
    """The table's `main` rows (in their order, each labelled with its generation) with a mark after a system for each
    p < 0.05 it has, and the columns the paper prints (ΔR's spread as "mean ± sd")."""
    shown = frame[frame["System"].isin(table.main_rows)].copy()
    keyed = marks(table)

    def marked(row: pd.Series) -> str:
        found = "".join(mark for column, mark in keyed.items()
                        if column in row and pd.notna(row[column]) and row[column] < SIGNIFICANT)
        return f"{row['System']} {found}" if found else row["System"]

    shown["System"] = shown.apply(marked, axis=1)
    return shown[[column for column in COLUMNS if column in shown]].rename(columns={"Time (s/sample)": "Time (s)"}) \
        .reset_index(drop=True)


def _default_against(peer: str, frame: pd.DataFrame, spec: Spec) -> str:
    """The p of the library's default decoding (its last generation's students) against a marked peer, at each
    length: the comparison a reader of the marks asks for first."""
    arch = ARCHITECTURES[spec.config.get("model", {}).get("arch", "naus")]
    method = METHODS[default_method(arch.family, "words")]
    rows = frame[frame["System"] == ours_label(method.label, last_generation(spec))]
    column = f"{P_VALUE}{peer}"
    if column not in rows or rows[column].isna().all():
        return ""
    values = [p_text(p) + ("" if n is None else f" at L = {n}")
              for n, p in zip(rows.get("L", [None] * len(rows)), rows[column]) if pd.notna(p)]
    return f" ({method.short}: {', '.join(values)})"


def shaped_caption(table: Table, spec: Spec, device: str, frame: pd.DataFrame) -> str:
    """A caption of about 90 words: what is scored and how, what the rows are, the marks' key (with the default
    decoding's p against each marked peer, from the whole `frame`)."""
    last, rows = spec.config["train"].get("generations", 1), table.main_rows

    def decoded(methods) -> str:
        shown = [METHODS[m].short for m in spec.methods if m in methods and any(METHODS[m].label in r for r in rows)]
        return f"{', '.join(shown[:-1])} and {shown[-1]}" if len(shown) > 1 else "".join(shown)

    seeds = f"mean ± sd of {len(spec.seeds)} seeds" if len(spec.seeds) > 1 else "one seed"
    student = (f"the NAUS student ({seeds}): the paper's method (one generation) by {decoded(PAPER_METHODS)}; beyond "
               f"the paper, generation {last} (learning from the one before) by {decoded(BEYOND_METHODS)}"
               if last > 1 else f"the NAUS student ({seeds}) decoded by {decoded(spec.methods)}")
    peers = ", ".join(f"{mark} against {peer}{_default_against(peer, frame, spec)}"
                      for peer, mark in zip(table.marked_peers, PEER_MARKS))
    protocol = PROTOCOLS[table.protocol.collection]
    if table.protocol.collection == "test":
        what = (f"{paper_table(table.name)} ({spec.profile}): Gigaword test, ROUGE F1 (rouge-score, stemmed) of "
                f"summaries of L words: Lead-L, the search teacher and {student}; peers' released "
                "outputs cut at L words")
    else:
        what = (f"{paper_table(table.name)} ({spec.profile}): DUC2004, ROUGE recall of outputs cut to "
                f"{protocol.max_bytes} bytes: Lead, the L = {spec.duc_length} search teacher and {student}; peers' "
                "released outputs")
    return (f"{what}; † the paper's as printed (perl ROUGE, GPU). ΔR: total ROUGE minus the "
            f"teacher's. Time: seconds per sentence, ours at batch {spec.batch_size} on {device}; speedup: the "
            f"teacher's over ours, both at batch 1 on one thread. {TEACHER_MARK} p < {SIGNIFICANT} against "
            "the teacher"
            + (f"; {peers}" if peers else "") + f" (paired randomization). Every row and p-value: "
            f"{table.name}-full.")
