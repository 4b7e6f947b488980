"""A profile's results: every table and figure its configuration declares (`naus.pipeline.tables`), drawn from
the pipeline's metric, timing and output files, results/{profile}/README.md linking them, the HTML
report's landing page, the outputs browser and the fingerprints of what made them."""

from __future__ import annotations

import json
from pathlib import Path

from naus.pipeline import layout
from naus.plumbing.files import read_json
from naus.plumbing.outputs import atomic_open, write_text
from naus.plumbing.markup import markdown_text
from naus.pipeline.fingerprints import fingerprints, stale, warning
from naus.methods import LENGTH_CONTROL, METHODS
from naus.report.claims import claims, claims_caption
from naus.report.figures import beam_points, caption, draw
from naus.report.paper import paper_shaped, shaped_caption
from naus.report.pages import (
    TEXT_TABLES, decode_device, fingerprint_section, landing_page, search_section, table_captions,
    rst, training_section, write_table,
)
from naus.report.rows import METRIC_BOUNDS, METRIC_KEYS, read_metrics, table_frame
from naus.report.sentences import browser, case_study, protocol_scorer
from naus.settings import DataConfig
from naus.pipeline.quoted import paper_table
from naus.pipeline.declarations import PROTOCOLS, Spec
from naus.pipeline.tables import students

__all__ = ["build_report", "METRIC_BOUNDS", "METRIC_KEYS"]


def build_report(metrics: Path, build: Path, out: Path, spec: Spec, released: list[Path] = ()) -> None:
    """Every declared table and figure, results/{profile}/README.md linking them, the HTML report's first
    page, a flat metrics.json and its headline numbers, the fingerprints of what made them (`released`: the released
    outputs the evaluation rescored, among their inputs); a file one of them needs that is missing or misshapen is
    an error naming it, raised before anything is written (the sections from build/ are made first)."""
    # every configured output's metrics read (and checked against its output) before anything is written; files of
    # outputs no longer configured are not published
    flat, empty = {}, set()
    for stem in configured_metrics(spec):
        path = metrics / f"{stem}.json"
        if path.is_file():
            values = read_metrics(path, build / f"{stem}.txt")
            flat[stem] = {k: v for k, v in values.items() if k.startswith("rouge")}
            if values["empty"] == values["n"]:
                empty.add(stem)
    device = decode_device(build, spec.lengths)
    sections = [opening_section(spec, device)]
    # each output scored once
    scorers = {name: protocol_scorer(build, protocol) for name, protocol in PROTOCOLS.items()}
    systems = tuple((METHODS[m].label, m) for m in spec.methods)
    frames, captions = table_frames(spec, metrics, build, scorers, device)
    say_empty(spec, captions, empty)
    beams = next((figure for figure in spec.figures if figure.kind == "beam-size"), None)
    points = {"figure4": beam_points(beams, metrics, build, scorers["test"])} if beams else {}
    table, tests = claims({**dict(frames), **points}, spec)
    frames.insert(0, ("claims", table))
    captions["claims"] = claims_caption(spec.profile, tests)
    frames.append(("case-study", case_study(build, spec.lengths[0], spec.chars, systems)))
    prints = fingerprints(build, {**spec.config, "profile": spec.profile}, released)
    made = [s for s in (search_section(build), training_section(build), fingerprint_section(prints)) if s]
    marks = stale(prints)
    opening = warning(marks)
    written = []
    for name, frame in frames:
        if len(frame):
            written.append(name)
            sections.append(table_section(frame, out, name, opening + captions[name]))
    sections += made
    if not spec.table("table4"):
        sections.append("## Table 3\n\nArchitecture analysis: not configured for this profile "
                        "(config key analysis.lengths is empty).\n")
    figures = [(figure.name, caption(figure, spec)) for figure in spec.figures]
    for figure in spec.figures:
        draw(figure, metrics, build, out / layout.FIGURES, scorers["test"])
    if figures:
        sections.append("## Figures\n\n" + "\n".join(f"- [{markdown_text(text)}]({layout.figure_file(name)})"
                                                    for name, text in figures) + "\n")
        write_text(out / layout.FIGURE_CAPTIONS, "Figures of this profile: " + "; ".join(
            f"``{name}``: {rst(text)}" for name, text in figures) + "\n")
    browsable = browser(build, spec.profile, spec.lengths, spec.chars, systems, out / layout.BROWSER, scorers["test"])
    if browsable:
        write_text(out / layout.BROWSER_CAPTION, "Every test sentence with the output of each system and its "
                                                 "per-sentence ROUGE: pick two systems and sort by their difference, "
                                                 "filter by a word (a static page).\n")
        sections.append("## Every output\n\n`browse.html`, written beside this file: every test sentence with every "
                        "system's output and its ROUGE; sort by the difference of two systems, filter by a word (the "
                        "whole test set's text: committed for the demo only, whose corpus may be copied).\n")
    write_text(out / layout.README, "\n".join(sections))
    drawn = dict(frames)
    whole = drawn.get("table2-full", drawn.get("table2"))  # the headline reads generation 1's rows
    write_text(out / layout.LANDING_PAGE, landing_page(spec.profile, build, whole, written, figures, opening,
                                                  browsable, spec.config.get("note", "")))
    write_records(out, {**prints, "stale": marks}, flat, headline(flat, spec))


