"""The tables' numbers: each declared row (`naus.pipeline.tables`) read from its metric and timing files, its
seeds averaged, ΔR over its group's teacher, and the paper's rows quoted beside ours.

Rows marked † are quoted from Liu, Huang & Mou (2022) (perl ROUGE-1.5.5, GPU timing); every other
number is read from files the pipeline wrote, and a file a row needs that is missing is an error
naming it. ΔR is total ROUGE (R-1 + R-2 + R-L) minus the search teacher's: ours for our rows and the
rescored published outputs, the paper's for †.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import numpy as np
import pandas as pd

from naus import NausError
from naus.pipeline import layout
from naus.plumbing.files import read_json, read_lines
from naus.pipeline.fingerprints import recorded_settings
from naus.pipeline.quoted import Quoted
from naus.plumbing.provenance import code_state
from naus.methods import LENGTH_CONTROL, METHODS, SOURCE_ORDER, TRUNCATE
from naus.evaluation.significance import unpaired_p_value
from naus.report.sentences import SentenceTotals, add_p_values
from naus.settings import MAX_POSITIONS
from naus.teacher.shards import read_records
from naus.pipeline.declarations import Group, Row, Table
from naus.pipeline.tables import ours_label

METRIC_KEYS = ("rouge1", "rouge2", "rougeL", "avg_words")
# What a metrics or timing file may hold (ROUGE in percent): anything else is refused, naming the file and key.
METRIC_BOUNDS = {"rouge1": (0, 100), "rouge2": (0, 100), "rougeL": (0, 100), "avg_words": (0, MAX_POSITIONS)}
ROUNDING = 0.01  # the metrics files' numbers are rounded to two decimals
# a decoding takes more than a microsecond a sentence: a timing below it would print an infinite speedup
TIMING_BOUNDS = {key: (1e-6, 86_400) for key in ("seconds_per_sample", "batch1_seconds_per_sample")}
# A student's row is the mean over its seeds; the spread columns are filled where there are several.
SPREAD = ["ΔR sd", "ΔR 95% CI", "Seeds"]
SCORES = ("R-1", "R-2", "R-L")
SCORE_SD = [f"{score} sd" for score in SCORES]  # shown as "mean ± sd" in the Markdown and LaTeX tables
# Paired significance of a NAUS row over the test sentences (naus.evaluation.significance): against the teacher,
# length control against truncation, length control in source order against length control (and both against each
# rescored peer: a `p vs {peer}` column of its own).
P_VALUE = "p vs "
P_VALUES = ["p vs teacher", "p vs truncate", "p vs length control"]
SIGNIFICANT = 0.05  # the level the paper-shaped tables' marks and the claims' verdicts read a p-value at
COLUMNS = ["System", "Len", *SCORES, "ΔR", *SPREAD, "Time (s/sample)", "Time b=1 (s/sample)", "Speedup",
           *P_VALUES, *SCORE_SD]
BOOTSTRAP = 1000  # resamples for ΔR's 95% interval (of seeds and sentences together where a table tests its rows)


def p_text(value: float) -> str:
    """A p-value as a caption or a claim writes it."""
    return "p < 0.001" if value < 0.001 else f"p {value:.3f}"


def read_metrics(path: Path, hypothesis: Path | None = None) -> dict:
    """An output's ROUGE, refused (naming the file) where its numbers cannot be one scoring's: R-2 or R-L above R-1
    (a bigram or a subsequence shared is a word shared, in every sentence), more empty summaries than sentences, or
    a count of sentences that is not its output's (`hypothesis`, where the build has it)."""
    values = read_json(path, (*METRIC_KEYS, "n", "empty"), {**METRIC_BOUNDS, "n": (1, 10**9), "empty": (0, 10**9)})
    for key in ("rouge2", "rougeL"):
        if values[key] > values["rouge1"] + ROUNDING:
            raise NausError(f"{path}: {key} {values[key]} is above rouge1 {values['rouge1']}: "
                            "not one scoring's numbers")
    if values["empty"] > values["n"]:
        raise NausError(f"{path}: {values['empty']} empty summaries of {values['n']}: not one scoring's numbers")
    if hypothesis is not None and hypothesis.is_file():
        with open(hypothesis, "rb") as handle:
            lines = sum(1 for _ in handle)
        if lines != values["n"]:
            raise NausError(f"{path}: n {values['n']} is not the {lines} lines of {hypothesis}, the output it scores")
    return values


