"""Which of the paper's claims hold here: one row per claim, the paper's figure (its quoted rows, `naus.tables`), ours
(mean ± sd over the seeds and the paired p-value, read from the tables' frames as drawn), a verdict and one line of
why the two differ. What a reader looks for first, generated from the same numbers as the tables."""

from __future__ import annotations

import pandas as pd

from naus.architectures import ARCHITECTURES
from naus.methods import LENGTH_CONTROL, TRUNCATE
from naus.report.rows import P_VALUE, P_VALUES, SIGNIFICANT
from naus.tables import PAPER_DUC, PAPER_GIGAWORD, TEACHER_LABEL, Spec, cut_label, last_generation, ours_label

P_TRUNCATE = P_VALUES[1]  # length control's p against truncation (`naus.report.rows`)
COLUMNS = ["Claim of the paper", "Paper", "Ours", "Verdict", "Why they differ"]
CLAIMS_CAPTION = ("Claims ({profile}): each claim of Liu, Huang & Mou (2022) this profile tests, the paper's figure, "
                  "ours (the last generation's students: mean ± sd over the seeds, the paired test's p), and whether "
                  "it holds here (p < 0.05 where a test applies). Read from the tables below.")


def _total(row) -> float:
    return row[2] + row[3] + row[4]


def _paper(rows, label: str):
    return next(r for r in rows if r[0] == label)


def _row(frame: pd.DataFrame, length: int | None, label: str) -> pd.Series | None:
    rows = frame[frame["System"] == label]
    rows = rows if length is None else rows[rows["L"] == length]
    return rows.iloc[0] if len(rows) else None


def _p(value) -> str:
    return "p < 0.001" if value < 0.001 else f"p {value:.3f}"


def _ours(row: pd.Series, column: str = "ΔR", p: str | None = None) -> str:
    sd = row.get(f"{column} sd")
    text = f"{row[column]:+.2f}" + (f" ± {sd:.2f}" if sd is not None and pd.notna(sd) else "")
    return text + (f" ({_p(row[p])})" if p and p in row and pd.notna(row[p]) else "")


def _verdict(held: list[bool], lengths: list) -> str:
    if all(held):
        return "holds"
    if any(held):
        return "holds at " + ", ".join(f"L = {n}" for n, h in zip(lengths, held) if h) + " only"
    return "does not hold"


def _significant(row: pd.Series, column: str, p: str) -> bool:
    return bool(row[column] > 0 and p in row and pd.notna(row[p]) and row[p] < SIGNIFICANT)


def claims(frames: dict[str, pd.DataFrame], spec: Spec) -> pd.DataFrame:
    """The claims the profile's tables can test (a table it does not draw leaves its claim out)."""
    which = last_generation(spec)
    lc, tr = ours_label(LENGTH_CONTROL.label, which), ours_label(TRUNCATE.label, which)
    table2, lengths = frames.get("table2-full"), [n for n in spec.lengths if n in PAPER_GIGAWORD]
    out = []
    if table2 is not None and lengths:
        ours = {n: (_row(table2, n, lc), _row(table2, n, tr), _row(table2, n, TEACHER_LABEL)) for n in lengths}
        if all(all(r is not None for r in rows) for rows in ours.values()):
            out += _gigaword_claims(ours, lengths, table2, _student(spec))
    out += _analysis_claims(frames.get("table4"), frames.get("table6"))
    table3 = frames.get("table3-full")
    if table3 is not None and (row := _row(table3, None, lc)) is not None:
        paper = _total(_paper(PAPER_DUC, "NAUS length control †")) - _total(_paper(PAPER_DUC, "Search teacher †"))
        out.append(("The student beats its teacher on DUC2004 (ΔR, recall at 75 bytes)", f"{paper:+.2f}",
                    _ours(row, p=f"{P_VALUE}teacher"),
                    _verdict([_significant(row, "ΔR", f"{P_VALUE}teacher")], [spec.duc_length]),
                    "the same protocol; ours scored by rouge-score, the paper's by perl ROUGE"))
    return pd.DataFrame(out, columns=COLUMNS)


def _student(spec: Spec) -> str:
    last = spec.config["train"].get("generations", 1)
    arch = ARCHITECTURES[spec.config.get("model", {}).get("arch", "naus")]
    return f"ours {arch.label}" + (f", {last} generations" if last > 1 else "") + "; the paper's from scratch on a GPU"