def say_empty(spec: Spec, captions: dict[str, str], empty: set[str]) -> None:
    """A row whose every output is empty (an undertrained student) is a row of zeros: its table's caption says so."""
    for table in spec.tables:
        labels = [row.label for group in table.groups for row in group.rows
                  if row.stems and all(_scored(table.protocol.folder, stem) in empty for stem in row.stems)]
        for name in table.names if labels else ():
            captions[name] += f" Every summary of {', '.join(labels)} is empty: its ROUGE is zero."


def configured_metrics(spec: Spec) -> list[str]:
    """The metrics files the configuration makes, as paths under the metrics folder without `.json` (the same path
    under build/ with `.txt` is the output each scores)."""
    return sorted(_scored(p.folder, stem) for p in PROTOCOLS.values() for stem in spec.stems(p.collection))


def _scored(folder: str, stem: str) -> str:
    """An output's path under its protocol's folder, as `layout.metrics_file` places its metrics."""
    return f"{folder}/{stem}" if folder else stem


def opening_section(spec: Spec, device: str) -> str:
    """What every number of the page was made by and how it is scored and timed."""
    opening = (f"# Results: {spec.profile} profile\n\n"
               "Generated by `snakemake --cores all` from the committed code. ROUGE: rouge-score with stemming "
               "(about 0.1 below the perl ROUGE-1.5.5 the paper used). Student timing: "
               f"{markdown_text(device)}, batch {spec.batch_size} and "
               "batch 1 on one thread (the first test sentences one at a time), model forward included, each "
               "table's first-seed student timed alone (nothing else running); the tables' search timing: each "
               "search run again in the same job on the first test sentences, a sentence at a time on one thread. "
               "Speedup: the teacher's time over the student's at batch 1 on one thread, like for like, from that one "
               "job.\n")
    if spec.config.get("note"):  # what the profile's results can show, in its own words
        opening += "\n" + markdown_text(spec.config["note"]) + "\n"
    return opening + choices_paragraph(spec)


def choices_paragraph(spec: Spec) -> str:
    """How the choices behind these numbers were made, and how much labelled data this profile holds out for them:
    what a reviewer asks before trusting a test score."""
    dev, select = (spec.config["data"].get(key, getattr(DataConfig, key)) for key in ("dev_size", "select_size"))
    held = f"the dev split's {dev:,} pool pairs" + (f" and select's {select:,}" if select else "")
    index = Path(layout.benchmark_result("README")).with_suffix(".md")
    return (f"\nHow choices were made: on dev, each a row of `{index}` with its JSON and the profile it was made on "
            "(rows marked \"test\" also read a test set: the regenerations compared there). This profile holds out "
            f"{held}, whose titles score the studies' candidates; the LM reads no title of a searched article. The "
            "test set is scored once per regeneration, for what was chosen.\n")


def table_frames(spec: Spec, metrics: Path, build: Path, scorers: dict, device: str) -> tuple[list, dict[str, str]]:
    """Each declared table's frame and caption by file name: a shaped table (2 and 3) in the paper's shape, then
    whole as its supplementary `-full`."""
    captions, frames = table_captions(spec, device), []
    for table in spec.tables:
        frame = table_frame(table, metrics, build, scorers)
        if table.shaped:
            captions[f"{table.name}-full"] = captions[table.name].replace(
                paper_table(table.name), f"Supplementary {paper_table(table.name)}", 1)
            captions[table.name] = shaped_caption(table, spec, device, frame)
            frames.append((table.name, paper_shaped(table, frame)))
        frames += [(name, frame) for name in table.names[1:]] if table.shaped else [(table.name, frame)]
    return frames, captions


def table_section(frame, out: Path, name: str, caption: str) -> str:
    """A table written in every format, and its README section (a table of test text linked, not inlined)."""
    body = write_table(frame, out / layout.TABLES, name, caption)
    if name in TEXT_TABLES:  # a few test sentences' text: committed beside the README, linked from it
        body = f"[{layout.table_file(name, 'md')}]({layout.table_file(name, 'md')})"
    heading = (f"Supplementary {paper_table(name.removesuffix('-full'))}: every row" if name.endswith("-full")
               else paper_table(name) if name.startswith("table") else name.capitalize().replace("-", " "))
    return f"## {heading}\n\n{markdown_text(caption)}\n\n{body}\n"


def write_records(out: Path, prints: dict, flat: dict, numbers: dict) -> None:
    """fingerprints.json, the flat metrics.json and headline.json."""
    for name, record in ((layout.FINGERPRINTS, prints), (layout.FLAT_METRICS, flat)):
        with atomic_open(out / name) as handle:
            json.dump(record, handle, indent=1, sort_keys=True)
    with atomic_open(out / layout.HEADLINE) as handle:
        json.dump(numbers, handle, indent=1)


def headline(flat: dict[str, dict], spec: Spec) -> dict[str, dict[str, float]]:
    """Per length, the total ROUGE (R-1 + R-2 + R-L) of the teacher and of its students' length control (mean over
    the seeds): the few numbers `dvc metrics show` prints, where every metric in one row would not be read."""
    def total(stems) -> float | None:
        scores = [sum(flat[stem].values()) for stem in stems if stem in flat]
        return round(sum(scores) / len(scores), 2) if scores else None

    return {f"L{n}": {"teacher": total([layout.search("test", n)]),
                      "student": total([d.stem for d in students(spec.seeds, n, LENGTH_CONTROL.name, n)])}
            for n in spec.lengths}