def total(row: dict) -> float:
    return row["R-1"] + row["R-2"] + row["R-L"]


def first_timing(build: Path, stems: tuple[str, ...]) -> dict:
    """A student's time: its first seed's decoding, timed alone (the workflow times each table's first seed)."""
    return read_json(build / f"{stems[0]}.timing.json", ("seconds_per_sample",), TIMING_BOUNDS)


def search_timing(build: Path, split: str, length: int) -> tuple[int, float] | None:
    """Sentences searched and their seconds (one CPU core per shard), summed over the shards' timing files."""
    paths = sorted(build.glob(layout.search_timings(split, length)))
    parts = [read_json(p, ("sentences", "seconds"), {"sentences": (0, 10**9), "seconds": (0, 10**9)}) for p in paths]
    for path, part in zip(paths, parts):
        if not float(part["sentences"]).is_integer():
            raise NausError(f"{path}: sentences must be a whole number, got {part['sentences']}")
    return (sum(p["sentences"] for p in parts), sum(p["seconds"] for p in parts)) if parts else None


def teacher_seconds(build: Path, split: str, length: int) -> float | None:
    """Mean seconds per sentence of the search as the time job ran it again (one thread, the machine to itself,
    beside the students' batch-1 times), refused unless its summaries are the search's own; None where the profile
    times nothing at batch 1 (decode.batch1_samples 0)."""
    stem = build / layout.teacher_time(split, length)
    if not Path(f"{stem}.json").exists():
        return None
    timed = read_records(f"{stem}.jsonl", "summary")
    searched = read_records(build / f"{layout.search(split, length)}.jsonl", "summary")[: len(timed)]
    if not timed or [r["summary"] for r in timed] != [r["summary"] for r in searched]:
        raise NausError(f"{stem}.jsonl: the timed search's summaries are not the search's own (another teacher, or "
                        "one run with other settings, was timed): run the time job again")
    timing = read_json(f"{stem}.json", ("sentences", "seconds"), {"sentences": (1, 10**9), "seconds": (0, 10**9)})
    return timing["seconds"] / timing["sentences"]


def read_row(row: Row, metrics: Path, build: Path) -> dict:
    """A table row: the mean scores of its seeds' runs, their spread, and the time it shows (a student's first
    seed's decoding; the teacher's search, one sentence at a time, so its batch-1 time is its time)."""
    runs = [read_metrics(metrics / f"{stem}.json") for stem in row.stems]
    out = {"System": row.label, "_totals": [r["rouge1"] + r["rouge2"] + r["rougeL"] for r in runs],
           "_stems": list(row.stems), "_models": [job.model for job in row.jobs if isinstance(job, layout.Decoded)],
           "_method": row.method, "_peer": row.peer}
    for key, column in (("avg_words", "Len"), ("rouge1", "R-1"), ("rouge2", "R-2"), ("rougeL", "R-L")):
        out[column] = statistics.mean(r[key] for r in runs)
    if row.method is not None:
        out["Seeds"] = len(runs)
        for key, sd in zip(("rouge1", "rouge2", "rougeL"), SCORE_SD):
            out[sd] = statistics.stdev(r[key] for r in runs) if len(runs) > 1 else None
    if row.timed and row.method is not None:
        timing = first_timing(build, row.stems)
        out["Time (s/sample)"] = timing["seconds_per_sample"]
        out["Time b=1 (s/sample)"] = timing.get("batch1_seconds_per_sample")
    elif row.timed:  # the teacher's row: its search
        searched = row.jobs[0]
        out["Time (s/sample)"] = out["Time b=1 (s/sample)"] = teacher_seconds(build, searched.split, searched.length)
    return out


