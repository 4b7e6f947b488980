"""Per-sentence views of a profile's test outputs: each sentence's ROUGE, the paired significance of
two systems, the case study, the outputs browser and the scores by source length (the report's
tables and figures from these; plain data here, drawn in naus.report)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from naus import NausError
from naus.pipeline import layout
from naus.methods import CHAR_CONTROL
from naus.report.browse import write_browser
from naus.evaluation.evaluate import sample_scores
from naus.plumbing.files import read_lines
from naus.evaluation.significance import paired_p_value, seed_mean, two_level_interval
from naus.pipeline.declarations import PROTOCOLS, Protocol


class SentenceTotals:
    """Per-sentence total ROUGE in percent (R-1 + R-2 + R-L) of output files against a split's references, each file
    scored once; None for a file that is not there (a report drawn from metrics alone has no p-values)."""

    def __init__(self, references: list[Path], metric: str = "f1", max_bytes: int | None = None):
        self.references = [read_lines(path) for path in references] if all(p.is_file() for p in references) else None
        self.metric, self.max_bytes, self.cache = metric, max_bytes, {}

    def __call__(self, path: Path) -> np.ndarray | None:
        if self.references is None or not path.is_file():
            return None
        if path not in self.cache:
            outputs = read_lines(path)
            if len(outputs) != len(self.references[0]):
                raise NausError(f"{path}: {len(outputs):,} lines, but its split has {len(self.references[0]):,} "
                                "references: an output has one line per input sentence")
            samples = sample_scores(outputs, self.references, self.metric, self.max_bytes)
            self.cache[path] = np.array([100 * sum(sample.values()) for sample in samples])
        return self.cache[path]


def protocol_scorer(build: Path, protocol: Protocol = PROTOCOLS["test"]) -> SentenceTotals:
    """Per-sentence scores of a collection's outputs by its protocol: one per report, so that the tables, the
    browser and the source-length figure score each output file once."""
    return SentenceTotals([build / ref for ref in protocol.references], protocol.metric, protocol.max_bytes)


def add_p_values(rows: list[dict], outputs: Path, scorer: SentenceTotals, teacher: Path, truncate: str,
                 length_control: str, source_order: str, resamples: int) -> None:
    """Each student row's p-value against the teacher; the `length_control` row's against the `truncate` row's,
    the `source_order` row's against the `length_control` row's (the same students), and both against each peer
    row's (`p vs {peer}`), on the seed-averaged per-sentence scores (rows whose outputs are not all in build/ get
    none); a row of several seeds, its gain's interval over the teacher, seeds and sentences resampled together."""
    def seeds(row: dict) -> list | None:
        runs = [scorer(outputs / f"{stem}.txt") for stem in row["_stems"]]
        return runs if runs and all(run is not None for run in runs) else None

    def scores(row: dict) -> np.ndarray | None:
        return seed_mean(runs) if (runs := seeds(row)) is not None else None

    students = [(row, scores(row)) for row in rows if row.get("_method") is not None]
    peers = [(other["_peer"], theirs) for other in rows if other.get("_peer") and (theirs := scores(other)) is not None]
    reference = scorer(teacher)
    against = {length_control: (truncate, "p vs truncate"), source_order: (length_control, "p vs length control")}
    for row, ours in students:
        if ours is not None and reference is not None:
            row["p vs teacher"] = paired_p_value(ours, reference)
            if len(row["_stems"]) > 1:  # ΔR's interval: the seeds and the test sentences resampled together, as
                runs = np.asarray(seeds(row))  # offsets from the gain these scores give (`finish` adds the row's ΔR)
                gain = runs.mean() - reference.mean()
                row["_offsets"] = tuple(end - gain for end in two_level_interval(runs, reference, resamples))
        if row["_method"] not in against or ours is None:
            continue
        method, column = against[row["_method"]]
        theirs = next((theirs for other, theirs in students if other["_method"] == method
                       and other["_models"] == row["_models"]), None)  # the same students by the other method
        if theirs is not None:
            row[column] = paired_p_value(ours, theirs)
        for peer, theirs in peers:
            row[f"p vs {peer}"] = paired_p_value(ours, theirs)


CASES = 5  # test sentences in the case study: one from each fifth of the test set by source length


