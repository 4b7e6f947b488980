"""Which of the paper's claims hold here: one row per claim, the paper's figure (its quoted rows,
`naus.pipeline.quoted`), ours (mean ± sd over the seeds and the paired p-value, read from the tables' frames as
drawn), a verdict and one line of why the two differ. What a reader looks for first, generated from the same numbers
as the tables."""

from __future__ import annotations

import pandas as pd

from naus.architectures import ARCHITECTURES, MINILM_PAIRS
from naus.methods import BEAM, LENGTH_CONTROL, SOURCE_ORDER, TRUNCATE, source_order_settings
from naus.settings import TrainConfig
from naus.evaluation.significance import RESAMPLES, holm, paired_p_value
from naus.report.rows import P_VALUE, P_VALUES, SCORES, SIGNIFICANT, p_text
from naus.pipeline.quoted import PAPER_BEAM_GAIN, PAPER_DUC, PAPER_GIGAWORD
from naus.pipeline.declarations import Spec
from naus.pipeline.tables import (AUTHORS, PAIR_FREE, TEACHER_LABEL, cut_label, last_generation, ours_label,
                                  published_label)

LITTLE = 1.5  # "costs little time": at most half again the other decoder's time at the same beam
P_TRUNCATE = P_VALUES[1]  # length control's p against truncation (`naus.report.rows`)
COLUMNS = ["Claim of the paper", "Paper", "Ours", "Verdict", "Why they differ"]
CLAIMS_CAPTION = ("Claims ({profile}): each claim of Liu, Huang & Mou (2022) this profile tests, the paper's figure, "
                  "ours (the paper's method: one generation's students, mean ± sd over the seeds, the paired test's "
                  "p), and whether it holds here; rows marked \"Beyond the paper\" test what the paper does not (a "
                  "later generation, our default decoding), each naming its students.{holm} Read from the tables "
                  "below.")
HOLM = (" Every p-value of this table is Holm-adjusted over its {tests} tests as one family: a claim holds where its "
        "adjusted p < 0.05, so the chance that any verdict here is a false claim stays under 5%. Each test pairs the "
        f"sentences ({RESAMPLES:,} sign flips), a row's per-sentence scores averaged over its seeds.")


def claims_caption(profile: str, tests: int) -> str:
    return CLAIMS_CAPTION.format(profile=profile, holm=HOLM.format(tests=tests) if tests else "")


class Family:
    """The claims' p-values: each row says where its p goes (`add`) and how its verdict reads them (a function of
    the adjusted values); once every row is in, `holm` adjusts them as one family and the rows are written."""

    def __init__(self) -> None:
        self.raw: list[float] = []

    def add(self, p: float) -> int:
        self.raw.append(float(p))
        return len(self.raw) - 1

    def written(self, rows: list[tuple]) -> list[tuple]:
        """Each row with its p placeholders ({p0}, ...) filled by the adjusted p-values and its verdict drawn."""
        adjusted = holm(self.raw)
        shown = {f"p{i}": p_text(value) for i, value in enumerate(adjusted)}
        return [(claim, paper, ours.format_map(shown), verdict(adjusted) if callable(verdict) else verdict, why)
                for claim, paper, ours, verdict, why in rows]


def _total(row) -> float:
    return row[2] + row[3] + row[4]


def _paper(rows, label: str):
    return next(r for r in rows if r[0] == label)


def _row(frame: pd.DataFrame, length: int | None, label: str) -> pd.Series | None:
    rows = frame[frame["System"] == label]
    rows = rows if length is None else rows[rows["L"] == length]
    return rows.iloc[0] if len(rows) else None


def _ours(row: pd.Series, family: Family, column: str = "ΔR", p: str | None = None) -> tuple[str, int | None]:
    """A row's number (± sd) and its p's placeholder in the family (None without a test)."""
    sd = row.get(f"{column} sd")
    text = f"{row[column]:+.2f}" + (f" ± {sd:.2f}" if sd is not None and pd.notna(sd) else "")
    if not (p and p in row and pd.notna(row[p])):
        return text, None
    at = family.add(row[p])
    return text + f" ({{p{at}}})", at


