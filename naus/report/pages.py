"""The report's pages: tables as Markdown, CSV and LaTeX with their captions, the sections of
results/{profile}/README.md, and the HTML report's landing page."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from naus.pipeline import layout
from naus.architectures import ARCHITECTURES, MINILM_PAIRS
from naus.plumbing.files import iter_lines, read_json
from naus.plumbing.outputs import write_text
from naus.plumbing.markup import latex, markdown_cell, markdown_text, rst, rst_paragraph
from naus.methods import LENGTH_CONTROL, METHODS, TRUNCATE, source_order_settings
from naus.data.peers import PEERS
from naus.plumbing.provenance import DECODE_TIMING, TRAIN_TIMING, read_history
from naus.report.rows import BOOTSTRAP, P_VALUE, SCORE_SD, SCORES, search_timing
from naus.report.sentences import CASES
from naus.evaluation.significance import EXACT_SPLITS, RESAMPLES
from naus.teacher.shards import read_records
from naus.settings import DataConfig, TrainConfig
from naus.pipeline.quoted import paper_table
from naus.pipeline.declarations import PROTOCOLS, Spec
from naus.pipeline.tables import AUTHORS, LM_READS, other_runs, table4_archs


def search_section(build: Path) -> str | None:
    """How much each split was searched, and at what cost, from the merged search records."""
    lines = ["| split | L | sentences | empty sources | mean summary words | s per sentence (one core) | core-hours |",
             "|---|---|---|---|---|---|---|"]
    for split, length, path in layout.searches(build):
        records = read_records(path, "summary")
        words = [len(r["summary"].split()) for r in records]
        empty = sum(1 for w in words if w == 0)
        sentences, seconds = search_timing(build, split, length) or (0, None)
        per_sentence = seconds / sentences if sentences else None
        lines.append(f"| {split} | {length} | {len(records):,} | {empty} | "
                     f"{sum(words) / max(len(words), 1):.2f} | "
                     f"{'–' if per_sentence is None else f'{per_sentence:.4f}'} | "
                     f"{'–' if seconds is None else f'{seconds / 3600:.2f}'} |")
    if len(lines) == 2:
        return None
    return ("## Search\n\nThe search teacher's output on every split it labels (the pool's is the students' "
            "training data), with its time per sentence as measured by each one-core shard.\n\n"
            + "\n".join(lines) + "\n")


def _display(frame: pd.DataFrame) -> pd.DataFrame:
    """Numbers as the paper prints them: two decimals, signed ΔR, short times, '–' when missing; a
    score with a spread over seeds as "mean ± sd" (the sd columns then go), the interval only where
    some row has one."""

    def missing(value) -> bool:
        return value is None or (isinstance(value, float) and pd.isna(value))

    def cell(column: str, value) -> str:
        if missing(value):
            return "–"
        if column == "ΔR":
            return f"{value:+.2f}"
        if column.startswith("Time"):
            return f"{value:.3g}"
        if column == "Seeds":
            return str(int(value))
        if column.startswith(P_VALUE):
            return "<0.001" if value < 0.001 else f"{value:.3f}"
        if isinstance(value, float):
            return f"{value:.2f}"
        return str(value)

    shown = {c: [cell(c, v) for v in frame[c].tolist()] for c in frame.columns if c not in SCORE_SD + ["ΔR sd"]}
    for column, sd in [*zip(SCORES, SCORE_SD), ("ΔR", "ΔR sd")]:
        if column in frame and sd in frame:
            shown[column] = [text if missing(spread) else f"{text} ± {spread:.2f}"
                             for text, spread in zip(shown[column], frame[sd].tolist())]
    for column in ("ΔR 95% CI", *(c for c in frame.columns if c.startswith(P_VALUE))):
        if column in frame and all(missing(v) for v in frame[column].tolist()):
            del shown[column]
    return pd.DataFrame(shown)


TEX_COMPACT = "\\begin{table}\n\\small\n\\setlength{\\tabcolsep}{4pt}\n"  # the paper-shaped tables fit an ACL page


def write_table(frame: pd.DataFrame, out_dir: Path, name: str, caption: str) -> str:
    """The same table as Markdown, CSV and LaTeX, and its caption alone (`{name}.rst`, for
    Snakemake's HTML report), each escaped for its format; returns the Markdown table."""
    shown = _display(frame)
    markdown = shown.map(markdown_cell).to_markdown(index=False, disable_numparse=True)
    write_text(out_dir / f"{name}.md", f"{markdown_text(caption)}\n\n{markdown}\n")
    write_text(out_dir / f"{name}.csv", frame.to_csv(index=False))
    tex = shown.map(latex).rename(columns=latex).to_latex(index=False, caption=latex(caption), label=f"tab:{name}",
                                                          escape=False)  # booktabs' rules, pdflatex's ASCII
    write_text(out_dir / f"{name}.tex", tex.replace("\\begin{table}\n", TEX_COMPACT, 1))
    write_text(out_dir / f"{name}.rst", rst_paragraph(caption) + "\n")
    return markdown


TEXT_TABLES = ("case-study",)  # tables that quote test sentences: their Markdown linked, not in the README


def _listed(words: list[str]) -> str:
    """`a, b and c`."""
    return " and ".join(filter(None, [", ".join(words[:-1]), words[-1]])) if words else ""


def _first_generation(train: dict) -> str:
    """What the first generation's students train with that the later ones do not (`train.first_generation`)."""
    own = train.get("first_generation") or {}
    later = "the second's" if train.get("generations", 1) == 2 else "the later ones'"
    return (", but the first trains with {}".format(", ".join(
        f"{key} {own[key]} ({later} {train.get(key, '–')})" for key in own)) if own else "")


def _seed_list(seeds: list[int]) -> str:
    consecutive = list(seeds) == list(range(seeds[0], seeds[-1] + 1))
    return f"{seeds[0]}–{seeds[-1]}" if consecutive else ", ".join(map(str, seeds))


def training_section(build: Path) -> str | None:
    """Each student's steps, best dev loss, time and device, from its history and timing files."""
    trained = sorted(build.glob(f"{layout.student_dir('*')}/history.json"))
    if not trained:
        return None
    lines = ["| model | steps | best dev loss | training time | device | unalignable pairs skipped |",
             "|---|---|---|---|---|---|"]
    for path in trained:
        info = read_history(path)
        timing_file = build / layout.train_timing(path.parent.name)
        timing = read_json(timing_file, ("seconds", "device"), {"seconds": (0, 10**9)}, TRAIN_TIMING) \
            if timing_file.is_file() else {}
        history = info["history"]
        best = min((e["dev_loss"] for e in history if "dev_loss" in e), default=None)
        minutes = f"{timing['seconds'] / 60:.1f} min" if timing else "–"
        lines.append(f"| {path.parent.name} | {history[-1]['step'] if history else 0} | "
                     f"{'–' if best is None else f'{best:.3f}'} | {minutes} | "
                     f"{timing.get('device', '–')} | {info.get('skipped_pairs', 0)} |")
    return ("## Training\n\nStudents trained on the pool's search output; the checkpoint kept is the one "
            "with the lowest CTC loss on the dev split's search output.\n\n" + "\n".join(lines) + "\n")


HEADLINE_SYSTEMS = ("Search teacher", TRUNCATE.label, LENGTH_CONTROL.label)


def landing_page(profile: str, build: Path, table2: pd.DataFrame, tables: list[str],
                 figures: list[tuple[str, str]], warning: str = "", browsable: bool = False, note: str = "") -> str:
    """The HTML report's first page (Snakemake's `report:` description, reStructuredText): what the
    profile reproduces, Table 1's headline rows at L = 10 (else the first length) beside the
    paper's, and links to every table and figure (Snakemake names a result's link by its file name)."""
    stats = build / layout.DATA_STATS
    counts = read_json(stats, ("pool_pairs", "test_pairs"), {"pool_pairs": (0, 10**9), "test_pairs": (0, 10**9)}) \
        if stats.is_file() else {}
    pool = build / layout.search_source("pool")
    searched = sum(1 for _ in iter_lines(pool)) if pool.is_file() else 0  # the run's count (search.pool_limit's cut)
    length = 10 if 10 in set(table2["L"]) else int(table2["L"].iloc[0])
    rows = table2[table2["L"] == length].set_index("System")
    title = f"naus: the {profile} profile"
    lines = [title, "=" * len(title), "", *([f"**{rst(warning.strip())}**", ""] if warning else []),
             "This profile reproduces Liu, Huang & Mou (ACL 2022), *Learning Non-Autoregressive Models from Search "
             "for Unsupervised Sentence Summarization*: a search teacher labels unpaired news sentences, an "
             "encoder-only student (NAUS) learns from its output with CTC, and decodes by truncation or by the "
             "length-control dynamic program."
             + (f" Data: {searched:,} of {counts['pool_pairs']:,} pool sentences searched for training, "
                f"{counts['test_pairs']:,} test pairs." if counts and searched else ""), "",
             *([rst_paragraph(note), ""] if note else []),
             f"Headline: Gigaword-style test set, L = {length} (Table 1; ROUGE F1; ΔR = total ROUGE minus the "
             "teacher's; † quoted from the paper):", ""]
    grid = [("System", "ours R-1 / R-2 / R-L", "ours ΔR", "paper † R-1 / R-2 / R-L", "paper † ΔR")]
    for system in HEADLINE_SYSTEMS:
        ours, paper = (rows.loc[name] if name in rows.index else None for name in (f"{system} (ours)", f"{system} †"))
        grid.append((system, *_scores(ours), *_scores(paper)))
    widths = [max(len(row[k]) for row in grid) for k in range(len(grid[0]))]
    rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    for k, row in enumerate(grid):
        cells = " | ".join(c.ljust(w) for c, w in zip(row, widths))
        lines += [rule.replace("-", "=") if k == 1 else rule, f"| {cells} |"]
    lines += [rule, "", "Tables: " + ", ".join(f"`{name}.md`_" for name in tables) + "."]
    if figures:
        lines.append("Figures: " + ", ".join(f"`{name}.png`_ ({caption.rstrip('.')})" for name, caption in figures)
                     + ".")
    if browsable:
        lines.append("Every test output, side by side with its ROUGE (sort by the difference of two systems, filter "
                     "by a word): `browse.html`_.")
    results = layout.profile_dir("results", profile)
    lines += ["", f"Every number comes from the pipeline's own run (``{results}/{layout.README}`` says how it was "
              f"run and timed); ``{results}/{layout.FINGERPRINTS}`` holds the SHA-256 of every search output, "
              "student and decoding, and the settings that made them."]
    return "\n".join(lines) + "\n"


def _scores(row) -> tuple[str, str]:
    if row is None:
        return "–", "–"
    spread = row.get("ΔR sd")
    delta = f"{row['ΔR']:+.2f}" + ("" if spread is None or pd.isna(spread) else f" ± {spread:.2f}")
    return f"{row['R-1']:.2f} / {row['R-2']:.2f} / {row['R-L']:.2f}", delta


def fingerprint_section(prints: dict) -> str | None:
    """The outputs' SHA-256 (the first 16 hex digits; all of them in fingerprints.json)."""
    rows = [(f"search output {name}", output["sha256"]) for name, output in prints["search"].items()]
    rows += [(f"student {name} (best.pt)", output["sha256"]) for name, output in prints["students"].items()]
    if not rows:
        return None
    lines = ["## Fingerprints", "", f"SHA-256 of each stage's outputs ({len(prints['decodings'])} decodings in "
             "`fingerprints.json`, with the settings recorded beside each output): the same commit and settings "
             "reproduce them byte for byte on one machine.", "", "| output | sha256 |", "|---|---|"]
    lines += [f"| {name} | `{(digest or '–')[:16]}` |" for name, digest in rows]
    return "\n".join(lines) + "\n"


def decode_device(build: Path, lengths: list[int]) -> str:
    for length in lengths:
        folder = (build / layout.decoded("test", layout.model(length), "*", "*")).parent
        for path in sorted(folder.glob("*.timing.json")):
            timing = read_json(path, shape=DECODE_TIMING)
            threads = (f", {timing['threads']} thread{'s' if timing['threads'] > 1 else ''}" if "threads" in timing
                       else "")
            return timing.get("device", "cpu") + threads
    return "cpu"


def _students_sentence(spec: Spec) -> str:
    """What a NAUS row's students are: their architecture, seeds and generation."""
    student = spec.config.get("model", {}).get("arch", "naus")
    distilled = (" (the states of MiniLM distilled to three layers on the pool's sources, `naus distil`)"
                 if ARCHITECTURES[student].frozen and spec.config["model"].get("distilled_states") else "")
    runs = (f"The NAUS rows' students: {ARCHITECTURES[student].label}{distilled}. " if student != "naus" else "")
    runs += (f"Each NAUS row is the mean of {len(spec.seeds)} students (seeds {_seed_list(spec.seeds)}, column Seeds: "
             "those run) ± their sd; ΔR's 95% interval resamples seeds and test sentences together where the table "
             f"has p-values (a two-level bootstrap), the seeds alone elsewhere ({BOOTSTRAP:,} resamples)."
             if len(spec.seeds) > 1 else "One student per row (one seed).")
    last = spec.config["train"].get("generations", 1)
    later = "Rows of generation 2" if last == 2 else f"Rows of generation n (2 to {last})"
    teachers = "generation 1's" if last == 2 else "generation n - 1's"
    runs += (f" {later}: students that learn from the length-control summaries of the pool and of dev by {teachers} "
             "students as one model (the mean of their probabilities), not from the search's; everything else as the "
             "first's" + _first_generation(spec.config["train"]) + "." if last > 1 else "")
    return runs + (" Rows of seeds \"as one model\": those students decoded as one, each slot's distribution the mean "
                   "of theirs (one model: no spread)." if spec.config["decode"].get("ensemble") else "")


def _peer_sentences(spec: Spec) -> tuple[str, str]:
    """What each configured peer's rows are and how they are tested; how DUC2004 cuts them."""
    peers = [PEERS[name] for name in (spec.config["data"].get("peers") or {})]
    rescored = " ".join(f"\"{peer.label} (rescored)\": the released outputs of {peer.citation}, scored by our evaluator"
                        + (" (a release on part of a collection on that part, with no paired test)" if peer.subset
                           else "") + f"; p vs {peer.label}: our rows of exactly L words against them, the same test."
                        + (f" Its outputs do not keep the budget of L words (the row says how many are longer; Len "
                           f"is their mean): \"{peer.label} (rescored), cut at L words\" is each cut at L words, as "
                           f"ours hold exactly L; p vs {peer.label} cut: ours against that." if peer.cut else "")
                        for peer in peers)
    duc = PROTOCOLS["duc"]
    duc_cuts = " ".join(f"{peer.label}'s paper cut its outputs at {peer.duc_cut}; here they are cut at "
                        f"{duc.max_bytes} bytes as every row is." for peer in peers
                        if peer.duc_cut not in ("", f"{duc.max_bytes} bytes"))
    return rescored, duc_cuts


# why a truncation row may keep fewer than L words (its Len), and which row to read beside length control
TRUNCATION = ("Truncation keeps the first L words a student emits: a student that stops early (a first generation "
              "trained briefly does) leaves it short of L, as its Len shows, and length control's gain over it is then "
              "mostly those missing words; a later generation keeps nearer L words, the like-for-like row.")


def _rates(spec: Spec) -> str:
    """How Table 3's learning rates were chosen: the same budget on dev for each architecture (config analysis.lr)."""
    rates = spec.config.get("analysis", {}).get("lr") or {}
    if not rates:
        return "no architecture tuned on its own."
    chosen = "; ".join(f"{ARCHITECTURES[arch].label.split(',')[0]} {rate:g}" for arch, rate in rates.items())
    return (f"each architecture's learning rate chosen on dev with the same budget (benchmarks/table3_tuning.py): "
            f"{chosen}, the others {spec.config['train'].get('lr', TrainConfig.lr):g}.")


def table_captions(spec: Spec, device: str) -> dict[str, str]:
    """Each table's caption (a table the profile does not configure has none drawn)."""
    profile, duc_length, duc_chars = spec.profile, spec.duc_length, spec.duc_chars
    batch = spec.batch_size
    samples = spec.config["decode"].get("batch1_samples")
    timing = (f"Students timed on {device} (batch {batch}, and batch 1 on one thread), each row's first-seed student "
              f"decoding alone (nothing else running); the teacher searched again in the same job on the first "
              f"{samples} sentences, a sentence at a time on one thread (its summaries checked to be the search's). "
              "Speedup: the teacher's time over the student's at batch 1 on one thread, both from that one job.")
    quoted = ("Rows marked † are quoted from Liu, Huang & Mou (2022) (perl ROUGE, their GPU); \"published ... "
              f"(rescored)\" rows are the authors' released outputs scored by our evaluator; p vs {AUTHORS}: our "
              "rows of exactly L words against their length control's, the same test.")
    runs = _students_sentence(spec)
    significance = ("p vs teacher, p vs truncate, p vs length control: two-sided p-value of a paired approximate "
                    f"randomization test over the sentences ({RESAMPLES:,} seeded sign flips of the per-sentence "
                    "differences) of the total ROUGE (R-1 + R-2 + R-L), each NAUS row's per-sentence scores averaged "
                    "over its seeds, against the teacher, (length control) against truncation and (length control in "
                    f"source order: exactly L words at increasing source positions, {source_order_settings()}) "
                    "against length control.")
    rescored, duc_cuts = _peer_sentences(spec)
    duc = PROTOCOLS["duc"]
    lm_titles = spec.config["data"].get("lm_titles", DataConfig.lm_titles)
    protocol = f"The LM of the rows marked (ours) reads {LM_READS[lm_titles]}."
    earlier = []  # (whether Table 2 shows it, what its caption says of an earlier run's rows)
    for run in other_runs(spec.config):
        what = (f"the teacher and length-control students (the same seeds) of an earlier run of this profile whose LM "
                f"read {next(LM_READS[v] for k, v in run.expects)}" if run.p_label == "p vs other LM" else
                f"the search teacher (one-stage hill climbing, SLOR and the similarity of word vectors learned from "
                f"the profile's unlabelled text alone) and the students (the same seeds, generations and decoding, on "
                f"frozen states of those word vectors) of this profile's chain without all-MiniLM-L6-v2, "
                f"{MINILM_PAIRS}")
        earlier.append((run.duc, f"Rows labelled \"{run.label}\": {what}, as {run.record} records, not timed "
                        "here, ΔR over their own teacher, p vs teacher from that run's own report (paired by sentence "
                        f"there); {run.p_label}, only for a run of this commit and these training settings (else the "
                        "row says it is not comparable): two-sided permutation test of their seeds' total ROUGE "
                        "against this run's same students (every split of the pooled seeds counted, up to "
                        f"{EXACT_SPLITS:,}), since no sentence pairs two runs' seeds."))
    protocol = " ".join([protocol, *(text for _, text in earlier)])
    other_students = (f"The other students: {len(spec.analysis_seeds)} seeds each." if len(spec.analysis_seeds) > 1
                      else "The other students: one seed each.")
    return {
        "table2": f"{paper_table('table2')} ({profile}): test-set ROUGE {PROTOCOLS['test'].measure} (rouge-score "
        "with stemming) of Lead-L, the search teacher and the NAUS student decoded by "
        f"{_listed([METHODS[m].short for m in spec.methods])}"
        + (", and within a budget of characters by char-control (whole words, at most that many characters with "
           "single spaces; NACC, Liu, Zhang & Mou 2022, quoted †)" if spec.chars else "")
        + f"; ΔR (total ROUGE minus the teacher's), time per sample and speedup over search. {protocol} {runs} "
        + (f"{TRUNCATION} " if TRUNCATE.name in spec.methods else "")
        + f"{significance} {timing} {quoted} {rescored}".rstrip(),
        "table3": f"{paper_table('table3')} ({profile}): DUC2004 (500 inputs, {len(duc.references)} references "
        f"each), ROUGE {duc.measure} of the output cut to {duc.max_bytes} bytes averaged over the references, for "
        f"Lead (the first {duc.max_bytes} bytes), "
        f"the L={duc_length} teacher and student"
        + (f" (also by char-control within {duc_chars} bytes: whole words, nothing for the cut to remove)"
           if duc_chars else "")
        + "; ΔR over the teacher. Outputs keep the input's digits (the models see them as #). "
        + "".join(f"{text} " for duc, text in earlier if duc) + f"{runs} {significance} "
        f"{timing} {quoted} {rescored} {duc_cuts}".rstrip(),
        "table4": f"{paper_table('table4')} ({profile}): students of several architectures trained on the same search "
        f"output and training loop: {_listed([arch.about for arch in table4_archs(spec.config)])}; ΔR over the "
        f"teacher, time per sample. Each trains as {paper_table('table2')}'s first generation (its steps, "
        f"model and training settings, chosen on dev for NAUS), {_rates(spec)} {runs} {other_students} {timing}",
        "table6": f"{paper_table('table6')} ({profile}): length transfer, a model trained for i words decoded for j "
        "words or 50% of each source, by truncation and by length control; ΔR over the teacher searched for j words "
        "where there is one. "
        + (f"Each row: the mean ± sd of the students of seeds {_seed_list(spec.analysis_seeds)}."
           if len(spec.analysis_seeds) > 1 else f"Each row: the student of seed {spec.analysis_seeds[0]}."),
        "case-study": f"Case study ({profile}): {CASES} test sentences chosen with a fixed seed, one from each fifth "
        "of the test set by source length (Sentence: its line in the test set), with the reference, the "
        f"L={spec.lengths[0]} teacher's summary and the seed-0 student's by each decoding method (Words: its length).",
    }
