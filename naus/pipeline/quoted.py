"""What the papers print, declared once: the rows the tables quote (marked †) and the paper's table numbers our
tables are named by. Every other number in the tables comes from a run; these come from the papers' pages.

Rows (label, Len, R-1, R-2, R-L, s a sentence): Gigaword test (F1), Liu, Huang & Mou (2022)'s Table 1; NACC (NeurIPS
2022), an 8-word student within 50 characters; DUC2004 (recall at 75 bytes), the paper's Table 2.
"""

from __future__ import annotations

Quoted = tuple[str, float | None, float, float, float, float | None]
PAPER_GIGAWORD: dict[int, tuple[Quoted, ...]] = {
    8: (("Lead-8 †", 7.9, 21.39, 7.42, 20.03, None),
        ("Search teacher †", 7.9, 26.17, 9.69, 24.10, 6.846),
        ("NAUS truncate †", 7.8, 27.27, 9.49, 24.96, 0.005),
        ("NAUS length control †", 7.8, 27.94, 9.24, 25.51, 0.041)),
    10: (("Lead-10 †", 9.8, 23.03, 7.95, 21.29, None),
         ("Search teacher †", 9.8, 27.35, 10.25, 24.87, 9.217),
         ("NAUS truncate †", 9.8, 28.24, 10.04, 25.40, 0.005),
         ("NAUS length control †", 9.8, 28.55, 9.97, 25.78, 0.044)),
}
# Our table files (named when numbered otherwise) -> the paper's: Gigaword 1, DUC2004 2, architectures 3, transfer 7.
PAPER_TABLES = {"table2": 1, "table3": 2, "table4": 3, "table6": 7}


def paper_table(name: str) -> str:
    """A table file's heading as the paper numbers the table it tests ("Table 1" for table2)."""
    return f"Table {PAPER_TABLES[name]}"


PAPER_SHOWN = ("Search teacher †", "NAUS truncate †", "NAUS length control †")  # in the paper-shaped tables
PAPER_CHARS: dict[int, tuple[Quoted, ...]] = {8: (("NACC, 50 chars †", None, 27.70, 9.10, 25.27, None),)}
PAPER_DUC: tuple[Quoted, ...] = (
    ("Search teacher †", None, 26.14, 8.03, 22.88, None),
    ("NAUS length control †", None, 26.71, 7.68, 23.06, None),
)