def _verdict(held: list[bool], lengths: list) -> str:
    if all(held):
        return "holds"
    if any(held):
        return "holds at " + ", ".join(f"L = {n}" if isinstance(n, int) else n for n, h in zip(lengths, held) if h) \
            + " only"
    return "does not hold"


def _tested(gains: list[float], at: list[int | None], lengths: list):
    """A verdict drawn from the adjusted p-values: held where the gain is positive and its adjusted p < 0.05."""
    return lambda adjusted: _verdict([g > 0 and a is not None and adjusted[a] < SIGNIFICANT
                                      for g, a in zip(gains, at)], lengths)


def claims(frames: dict[str, pd.DataFrame], spec: Spec) -> tuple[pd.DataFrame, int]:
    """The claims the profile's tables can test (a table it does not draw leaves its claim out), and how many tests
    their p-values were adjusted over. The paper's claims read the paper's method: one generation's students
    (the first's); a later generation is a claim of its own, beyond the paper."""
    lc, tr, later = ours_label(LENGTH_CONTROL.label), ours_label(TRUNCATE.label), last_generation(spec)
    table2, lengths = frames.get("table2-full"), [n for n in spec.lengths if n in PAPER_GIGAWORD]
    table3 = frames.get("table3-full")
    out, family = [], Family()
    if table2 is not None and lengths:
        ours = {n: (_row(table2, n, lc), _row(table2, n, tr), _row(table2, n, TEACHER_LABEL)) for n in lengths}
        default = {n: _row(table2, n, ours_label(SOURCE_ORDER.label, later)) for n in lengths}
        if all(all(r is not None for r in rows) for rows in ours.values()):
            student = _student(spec) + ("" if later else _without_pairs([(n, table2) for n in lengths], later))
            out += _gigaword_claims(ours, lengths, table2, student, family,
                                    default if all(r is not None for r in default.values()) else None,
                                    _whose(spec))
    out += _analysis_claims(frames.get("table4"), frames.get("table6"), table2)
    out += _beam_claims(frames.get("figure4"), family)
    if table3 is not None and (row := _row(table3, None, lc)) is not None:
        paper = _total(_paper(PAPER_DUC, "NAUS length control †")) - _total(_paper(PAPER_DUC, "Search teacher †"))
        text, at = _ours(row, family, p=f"{P_VALUE}teacher")
        out.append(("The student beats its teacher on DUC2004 (ΔR, recall at 75 bytes)", f"{paper:+.2f}", text,
                    _tested([row["ΔR"]], [at], [spec.duc_length]),
                    "the same protocol; ours scored by rouge-score, the paper's by perl ROUGE; " + _student(spec)
                    + ("" if later else _without_pairs([(None, table3)], later))))
    if later and (claim := _later_claim(table2, table3, lengths, spec, family)) is not None:
        out.append(claim)
    if (authors := _authors_claim(table2, table3, lengths, spec.duc_length, lc, _student(spec), family)) is not None:
        out.append(authors)
    return pd.DataFrame(family.written(out), columns=COLUMNS), len(family.raw)