def finish(rows: list[dict], teacher: dict | None) -> list[dict]:
    """ΔR over the teacher (the mean of the seeds' ΔR, with its sd and a bootstrap interval where there are several:
    of seeds and sentences where `add_p_values` drew one, else of the seeds) and the speedup."""
    for row in rows:
        totals = row.pop("_totals", None) or [total(row)]
        offsets = row.pop("_offsets", None)  # seeds and sentences resampled (add_p_values); else the seeds alone
        for key in ("_stems", "_models", "_method", "_peer"):
            row.pop(key, None)
        deltas = [t - total(teacher) for t in totals] if teacher else []
        row["ΔR"] = round(statistics.mean(deltas), 2) if deltas else None
        if len(deltas) > 1:
            row["ΔR sd"] = round(statistics.stdev(deltas), 2)
            mean = statistics.mean(deltas)  # the metrics' ΔR: the per-sentence scores' own mean differs by rounding
            low, high = (mean + offsets[0], mean + offsets[1]) if offsets else bootstrap_interval(deltas)
            row["ΔR 95% CI"] = f"[{low:+.2f}, {high:+.2f}]"
        # like for like: one sentence at a time on one thread, as the teacher searches (a quoted row: its one time)
        seconds = row["Time b=1 (s/sample)"] if "Time b=1 (s/sample)" in row else row.get("Time (s/sample)")
        base = teacher.get("Time (s/sample)") if teacher else None
        row["Speedup"] = f"{base / seconds:.0f}×" if seconds and base else None
    return rows


def bootstrap_interval(values: list[float], resamples: int = BOOTSTRAP) -> tuple[float, float]:
    """The 95% percentile interval of the mean, resampling the seeds (seeded: the same every run)."""
    rng = np.random.default_rng(0)
    means = np.asarray(values)[rng.integers(0, len(values), (resamples, len(values)))].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def _quoted(rows: tuple[Quoted, ...]) -> list[dict]:
    """The paper's rows: ΔR over the paper's own teacher (or as it prints it, for a row quoted by its ΔR alone), and
    the speedups it prints, none recomputed from its rounded times."""
    columns = ["System", "Len", "R-1", "R-2", "R-L", "Time (s/sample)"]
    teacher = next((dict(zip(columns, q)) for q in rows if q.label.startswith("Search")), None)
    out = []
    for quoted in rows:
        row = dict(zip(columns, quoted))
        if quoted.r1 is None:
            row["ΔR"] = quoted.delta
        else:
            finish([row], teacher)
        row["Speedup"] = f"{quoted.speedup}×" if quoted.speedup else None
        out.append(row)
    return out


NOT_COMPARABLE = ": an earlier run, other code or training settings (not comparable, no p)"


def archived_metrics(group: Group, folder: str) -> tuple[Path, bool]:
    """An earlier run's metrics (under `folder` of its protocol's layout), once its record (a provenance.json, or the
    pipeline's fingerprints.json) holds what the group expects of it; and whether it compares with this run: made by
    this commit, from a clean tree, with the same training settings."""
    run = group.other
    record = Path(run.record)
    made = read_json(record)
    for key, value in run.expects:
        found = made
        for part in key.split("."):
            found = found.get(part) if isinstance(found, dict) else None
        if found != value:
            raise NausError(f"{record}: {key} is {found!r}, not {value!r}: not a run of the kind its rows' label, "
                            f"{run.label!r}, says")
    if record.name == layout.FINGERPRINTS:  # the pipeline's record: the settings an output's content depends on
        stamp, train = made.get("made_by") or {}, (made.get("settings") or {}).get("train")
        ours = recorded_settings({"train": group.train})["train"]
    else:
        stamp, train, ours = made, made.get("train"), group.train
    comparable = stamp.get("commit") == code_state()["commit"] and stamp.get("clean", True) and train == ours
    return Path(run.folder) / layout.METRICS / folder, comparable