def case_study(build: Path, length: int, chars: list[tuple[int, int]], systems: tuple[tuple[str, str], ...],
               cases: int = CASES, seed: int = 0) -> pd.DataFrame:
    """The paper's case study: a seeded choice of test sentences, one from each of `cases` groups by
    source length, with the source, the reference, the teacher's summary and the seed-0 student's by
    each method (and within its character budget); empty when an output is not in build/."""
    outputs = {"Search teacher": build / f"{layout.search('test', length)}.txt"}
    methods = [(name, method, length) for name, method in systems]
    methods += [(f"{CHAR_CONTROL.label}, {budget} chars", CHAR_CONTROL.name, layout.chars_target(budget))
                for model, budget in chars if model == length]
    outputs.update({name: build / f"{layout.decoded('test', layout.model(length), method, target)}.txt"
                    for name, method, target in methods})
    files = {"Source": build / layout.DECODE_SOURCES["test"], "Reference": build / layout.REFERENCES["test"][0],
             **outputs}
    if not all(path.is_file() for path in files.values()):
        return pd.DataFrame()
    lines = {name: read_lines(path) for name, path in files.items()}
    for name, path in files.items():
        if len(lines[name]) != len(lines["Source"]):
            raise NausError(f"{path}: {len(lines[name]):,} lines, but the test split has {len(lines['Source']):,} "
                            "sentences")
    by_length = np.argsort([len(line.split()) for line in lines["Source"]], kind="stable")
    rng = np.random.default_rng(seed)
    chosen = [int(rng.choice(group)) for group in np.array_split(by_length, cases) if len(group)]
    return pd.DataFrame([{"Sentence": index + 1, "System": name, "Words": len(lines[name][index].split()),
                          "Text": lines[name][index]} for index in chosen for name in lines])


def browser(build: Path, profile: str, lengths: list[int], chars: list[tuple[int, int]],
            systems: tuple[tuple[str, str], ...], out: Path, scorer: SentenceTotals | None = None) -> bool:
    """results/{profile}/browse.html: every test sentence with the outputs of Lead, the teacher and the
    seed-0 student by each method, per length, and their per-sentence total ROUGE; False when an
    output is not in build/."""
    scorer = scorer or protocol_scorer(build)
    paths = {}
    for length in lengths:
        paths[f"Lead-{length}"] = build / f"{layout.lead('test', length)}.txt"
        paths[f"teacher L={length}"] = build / f"{layout.search('test', length)}.txt"
        for name, method in systems:
            paths[f"{name} L={length}"] = build / f"{layout.decoded('test', layout.model(length), method, length)}.txt"
        for model, budget in chars:
            if model == length:
                stem = layout.decoded("test", layout.model(length), CHAR_CONTROL.name, layout.chars_target(budget))
                paths[f"{CHAR_CONTROL.label} {budget} chars L={length}"] = build / f"{stem}.txt"
    files = [build / layout.DECODE_SOURCES["test"], build / layout.REFERENCES["test"][0], *paths.values()]
    if not all(path.is_file() for path in files):
        return False
    systems = {label: (read_lines(path), scorer(path).tolist()) for label, path in paths.items()}
    write_browser(out, f"naus: every test output of the {profile} profile",
                  "Per-sentence total ROUGE F1 (R-1 + R-2 + R-L, rouge-score with stemming) beside each output; "
                  "students: seed 0.", read_lines(files[0]), read_lines(files[1]), systems)
    return True


SOURCE_BUCKETS = (0, 20, 30, 40)  # source words: <20, 20-29, 30-39, 40 and more (Gigaword's lead sentences: ~30)


def by_source_length(build: Path, systems: dict[str, list[str]],
                     scorer: SentenceTotals | None = None) -> tuple[list[str], list[int], dict]:
    """Mean total ROUGE per bucket of source length (`SOURCE_BUCKETS`) of each system (its outputs' per-sentence
    scores averaged over its seeds): the buckets' labels, their sizes, {system: means}."""
    scorer = scorer or protocol_scorer(build)
    source = build / layout.DECODE_SOURCES["test"]
    scores = {}
    for label, stems in systems.items():
        runs = [scorer(build / f"{stem}.txt") for stem in stems]
        missing = next((build / f"{stem}.txt" for stem, run in zip(stems, runs) if run is None), None)
        if missing or not source.is_file() or scorer.references is None:
            raise NausError(f"{missing or source}: not found (the scores by source length read every output and "
                            "the test split)")
        scores[label] = runs
    words = np.array([len(line.split()) for line in read_lines(source)])
    bucket = np.searchsorted(SOURCE_BUCKETS, words, side="right") - 1
    labels = [f"{low}–{high - 1}" for low, high in zip(SOURCE_BUCKETS, SOURCE_BUCKETS[1:])] + [f"≥{SOURCE_BUCKETS[-1]}"]
    means = {label: [float(seed_mean(runs)[bucket == b].mean()) if (bucket == b).any() else float("nan")
                     for b in range(len(labels))] for label, runs in scores.items()}
    return labels, [int((bucket == b).sum()) for b in range(len(labels))], means