def _beam_claims(points: pd.DataFrame | None, family: Family) -> list[tuple]:
    """Figure 4's two claims, from its points (`naus.report.figures.beam_points`): a wider beam gains ΔR (each
    decoder's, paired by sentence), and length control costs little time over CTC beam search at the same beam."""
    if points is None or not len(points):
        return []
    paper_start, paper_end, gain = PAPER_BEAM_GAIN
    beams = sorted(set(points["Beam"]))
    start, end = (paper_start if paper_start in beams else beams[0]), (paper_end if paper_end in beams else beams[-1])
    found = []
    for decoder, rows in points.groupby("Decoder", sort=False):
        low, high = rows[rows["Beam"] == start].iloc[0], rows[rows["Beam"] == end].iloc[0]
        paired = low["Scores"] is not None and high["Scores"] is not None
        found.append((decoder, high["ΔR"] - low["ΔR"],
                      family.add(paired_p_value(high["Scores"], low["Scores"])) if paired else None))

    def verdict(adjusted: list[float]) -> str:
        held = [d for d, lead, at in found if lead > 0 and at is not None and adjusted[at] < SIGNIFICANT]
        return "holds" if len(held) == len(found) else f"holds for {', '.join(held)} only" if held else \
            "does not hold"

    seeds = int(points["Seeds"].min())
    paper = f"+{gain}" + ("" if (start, end) == (paper_start, paper_end) else f" (beam {paper_start} → {paper_end})")
    out = [(f"A wider beam gains ΔR (Figure 4, beam {start} → {end})", paper,
            "; ".join(f"{d}: {lead:+.2f}" + (f" ({{p{at}}})" if at is not None else "") for d, lead, at in found),
            verdict, f"the same students decoded at both beams (the first generation's, {seeds} seeds), paired by "
            "sentence; length control's dynamic program is exact at beam 1 but for merged repeats (Theorem 1)")]
    column = "Time b=1 (s/sample)" if points["Time b=1 (s/sample)"].notna().all() else "Time (s/sample)"
    timed = points.set_index(["Decoder", "Beam"])
    how = "a sentence at a time on one thread" if "b=1" in column else "in batches"
    if {LENGTH_CONTROL.short, BEAM.short} <= set(points["Decoder"]):
        ratio = {b: timed.loc[(LENGTH_CONTROL.short, b), column] / timed.loc[(BEAM.short, b), column] for b in beams}
        lead = [timed.loc[(LENGTH_CONTROL.short, b), "ΔR"] - timed.loc[(BEAM.short, b), "ΔR"] for b in beams]
        out.append(("Length control costs little time over CTC beam search (Figure 4)", "little",
                    f"length control takes {min(ratio.values()):.2f}× to {max(ratio.values()):.2f}× its time (beams "
                    + ", ".join(map(str, beams)) + ")", "holds" if max(ratio.values()) <= LITTLE else "does not hold",
                    f"each timed in the same job, {how}; little: at most {LITTLE:g}× at the same beam; length "
                    f"control's ΔR above CTC beam search's by {min(lead):+.2f} to {max(lead):+.2f}"))
    return out


def _later_claim(table2: pd.DataFrame | None, table3: pd.DataFrame | None, lengths: list[int], spec: Spec,
                 family: Family) -> tuple | None:
    """Beyond the paper: the last generation (self-training on the one before) against its teacher, at each length
    and on DUC2004, by length control; what it keeps without MiniLM's sentence pairs said beside it."""
    later = last_generation(spec)
    found = [(n, frame, row) for frame, n in [(table2, n) for n in lengths] + [(table3, None)]
             if frame is not None and (row := _row(frame, n, ours_label(LENGTH_CONTROL.label, later))) is not None]
    if not found:
        return None
    where = [n if n is not None else "DUC2004" for n, _, _ in found]
    shown = [_ours(row, family, p=f"{P_VALUE}teacher") for _, _, row in found]
    generation = spec.config["train"].get("generations", 1)
    return (f"Beyond the paper: generation {generation}, learning from generation {generation - 1}, beats its teacher "
            "(ΔR, by length control: Gigaword " + " / ".join(f"L = {w}" if isinstance(w, int) else w for w in where)
            + ")", "–", " / ".join(text for text, _ in shown),
            _tested([row["ΔR"] for _, _, row in found], [at for _, at in shown], where),
            _student(spec, generation) + _without_pairs([(n, frame) for n, frame, _ in found], later))


def _without_pairs(places: list[tuple[int | None, pd.DataFrame]], which: str) -> str:
    """What the claim keeps without an encoder trained on sentence pairs (report.pair_free's rows, where the tables
    show them, at each length or on DUC2004): the pair-free student's ΔR over its own teacher, and its total ROUGE
    against `which` generation's students decoded alike (source order where the table has it, else length control)."""
    found = []
    for length, frame in places:
        labels = frame["System"].astype(str)
        rows = frame[labels.str.contains(PAIR_FREE, regex=False) & ~labels.str.startswith("Search")]
        rows = rows if length is None else rows[rows["L"] == length]
        ours = _row(frame, length, ours_label(SOURCE_ORDER.label, which))
        ours = ours if ours is not None else _row(frame, length, ours_label(LENGTH_CONTROL.label, which))
        if rows.empty or ours is None:
            return ""
        found.append((length, rows.iloc[0]["ΔR"], sum(rows.iloc[0][s] - ours[s] for s in SCORES)))
    where = " / ".join("DUC2004" if n is None else f"L = {n}" for n, _, _ in found)
    return (f"; without MiniLM's sentence pairs (the {PAIR_FREE}): its student "
            + " / ".join(f"{delta:+.2f}" for _, delta, _ in found) + " over its own teacher, "
            + " / ".join(f"{gap:+.2f}" for _, _, gap in found) + f" total ROUGE against this chain's, decoded alike "
            f"({where})") if found else ""