def _their_p_vs_teacher(rows: list[dict], group: Group, table: str, key) -> None:
    """An earlier run's students' p against its own teacher, as its own report gives it (`tables/{table}-full.csv`:
    paired by sentence there; this run has none of its outputs)."""
    path = Path(group.other.folder) / layout.TABLES / f"{table}-full.csv"
    if not path.is_file():
        return
    theirs = pd.read_csv(path)
    if key is not None and "L" in theirs:
        theirs = theirs[theirs["L"] == key]
    for read in rows:
        if read["_method"] and P_VALUES[0] in theirs:
            label = ours_label(METHODS[read["_method"]].label, group.other.which)  # as its own report gives it
            match = theirs.loc[theirs["System"] == label, P_VALUES[0]]
            if len(match) and pd.notna(match.iloc[0]):
                read[P_VALUES[0]] = float(match.iloc[0])


def _group_rows(group: Group, metrics: Path, folder: str, build: Path, scorer: SentenceTotals | None, ours: dict,
                table: str) -> list[dict]:
    """A group's rows with ΔR over its teacher and (with a scorer) the p-values of its students; an earlier run's
    from its own metrics, its students' seeds against this run's same students (`ours`: their stems -> this run's
    seeds' totals, filled by the groups before it) and its own p against its teacher."""
    source, comparable = archived_metrics(group, folder) if group.other else (metrics / folder, True)
    rows = [read_row(row, source, build) for row in group.rows]
    if not comparable:
        for read in rows:
            read["System"] += NOT_COMPARABLE
    for row, read in zip(group.rows, rows):
        if row.over and (output := build / folder / f"{row.stems[0]}.txt").is_file():
            lines = read_lines(output)
            over = sum(len(line.split()) > row.over for line in lines)
            read["System"] += f", uncut: {over:,} of {len(lines):,} longer than {row.over} words"
    shown = next((read for row, read in zip(group.rows, rows) if row == group.teacher), None)
    teacher = shown or (read_row(group.teacher, source, build) if group.teacher else None)
    if scorer is not None and group.teacher and not group.other:
        add_p_values(rows, build / folder, scorer, build / folder / f"{group.teacher.stems[0]}.txt", TRUNCATE.name,
                     LENGTH_CONTROL.name, SOURCE_ORDER.name, BOOTSTRAP)
    for row, read in zip(group.rows, rows):
        if not read["_method"]:
            continue
        if not group.other:
            ours.setdefault(row.stems, read["_totals"])
        elif comparable and row.stems in ours:
            read[group.other.p_label] = unpaired_p_value(read["_totals"], ours[row.stems])
    if group.other and comparable:
        _their_p_vs_teacher(rows, group, table, group.key)
    return finish(rows, teacher)


def table_frame(table: Table, metrics: Path, build: Path, scorers: dict[str, SentenceTotals]) -> pd.DataFrame:
    """A declared table as a frame: its groups in order (with the L column where they have one), the
    papers' rows it quotes after each group."""
    frames, ours = [], {}
    for index, group in enumerate(table.groups):
        rows = _group_rows(group, metrics, table.protocol.folder, build,
                           scorers[table.protocol.collection] if table.p_values else None, ours, table.name)
        if all(later.key != group.key for later in table.groups[index + 1:]):  # the papers' rows end their length
            rows += _quoted(table.quoted.get(group.key, ()))
        peers = [f"{P_VALUE}{row.peer}" for row in group.rows if row.peer]
        peers += [group.other.p_label] if group.other else []
        shown = COLUMNS[:COLUMNS.index(P_VALUES[-1]) + 1] + peers if table.times else COLUMNS[:6] + SPREAD
        columns = shown + SCORE_SD
        frame = pd.DataFrame(rows, columns=columns)
        if group.key is not None:
            frame.insert(0, "L", group.key)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
