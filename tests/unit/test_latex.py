"""The paper-shaped Table 1 builds with pdflatex on an ACL page (two columns of 455 pt in all, `table*` across both)
and fits it: no character pdflatex cannot read, no line over the page's width. Skipped where LaTeX is not installed
(`apt-get install texlive-latex-base texlive-latex-recommended`)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from naus.plumbing.markup import latex
from naus.report import build_report
from tests.unit.test_report import complete, metrics, profile, write

ACL_PAGE = r"""\documentclass[11pt,twocolumn]{article}
\usepackage[textwidth=455pt,columnsep=18pt]{geometry}
\usepackage[T1]{fontenc}
\usepackage{booktabs}
\begin{document}
\small
%s
\end{document}
"""


def test_every_character_a_table_writes_is_ascii_for_pdflatex():
    written = latex("SEQ³ (rescored) ± ΔR † ‡ 7× café – 中 #_&")
    assert written.isascii() and r"$\pm$" in written and r"\#\_\&" in written and "cafe" in written


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed (texlive-latex-base)")
def test_table2_builds_at_acl_page_width(tmp_path):
    m, b, declared = complete(tmp_path, profile(data={"peers": {"msrp": "published/msrp"}}), sentences=30)
    write(m / "peers/msrp/test-L10.json", metrics(29.88, 11.84, 27.10, 9.92))
    write(b / "peers/msrp/test-L10.txt", "".join(f"word{i} zeta\n" for i in range(30)))
    write(b / "peers/msrp/test-L10-cut.txt", "".join(f"word{i} zeta\n" for i in range(30)))
    build_report(m, b, tmp_path / "out", declared)
    table = (tmp_path / "out/tables/table2.tex").read_text()
    assert table.isascii()
    wide = table.replace(r"\begin{table}", r"\begin{table*}").replace(r"\end{table}", r"\end{table*}")
    (tmp_path / "paper.tex").write_text(ACL_PAGE % wide)
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "paper.tex"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    log = (tmp_path / "paper.log").read_text(errors="replace")
    assert run.returncode == 0, log[-2000:]
    assert "Overfull \\hbox" not in log, log[log.find("Overfull"):][:500]