def _student(spec: Spec, generation: int = 1) -> str:
    """Which students a claim reads: the architecture, the generation and its training steps, what MiniLM saw."""
    train = spec.config["train"]
    last, steps = train.get("generations", 1), train.get("max_steps", TrainConfig.max_steps)
    if generation == 1 and last > 1:
        steps = (train.get("first_generation") or {}).get("max_steps", steps)
    arch = ARCHITECTURES[spec.config.get("model", {}).get("arch", "naus")]
    minilm = f" (MiniLM {MINILM_PAIRS})" if arch.frozen or arch.pretrained else ""
    which = "one generation, the paper's method" if generation == 1 else f"generation {generation}"
    return f"ours {arch.label}, {which}, {steps:,} steps{minilm}; the paper's from scratch on a GPU"


def _whose(spec: Spec) -> str:
    """The students the library's default decoding is claimed for: the last generation's."""
    last = spec.config["train"].get("generations", 1)
    return f"generation {last}'s student" if last > 1 else "the student"


def _gigaword_claims(ours: dict, lengths: list[int], table2: pd.DataFrame, student: str, family: Family,
                     default: dict | None, whose: str = "the student") -> list[tuple]:
    """The paper's Gigaword claims (length control, truncation, the teacher), then ours against each peer cut at L
    words: the library's default decoding (`default`, source order, `whose` students) where the profile draws it,
    else length control."""
    slash = " / ".join(map(str, lengths))
    paper = {n: {r[0]: r for r in PAPER_GIGAWORD[n]} for n in lengths}
    gain = [_total(paper[n]["NAUS length control †"]) - _total(paper[n]["Search teacher †"]) for n in lengths]
    over = [_total(paper[n]["NAUS length control †"]) - _total(paper[n]["NAUS truncate †"]) for n in lengths]
    speed = [paper[n]["NAUS length control †"].speedup for n in lengths]  # as printed
    shown = [_ours(ours[n][0], family, p=f"{P_VALUE}teacher") for n in lengths]
    rows = [("The student beats its teacher (ΔR, Gigaword, L = " + slash + ")", " / ".join(f"{g:+.2f}" for g in gain),
             " / ".join(text for text, _ in shown), _tested([ours[n][0]["ΔR"] for n in lengths],
                                                              [at for _, at in shown], lengths),
             student)]
    difference = {n: ours[n][0]["ΔR"] - ours[n][1]["ΔR"] for n in lengths}
    kept = " / ".join(f"{ours[n][1]['Len']:.2f}" for n in lengths)
    at = [family.add(ours[n][0][P_TRUNCATE]) for n in lengths]
    rows.append(("Length control beats truncation (total ROUGE, L = " + slash + ")",
                 " / ".join(f"{o:+.2f}" for o in over),
                 " / ".join(f"{difference[n]:+.2f} ({{p{a}}})" for n, a in zip(lengths, at)),
                 _tested([difference[n] for n in lengths], at, lengths),
                 f"our truncation keeps {kept} words of L (the paper's "
                 + " / ".join(f"{paper[n]['NAUS truncate †'].length:g}" for n in lengths) + ")"))
    seconds = " / ".join(f"{ours[n][2]['Time (s/sample)']:.3f}" for n in lengths)
    faster = [pd.notna(b1 := ours[n][0].get("Time b=1 (s/sample)")) and b1 < ours[n][2]["Time (s/sample)"]
              for n in lengths]  # the times the speedup divides, not its rounding
    rows.append(("The student is faster than the search (speedup, L = " + slash + ")",
                 " / ".join(f"{s}×" for s in speed), " / ".join(str(ours[n][0]["Speedup"]) for n in lengths),
                 _verdict(faster, lengths), "like for like, each a sentence at a time on one thread; the margin is "
                 f"not the paper's: our teacher takes {seconds} s a sentence on a CPU core, the paper's "
                 + " / ".join(f"{paper[n]['Search teacher †'].seconds:g}" for n in lengths)
                 + " s on its GPU: the search, not the student, is what differs"))
    system = {n: default[n] if default else ours[n][0] for n in lengths}
    decoded = f"decoded as the library does ({SOURCE_ORDER.short}, {source_order_settings()})" if default \
        else f"by {LENGTH_CONTROL.short}"
    for peer in [c[len(P_VALUE):] for c in table2.columns if c.startswith(P_VALUE) and c.endswith(" cut")]:
        cut = {n: _row(table2, n, cut_label(peer.removesuffix(" cut"), n)) for n in lengths}
        if all(r is not None for r in cut.values()):
            lead = {n: system[n]["ΔR"] - cut[n]["ΔR"] for n in lengths}
            at = [family.add(system[n][P_VALUE + peer]) for n in lengths]
            rows.append((f"Beyond the paper: {whose} {decoded} beats {peer} at L words (total ROUGE)", "–",
                         " / ".join(f"{lead[n]:+.2f} ({{p{a}}})" for n, a in zip(lengths, at)),
                         _tested([lead[n] for n in lengths], at, lengths),
                         f"{peer.removesuffix(' cut')}'s released outputs, each cut at L words as ours hold exactly L"))
    return rows