def _gigaword_claims(ours: dict, lengths: list[int], table2: pd.DataFrame, student: str) -> list[tuple]:
    slash = " / ".join(map(str, lengths))
    paper = {n: {r[0]: r for r in PAPER_GIGAWORD[n]} for n in lengths}
    gain = [_total(paper[n]["NAUS length control †"]) - _total(paper[n]["Search teacher †"]) for n in lengths]
    over = [_total(paper[n]["NAUS length control †"]) - _total(paper[n]["NAUS truncate †"]) for n in lengths]
    speed = [paper[n]["Search teacher †"][5] / paper[n]["NAUS length control †"][5] for n in lengths]
    rows = [("The student beats its teacher (ΔR, Gigaword, L = " + slash + ")", " / ".join(f"{g:+.2f}" for g in gain),
             " / ".join(_ours(ours[n][0], p=f"{P_VALUE}teacher") for n in lengths),
             _verdict([_significant(ours[n][0], "ΔR", f"{P_VALUE}teacher") for n in lengths], lengths),
             student)]
    difference = {n: ours[n][0]["ΔR"] - ours[n][1]["ΔR"] for n in lengths}
    kept = " / ".join(f"{ours[n][1]['Len']:.2f}" for n in lengths)
    rows.append(("Length control beats truncation (total ROUGE, L = " + slash + ")",
                 " / ".join(f"{o:+.2f}" for o in over),
                 " / ".join(f"{difference[n]:+.2f} ({_p(ours[n][0][P_TRUNCATE])})" for n in lengths),
                 _verdict([difference[n] > 0 and ours[n][0][P_TRUNCATE] < SIGNIFICANT for n in lengths],
                          lengths),
                 f"our truncation keeps {kept} words of L (the paper's "
                 + " / ".join(f"{paper[n]['NAUS truncate †'][1]:g}" for n in lengths) + ")"))
    seconds = " / ".join(f"{ours[n][2]['Time (s/sample)']:.3f}" for n in lengths)
    rows.append(("The student is faster than the search (speedup, L = " + slash + ")",
                 " / ".join(f"{s:.0f}×" for s in speed), " / ".join(str(ours[n][0]["Speedup"]) for n in lengths),
                 "not comparable", f"our teacher takes {seconds} s a sentence on a CPU core, the paper's "
                 + " / ".join(f"{paper[n]['Search teacher †'][5]:g}" for n in lengths)
                 + " s on its GPU: the search, not the student, is what differs"))
    for peer in [c[len(P_VALUE):] for c in table2.columns if c.startswith(P_VALUE) and c.endswith(" cut")]:
        cut = {n: _row(table2, n, cut_label(peer.removesuffix(" cut"), n)) for n in lengths}
        if all(r is not None for r in cut.values()):
            lead = {n: ours[n][0]["ΔR"] - cut[n]["ΔR"] for n in lengths}
            rows.append((f"Beyond the paper: the student beats {peer} at L words (total ROUGE)", "–",
                         " / ".join(f"{lead[n]:+.2f} ({_p(ours[n][0][P_VALUE + peer])})" for n in lengths),
                         _verdict([lead[n] > 0 and ours[n][0][P_VALUE + peer] < SIGNIFICANT for n in lengths], lengths),
                         f"{peer.removesuffix(' cut')}'s released outputs, each cut at L words as ours hold exactly L"))
    return rows


def _analysis_claims(table4: pd.DataFrame | None, table6: pd.DataFrame | None) -> list[tuple]:
    """Table 4's (NAUS against the encoder-decoders) and Table 6's (length transfer), where the profile draws them."""
    rows = []
    if table4 is not None and len(table4):
        best: dict = {}
        for label, delta in zip(table4["System"], table4["ΔR"]):
            arch = next((a for a in ARCHITECTURES.values() if label.startswith(f"{a.label},")), None)
            if arch is not None and pd.notna(delta):
                best[arch] = max(best.get(arch, delta), delta)
        ours = max((d for a, d in best.items() if a.name.startswith("naus")), default=None)
        others = [d for a, d in best.items() if not a.name.startswith("naus")]
        tested = any(a.name == "ar" for a in best) and ours is not None
        rows.append(("NAUS beats the autoregressive and non-autoregressive encoder-decoders (Table 4)",
                     "NAUS above AR, NAR and NAR-CTC", "; ".join(f"{a.label.split(',')[0]} {d:+.2f}"
                                                                for a, d in best.items()),
                     ("holds" if ours > max(others) else "does not hold") if tested else "not tested",
                     "each architecture's best decoding (ΔR)" if tested else "no AR student here: on two CPU cores "
                     "only the students on frozen states train; those from scratch are the gpu-node profile's"))
    if table6 is not None and len(table6):
        pairs = []
        for label, delta in zip(table6["System"], table6["ΔR"]):
            if label.endswith(f", {LENGTH_CONTROL.short}") and pd.notna(delta):
                cut = table6[table6["System"] == label.replace(LENGTH_CONTROL.short, TRUNCATE.short)]["ΔR"]
                if len(cut) and pd.notna(cut.iloc[0]):
                    pairs.append((label.rsplit(",", 1)[0], delta - cut.iloc[0]))
        if pairs:
            rows.append(("A student decodes another length better by length control than by truncation (Table 6)",
                         "length control above truncation", "; ".join(f"{a}: {d:+.2f}" for a, d in pairs),
                         "holds" if all(d > 0 for _, d in pairs) else "does not hold",
                         "a student stopping early leaves truncation short of the target; length control fills it"))
    return rows