def _analysis_claims(table4: pd.DataFrame | None, table6: pd.DataFrame | None,
                     table2: pd.DataFrame | None) -> list[tuple]:
    """Table 3's (NAUS against the encoder-decoders) and Table 7's (length transfer), where the profile draws them."""
    rows = []
    if table4 is not None and len(table4):
        rows.append(_architectures_claim(table4))
    if table6 is not None and len(table6) and table2 is not None:
        if (claim := _transfer_claim(table6, table2)) is not None:
            rows.append(claim)
    return rows


def _transfer_claim(table6: pd.DataFrame, table2: pd.DataFrame) -> tuple | None:
    """The paper's Table 7: a student decoded by length control for another length scores a little below the student
    trained for it (the first generation's, as the transfer's students are) and above the teacher searched for it."""
    found = []
    for system, delta in zip(table6["System"], table6["ΔR"]):
        transfer = system.removesuffix(f", {LENGTH_CONTROL.short}")
        target = transfer.partition(" → ")[2]
        if transfer == system or not target.isdigit() or pd.isna(delta):
            continue  # truncation, a ratio, or no teacher to measure against
        if (native := _row(table2, int(target), ours_label(LENGTH_CONTROL.label))) is not None:
            found.append((transfer, delta, native["ΔR"]))
    if not found:
        return None
    above = [delta > 0 for _, delta, _ in found]
    below = [delta < native for _, delta, native in found]
    verdict = "holds" if all(above) and all(below) else "does not hold" if not any(above) else "holds in part"
    beyond = [name for (name, _, _), b in zip(found, below) if not b]
    return ("A student decoded for another length scores a little below the one trained for it, above the teacher "
            "(Table 7)", "below the native length, above the teacher",
            "; ".join(f"{name}: {delta:+.2f} (native {native:+.2f})" for name, delta, native in found), verdict,
            "ΔR over the teacher searched for the target length, by length control; the first generation's students"
            + (f"; above the native student at {', '.join(beyond)}" if beyond else ""))


def _architectures_claim(table4: pd.DataFrame) -> tuple:
    """NAUS against each of the paper's encoder-decoders this profile trained, at each length: each architecture's
    best decoding, two means within two standard errors of their difference (over seeds) a tie; the ones not trained
    named."""
    best: dict = {}  # (L, architecture) -> its best row
    for _, row in table4.iterrows():
        arch = next((a for a in ARCHITECTURES.values() if row["System"].startswith(f"{a.label},")), None)
        key = (row["L"], arch)
        if arch is not None and pd.notna(row["ΔR"]) and (key not in best or row["ΔR"] > best[key]["ΔR"]):
            best[key] = row
    kind = {a: a.label.split(",")[0] for _, a in best}
    ours = {}
    for (length, arch), row in best.items():
        if arch.name.startswith("naus") and (length not in ours or row["ΔR"] > ours[length]["ΔR"]):
            ours[length] = row
    paper = [ARCHITECTURES[name].label for name in ("ar", "nar", "nar-ctc")]
    trained = {(length, kind[a]): r for (length, a), r in best.items() if kind[a] in paper and length in ours}
    untrained = [label for label in paper if label not in {k for _, k in trained}]
    measured = "; ".join(f"L = {length}: " + ", ".join(f"{kind[a]} {r['ΔR']:+.2f}" for (n, a), r in best.items()
                                                       if n == length) for length in dict.fromkeys(n for n, _ in best))
    claim = ("NAUS beats the autoregressive and non-autoregressive encoder-decoders (Table 3)",
             "NAUS above AR, NAR and NAR-CTC", measured)
    missing = f"; not trained here: {', '.join(untrained)} (from scratch: the gpu-node profile's)" if untrained else ""
    if not ours or not trained:
        return (*claim, "not tested", ("no NAUS student" if not ours else "no encoder-decoder") + missing)

    def standard_error(row: pd.Series) -> float:  # none from one seed
        sd, seeds = row.get("ΔR sd"), row.get("Seeds")
        return float(sd) / float(seeds) ** 0.5 if pd.notna(sd) and pd.notna(seeds) and seeds > 1 else 0.0

    said, outcomes = [], []  # each comparison: NAUS above (1), tied (0) or below (-1)
    for (length, label), row in trained.items():
        margin = ours[length]["ΔR"] - row["ΔR"]
        tie = abs(margin) <= 2 * (standard_error(ours[length]) ** 2 + standard_error(row) ** 2) ** 0.5
        outcomes.append(0 if tie else 1 if margin > 0 else -1)
        said.append(f"L = {length}: {label} {'ties NAUS' if tie else 'below NAUS' if margin > 0 else 'above NAUS'} "
                    f"({margin:+.2f})")
    verdict = ("holds" + (" where tested" if untrained else "") if min(outcomes) == 1 else
               "does not hold" if min(outcomes) == -1 or max(outcomes) < 1 else "holds in part: a tie")
    return (*claim, verdict, "each architecture's best decoding (ΔR), all trained on the same search output with the "
            "same steps; NAUS's lead (margin) a tie within two standard errors over seeds; " + ", ".join(said)
            + missing)


def _authors_claim(table2: pd.DataFrame | None, table3: pd.DataFrame | None, lengths: list[int],
                   duc_length: int | None, label: str, student: str, family: Family) -> tuple | None:
    """Beyond the paper: our students against the authors' released student on the same sentences, each by length
    control (the paper's decoder), rescored by our evaluator: Gigaword at each length, then DUC2004."""
    column, pairs = f"{P_VALUE}{AUTHORS}", []
    for frame, length, released in [(table2, n, n) for n in lengths] + [(table3, None, duc_length)]:
        if frame is None or column not in frame or released is None:
            continue
        ours, theirs = _row(frame, length, label), _row(frame, length, published_label(released))
        if ours is not None and theirs is not None and pd.notna(ours[column]):
            pairs.append((length or "DUC2004", ours["ΔR"] - theirs["ΔR"], family.add(ours[column])))
    if not pairs:
        return None
    return ("Beyond the paper: the student beats the authors' released student, each by length control (total ROUGE)",
            "–", "; ".join(f"{'L = ' if isinstance(where, int) else ''}{where}: {lead:+.2f} ({{p{at}}})"
                           for where, lead, at in pairs),
            lambda adjusted: _verdict([lead > 0 and adjusted[at] < SIGNIFICANT for _, lead, at in pairs],
                                      [where for where, _, _ in pairs]),
            f"the same sentences, scored alike; {student}")
