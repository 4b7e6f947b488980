"""Tables and figures of the paper from the pipeline's metric files.

Rows marked † are quoted from Liu, Huang & Mou (2022) (perl ROUGE-1.5.5, GPU timing); every
other number is read from files the pipeline wrote. ΔR is total ROUGE (R-1 + R-2 + R-L) minus
the search teacher's: ours for our rows and the rescored published outputs, the paper's for †.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from naus import NausError, layout
from naus.architectures import ARCHITECTURES, CHAR_METHOD
from naus.files import atomic_open, read_json
from naus.fingerprints import fingerprints, stale
from naus.settings import MAX_POSITIONS
from naus.shards import read_records
from naus.sentences import CASES, SentenceTotals, add_p_values, browser, by_source_length, case_study, test_scorer


# Gigaword test, ROUGE-1/2/L F1 and seconds per sample, from the paper's Table 2.
PAPER_GIGAWORD = {
    8: [
        ("Lead-8 †", 8, 21.39, 7.42, 20.03, None),
        ("Search teacher †", 8, 26.17, 9.69, 24.10, 6.846),
        ("NAUS truncate †", 7.8, 27.27, 9.49, 24.96, 0.005),
        ("NAUS length control †", 7.8, 27.94, 9.24, 25.51, 0.041),
    ],
    10: [
        ("Lead-10 †", 10, 23.03, 7.95, 21.29, None),
        ("Search teacher †", 10, 27.35, 10.25, 24.87, 9.217),
        ("NAUS truncate †", 9.8, 28.24, 10.04, 25.40, 0.005),
        ("NAUS length control †", 9.8, 28.55, 9.97, 25.78, 0.044),
    ],
}
# NACC (Liu, Huang & Mou, NeurIPS 2022): a student of 8-word search output decoded within 50 characters.
PAPER_CHARS = {8: [("NACC, 50 chars †", None, 27.70, 9.10, 25.27, None)]}
# DUC2004, ROUGE recall at 75 bytes, from the paper's Table 3.
PAPER_DUC = [
    ("Search teacher †", None, 26.14, 8.03, 22.88, None),
    ("NAUS length control †", None, 26.71, 7.68, 23.06, None),
]
METRIC_KEYS = ("rouge1", "rouge2", "rougeL", "avg_words")
# What a metrics or timing file may hold (ROUGE in percent): anything else is refused, naming the file and key.
METRIC_BOUNDS = {"rouge1": (0, 100), "rouge2": (0, 100), "rougeL": (0, 100), "avg_words": (0, MAX_POSITIONS)}
TIMING_BOUNDS = {key: (0, 86_400) for key in ("seconds_per_sample", "batch1_seconds_per_sample")}
# A student's row is the mean over its seeds; the spread columns are filled where there are several.
SPREAD = ["ΔR sd", "ΔR 95% CI", "Seeds"]
SCORES = ("R-1", "R-2", "R-L")
SCORE_SD = [f"{score} sd" for score in SCORES]  # shown as "mean ± sd" in the Markdown and LaTeX tables
# Paired significance of a NAUS row over the test sentences (naus.significance): against the teacher, and
# length control against truncation.
P_VALUES = ["p vs teacher", "p vs truncate"]
COLUMNS = ["System", "Len", *SCORES, "ΔR", *SPREAD, "Time (s/sample)", "Time b=1 (s/sample)", "Speedup",
           *P_VALUES, *SCORE_SD]
BOOTSTRAP = 1000  # resamples of the seeds for ΔR's 95% interval
OUR_SYSTEMS = (
    ("NAUS truncate", "truncate"),
    ("NAUS length control", "length-control"),
    ("CTC beam search + truncate", "beam"),
)


def _metric_row(name: str, path: Path, seconds: float | None, batch1: float | None = None) -> dict:
    """A table row from a metrics file of `naus evaluate`."""
    metrics = read_json(path, METRIC_KEYS, METRIC_BOUNDS)
    return {"System": name, "Len": metrics["avg_words"], "R-1": metrics["rouge1"], "R-2": metrics["rouge2"],
            "R-L": metrics["rougeL"], "Time (s/sample)": seconds, "Time b=1 (s/sample)": batch1}


def _decoded_row(name: str, metrics: Path, build: Path, stems: list[str], timed: bool = True) -> dict | None:
    """A student's row over its seeds (`stems`: one decoding per seed): the mean scores and times of
    the runs that exist, their spread, and each run's total (for ΔR's); None when none was run."""
    timing = first_timing(build, stems) if timed else {}
    runs = [_metric_row(name, metrics / f"{stem}.json", timing.get("seconds_per_sample"),
                        timing.get("batch1_seconds_per_sample"))
            for stem in stems if (metrics / f"{stem}.json").is_file()]
    if not runs:
        return None
    row = {"System": name, "Seeds": len(runs), "_totals": [_total(r) for r in runs],
           "_stems": [stem for stem in stems if (metrics / f"{stem}.json").is_file()]}
    for key in ("Len", "R-1", "R-2", "R-L", "Time (s/sample)", "Time b=1 (s/sample)"):
        values = [r[key] for r in runs if r[key] is not None]
        row[key] = statistics.mean(values) if values else None
    for key, sd in zip(SCORES, SCORE_SD):
        row[sd] = statistics.stdev(r[key] for r in runs) if len(runs) > 1 else None
    return row


def first_timing(build: Path, stems: list[str]) -> dict:
    """A student's time: its first seed's decoding, timed alone (the workflow times each table's first seed
    only); empty when none was timed."""
    for stem in stems:
        path = build / f"{stem}.timing.json"
        if path.is_file():
            return read_json(path, ("seconds_per_sample",), TIMING_BOUNDS)
    return {}


def stems(split: str, seeds: list[int], length: int, method: str, target, arch: str = "naus",
          fraction: float | None = None, beam: int | None = None) -> list[str]:
    """One decoding per seed of a student."""
    return [layout.decoded(split, layout.model(length, arch, fraction, seed), method, target, beam) for seed in seeds]


def _teacher_row(metrics: Path, build: Path, split: str, length: int, name: str = "Search teacher (ours)") -> dict:
    """The search teacher on a split: one sentence at a time, so its batch-1 time is its time."""
    seconds = teacher_seconds(build, split, length)
    return _metric_row(name, metrics / f"{layout.search(split, length)}.json", seconds, seconds)


def _total(row: dict) -> float:
    return row["R-1"] + row["R-2"] + row["R-L"]


def _finish(rows: list[dict], teacher: dict | None) -> list[dict]:
    """ΔR over the teacher (the mean of the seeds' ΔR, with its sd and a bootstrap interval over the
    seeds where there are several) and the speedup."""
    for row in rows:
        totals = row.pop("_totals", None) or [_total(row)]
        row.pop("_stems", None)
        deltas = [t - _total(teacher) for t in totals] if teacher else []
        row["ΔR"] = round(statistics.mean(deltas), 2) if deltas else None
        if len(deltas) > 1:
            row["ΔR sd"] = round(statistics.stdev(deltas), 2)
            low, high = bootstrap_interval(deltas)
            row["ΔR 95% CI"] = f"[{low:+.2f}, {high:+.2f}]"
        seconds, base = row.get("Time (s/sample)"), teacher.get("Time (s/sample)") if teacher else None
        row["Speedup"] = f"{base / seconds:.0f}×" if seconds and base else None
    return rows


def bootstrap_interval(values: list[float], resamples: int = BOOTSTRAP) -> tuple[float, float]:
    """The 95% percentile interval of the mean, resampling the seeds (seeded: the same every run)."""
    rng = np.random.default_rng(0)
    means = np.asarray(values)[rng.integers(0, len(values), (resamples, len(values)))].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def search_timing(build: Path, split: str, length: int) -> tuple[int, float] | None:
    """Sentences searched and their seconds (one CPU core per shard), summed over the shards' timing files."""
    parts = [read_json(p, ("sentences", "seconds"), {"sentences": (0, 10**9), "seconds": (0, 10**9)}) for p in sorted(build.glob(layout.search_timings(split, length)))]
    return (sum(p["sentences"] for p in parts), sum(p["seconds"] for p in parts)) if parts else None


def teacher_seconds(build: Path, split: str, length: int) -> float | None:
    """Mean search seconds per sentence (one CPU core per shard)."""
    timing = search_timing(build, split, length)
    return timing[1] / timing[0] if timing and timing[0] else None


def search_section(build: Path) -> str | None:
    """How much each split was searched, and at what cost, from the merged search records."""
    lines = ["| split | L | sentences | empty sources | mean summary words | s per sentence (one core) | core-hours |",
             "|---|---|---|---|---|---|---|"]
    for split, length, path in layout.searches(build):
        records = read_records(path)
        words = [len(r["summary"].split()) for r in records]
        empty = sum(1 for w in words if w == 0)
        sentences, seconds = search_timing(build, split, length) or (0, None)
        per_sentence = seconds / sentences if sentences else None
        lines.append(f"| {split} | {length} | {len(records):,} | {empty} | "
                     f"{sum(words) / max(len(words), 1):.2f} | {'–' if per_sentence is None else f'{per_sentence:.4f}'} | "
                     f"{'–' if seconds is None else f'{seconds / 3600:.2f}'} |")
    if len(lines) == 2:
        return None
    return ("## Search\n\nThe search teacher's output on every split it labels (the pool's is the students' "
            "training data), with its time per sentence as measured by each one-core shard.\n\n"
            + "\n".join(lines) + "\n")


def _chars_row(metrics: Path, build: Path, split: str, length: int, budget: int, unit: str,
               seeds: list[int]) -> list[dict]:
    """The L=`length` student decoded by char-control within `budget` characters, when it was run."""
    row = _decoded_row(f"NAUS char control, {budget} {unit} (ours)", metrics, build,
                       stems(split, seeds, length, CHAR_METHOD, layout.chars_target(budget)))
    return [row] if row else []


def gigaword_table(metrics: Path, build: Path, lengths: list[int], published: dict[str, Path],
                   chars: list[tuple[int, int]] = (), seeds: list[int] = (0,),
                   scorer: SentenceTotals | None = None) -> pd.DataFrame:
    """Table 2: one group of rows per target length (a student's character budgets in its length's group)."""
    frames, scorer = [], scorer or test_scorer(build)
    for length in lengths:
        teacher = _teacher_row(metrics, build, "test", length)
        ours = [_metric_row(f"Lead-{length} (ours)", metrics / f"{layout.lead('test', length)}.json", None), teacher]
        for name, method in OUR_SYSTEMS:
            row = _decoded_row(f"{name} (ours)", metrics, build, stems("test", seeds, length, method, length))
            ours += [row] if row else []
        for model, budget in chars:
            ours += _chars_row(metrics, build, "test", length, budget, "chars", seeds) if model == length else []
        add_p_values(ours, build, scorer, build / f"{layout.search('test', length)}.txt")
        rows = _finish(ours, teacher)
        for label, path in sorted(published.items()):
            if label.startswith(f"HC_{length}_"):
                rescored = _metric_row(f"published {label} (rescored)", path, None)
                rows += _finish([rescored], teacher)
        quoted = PAPER_GIGAWORD.get(length, []) + (PAPER_CHARS.get(length, []) if chars else [])
        paper = [dict(zip(["System", "Len", "R-1", "R-2", "R-L", "Time (s/sample)"], r)) for r in quoted]
        rows += _finish(paper, next((r for r in paper if r["System"].startswith("Search")), None))
        frame = pd.DataFrame(rows, columns=COLUMNS)
        frame.insert(0, "L", length)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def duc_table(metrics: Path, build: Path, length: int, chars: int | None = None, seeds: list[int] = (0,)) -> pd.DataFrame:
    """Table 3: DUC2004, recall of the output cut to 75 bytes, with the L=`length` teacher and student
    (and the student within `chars` bytes)."""
    duc = metrics / "duc2004"
    teacher = _teacher_row(duc, build, "duc", length, f"Search teacher, L={length} (ours)")
    rows = [_metric_row("Lead, 75 bytes (ours)", duc / f"{layout.lead('duc', 'all')}.json", None), teacher]
    for name, method in OUR_SYSTEMS:
        row = _decoded_row(f"{name} (ours)", duc, build, stems("duc", seeds, length, method, length))
        rows += [row] if row else []
    rows += _chars_row(duc, build, "duc", length, chars, "bytes", seeds) if chars else []
    scorer = SentenceTotals([build / f"data/duc2004/ref{i}.txt" for i in range(4)], "recall", 75)
    add_p_values(rows, build / "duc2004", scorer, build / "duc2004" / f"{layout.search('duc', length)}.txt")
    rows = _finish(rows, teacher)
    for path in sorted((duc / layout.published("duc")).glob("HC_*.json")):
        rows += _finish([_metric_row(f"published {path.stem} (rescored)", path, None)], teacher)
    paper = [dict(zip(["System", "Len", "R-1", "R-2", "R-L", "Time (s/sample)"], r)) for r in PAPER_DUC]
    rows += _finish(paper, paper[0])
    return pd.DataFrame(rows, columns=COLUMNS)


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
        if column in P_VALUES:
            return "<0.001" if value < 0.001 else f"{value:.3f}"
        if isinstance(value, float):
            return f"{value:.2f}"
        return str(value)

    shown = {c: [cell(c, v) for v in frame[c].tolist()] for c in frame.columns if c not in SCORE_SD + ["ΔR sd"]}
    for column, sd in [*zip(SCORES, SCORE_SD), ("ΔR", "ΔR sd")]:
        if column in frame and sd in frame:
            shown[column] = [text if missing(spread) else f"{text} ± {spread:.2f}"
                             for text, spread in zip(shown[column], frame[sd].tolist())]
    for column in ("ΔR 95% CI", *P_VALUES):
        if column in frame and all(missing(v) for v in frame[column].tolist()):
            del shown[column]
    return pd.DataFrame(shown)


def write_table(frame: pd.DataFrame, out_dir: Path, name: str, caption: str) -> str:
    """The same table as Markdown, CSV and LaTeX, and its caption alone (`{name}.rst`, for
    Snakemake's HTML report); returns the Markdown table."""
    shown = _display(frame)
    markdown = shown.to_markdown(index=False, disable_numparse=True)
    _write(out_dir / f"{name}.md", f"{caption}\n\n{markdown}\n")
    _write(out_dir / f"{name}.csv", frame.to_csv(index=False))
    _write(out_dir / f"{name}.tex", shown.to_latex(index=False, caption=caption, label=f"tab:{name}"))
    _write(out_dir / f"{name}.rst", caption + "\n")
    return markdown


def _write(path: Path, text: str) -> None:
    with atomic_open(path) as handle:
        handle.write(text)


def _axes(columns: int = 1):
    """A new figure for the report: matplotlib without a display, one row of `columns` axes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(1, columns, figsize=(5 if columns == 1 else 8, 3.2))


def loss_curve(history: Path, out: Path, title: str) -> None:
    entries = read_json(history, ("history",))["history"]
    steps = [e["step"] for e in entries]
    fig, ax = _axes()
    ax.plot(steps, [e["train_loss"] for e in entries], label="train (smoothed CTC)")
    if all("dev_loss" in e for e in entries):
        ax.plot(steps, [e["dev_loss"] for e in entries], label="dev (CTC per word, on search output)")
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    _save(fig, out)


def length_histogram(files: dict[str, Path], out: Path, title: str) -> None:
    fig, ax = _axes()
    for label, path in files.items():
        lengths = [len(line.split()) for line in path.read_text(encoding="utf-8").splitlines()]
        ax.hist(lengths, bins=range(0, max(lengths + [1]) + 2), alpha=0.6, label=label)
    ax.set_xlabel("summary length (words)")
    ax.set_ylabel("test samples")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    _save(fig, out)


TEXT_TABLES = ("case-study",)  # tables that quote the test set (.gitignore keeps a licensed one's out of git)
def source_length_figure(build: Path, length: int, seeds: list[int], out: Path,
                         scorer: SentenceTotals | None = None) -> bool:
    """Total ROUGE against the source's length (buckets of words) for the teacher and the student by
    truncation and by length control; False when an output is not in build/."""
    found = by_source_length(build, length, seeds, scorer)
    if found is None:
        return False
    labels, counts, means = found
    fig, ax = _axes()
    for label, values in means.items():
        ax.plot(range(len(labels)), values, marker="o", label=label)
    ax.set_xticks(range(len(labels)), [f"{label}\n({n})" for label, n in zip(labels, counts)])
    ax.set_xlabel("source length in words (sentences)")
    ax.set_ylabel("total ROUGE F1 (R-1 + R-2 + R-L)")
    ax.set_title(f"ROUGE by source length, L={length}")
    ax.legend()
    fig.tight_layout()
    _save(fig, out)
    return True


def _save(fig, out: Path, drawn: bool = True) -> None:
    """The figure as PNG and PDF (when something was drawn), then closed."""
    import matplotlib.pyplot as plt

    if drawn:
        for suffix in (".png", ".pdf"):
            with atomic_open(out.with_suffix(suffix), "wb") as handle:
                fig.savefig(handle, format=suffix[1:], dpi=150)
    plt.close(fig)



def transfer_table(metrics: Path, transfer: list[tuple[int, str]], seeds: list[int] = (0,)) -> pd.DataFrame:
    """Table 6: a model trained for i words decoded for j words (or a ratio of the source length)."""
    rows = []
    for model, target in transfer:
        label = f"{model} → {layout.target_label(target)}"
        teacher_file = metrics / f"{layout.search('test', target)}.json"
        teacher = _metric_row("", teacher_file, None) if teacher_file.is_file() else None
        for name, method in (("truncate", "truncate"), ("length control", "length-control")):
            row = _decoded_row(f"{label}, {name}", metrics, Path(), stems("test", seeds, model, method, target), timed=False)
            rows += _finish([row], teacher) if row else []
    return pd.DataFrame(rows, columns=COLUMNS[:6] + SPREAD + SCORE_SD)


def architecture_table(metrics: Path, build: Path, lengths: list[int], seeds: list[int] = (0,),
                       analysis_seeds: list[int] = (0,)) -> pd.DataFrame:
    """Table 4: students of different architectures learnt from the same search output, per length
    (NAUS's rows are Table 2's students, with their seeds; the encoder-decoders have `analysis_seeds`)."""
    frames = []
    for length in lengths:
        teacher = _teacher_row(metrics, build, "test", length)
        rows = [teacher]
        for arch in ARCHITECTURES.values():
            for method, label in arch.table4:
                runs = seeds if arch.name == "naus" else analysis_seeds
                row = _decoded_row(f"{arch.label}, {label}", metrics, build,
                                   stems("test", runs, length, method, length, arch.name))
                rows += [row] if row else []
        frame = pd.DataFrame(_finish(rows, teacher), columns=COLUMNS)
        frame.insert(0, "L", length)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _deltas(metrics: Path, stem_list: list[str], teacher: dict) -> list[float]:
    """Each seed's ΔR over the teacher, for the runs that exist."""
    return [_total(_metric_row("", metrics / f"{stem}.json", None)) - _total(teacher)
            for stem in stem_list if (metrics / f"{stem}.json").is_file()]


def fraction_figure(metrics: Path, length: int, fractions: list[float], out: Path, seeds: list[int] = (0,),
                    analysis_seeds: list[int] = (0,)) -> bool:
    """Figure 3: training-set size vs ΔR, for truncation and length control (mean ± sd over seeds)."""
    teacher = _metric_row("", metrics / f"{layout.search('test', length)}.json", None)
    points = sorted(fractions) + [1.0]
    fig, ax = _axes()
    drawn = False
    for name, method in (("truncate", "truncate"), ("length control", "length-control")):
        xs, ys, errors = [], [], []
        for f in points:
            runs = seeds if f == 1.0 else analysis_seeds
            deltas = _deltas(metrics, stems("test", runs, length, method, length, fraction=f), teacher)
            if deltas:
                xs.append(100 * f)
                ys.append(statistics.mean(deltas))
                errors.append(statistics.stdev(deltas) if len(deltas) > 1 else 0.0)
        if len(xs) > 1:
            ax.errorbar(xs, ys, yerr=errors, marker="o", capsize=3, label=name)
            drawn = True
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set_xlabel("training pairs used (% of the searched pool)")
    ax.set_ylabel("ΔR over the teacher (mean ± sd over seeds)")
    ax.set_title(f"Training-set size, L={length}")
    ax.legend()
    fig.tight_layout()
    _save(fig, out, drawn)
    return drawn


def chars_figure(metrics: Path, build: Path, length: int, budgets: list[int], out: Path) -> bool:
    """ROUGE F1 against the budget in characters (char-control) for the L=`length` student, with
    its word length control (at the mean characters of its summaries) for comparison."""
    points = []
    for budget in sorted(budgets):
        path = metrics / f"{layout.decoded('test', layout.model(length), CHAR_METHOD, layout.chars_target(budget))}.json"
        if path.is_file():
            points.append((budget, read_json(path, METRIC_KEYS, METRIC_BOUNDS)))
    fig, ax = _axes()
    words = layout.decoded("test", layout.model(length), "length-control", length)
    reference = (read_json(metrics / f"{words}.json", METRIC_KEYS, METRIC_BOUNDS) if (metrics / f"{words}.json").is_file()
                 and (build / f"{words}.txt").is_file() else None)
    if reference:
        summaries = (build / f"{words}.txt").read_text(encoding="utf-8").splitlines()
        mean_chars = sum(len(s.encode()) for s in summaries) / max(len(summaries), 1)
    for key, label in (("rouge1", "R-1"), ("rouge2", "R-2"), ("rougeL", "R-L")):
        line, = ax.plot([b for b, _ in points], [m[key] for _, m in points], marker="o", label=f"{label}, char control")
        if reference:
            ax.plot([mean_chars], [reference[key]], marker="*", markersize=12, color=line.get_color(), linestyle="none",
                    label=f"{label}, {length} words (mean {mean_chars:.0f} chars)" if key == "rouge1" else None)
    ax.set_xlabel("budget (characters, whole words)")
    ax.set_ylabel("ROUGE F1")
    ax.set_title(f"Character budgets, L={length} student")
    ax.legend(fontsize=7)
    fig.tight_layout()
    drawn = len(points) > 1
    _save(fig, out, drawn)
    return drawn


def beam_figure(metrics: Path, build: Path, length: int, beams: list[int], out: Path, seeds: list[int] = (0,)) -> bool:
    """Figure 4: beam size vs ΔR (mean ± sd over seeds) and vs time per sample, for length control and CTC beam search."""
    teacher = _metric_row("", metrics / f"{layout.search('test', length)}.json", None)
    fig, (left, right) = _axes(2)
    drawn = False
    for name, method in (("length control", "length-control"), ("CTC beam search", "beam")):
        xs, deltas, errors, times = [], [], [], []
        for b in sorted(beams):
            runs = stems("test", seeds, length, method, length, beam=b)
            found = _deltas(metrics, runs, teacher)
            if found:
                xs.append(b)
                deltas.append(statistics.mean(found))
                errors.append(statistics.stdev(found) if len(found) > 1 else 0.0)
                times.append(1000 * first_timing(build, runs).get("seconds_per_sample", float("nan")))
        if xs:
            left.errorbar(xs, deltas, yerr=errors, marker="o", capsize=3, label=name)
            right.plot(xs, times, marker="o", label=name)
            drawn = True
    left.set_xlabel("beam size")
    left.set_ylabel("ΔR over the teacher (mean ± sd)")
    right.set_xlabel("beam size")
    right.set_ylabel("ms per sample (batch 64)")
    left.legend()
    fig.suptitle(f"Beam size, L={length}")
    fig.tight_layout()
    _save(fig, out, drawn)
    return drawn


@dataclass(frozen=True)
class ReportSpec:
    """What a profile's report covers, read from its resolved configuration."""

    profile: str
    lengths: list[int]  # Table 2's (the first one also Figures 3 and 4's)
    fractions: list[float] = field(default_factory=list)  # Figure 3
    beams: list[int] = field(default_factory=list)  # Figure 4
    transfer: list[tuple[int, str]] = field(default_factory=list)  # Table 6
    analysis: list[int] = field(default_factory=list)  # Table 4
    duc_length: int | None = None  # Table 3
    chars: list[tuple[int, int]] = field(default_factory=list)  # Table 2's character budgets: (model length, chars)
    duc_chars: int | None = None  # Table 3's budget in bytes
    char_sweep: list[int] = field(default_factory=list)  # the budgets of the character figure, first length
    seeds: list[int] = field(default_factory=lambda: [0])  # NAUS students per length (Tables 2, 3)
    analysis_seeds: list[int] = field(default_factory=lambda: [0])  # Table 4's other students, Table 6, Figures 3 and 4
    config: dict = field(default_factory=dict)  # the whole configuration: what the outputs' recorded settings should be

    @classmethod
    def from_config(cls, config: dict) -> "ReportSpec":
        try:
            return cls(config["profile"], config["search"]["lengths"], config["train"]["fractions"],
                       config["decode"]["beam_sweep"], [(int(m), str(t)) for m, t in config["decode"]["transfer"]],
                       config["analysis"]["lengths"], config.get("duc", {}).get("length"),
                       [(int(m), int(c)) for m, c in config["decode"].get("chars", [])],
                       config.get("duc", {}).get("chars"), config["decode"].get("char_sweep", []),
                       config["train"].get("seeds", [0]), config["train"].get("analysis_seeds", [0]), config)
        except (KeyError, TypeError, ValueError) as err:
            raise NausError(f"--config: not a profile's resolved configuration ({type(err).__name__}: {err})") from None


def build_report(metrics: Path, build: Path, out: Path, spec: ReportSpec) -> None:
    """Every table and figure the metrics allow, results/{profile}/README.md linking them, the HTML
    report's first page and a flat metrics.json."""
    device = _decode_device(build, spec.lengths)
    sections = [f"# Results: {spec.profile} profile\n",
                "Generated by `snakemake --cores all` from the committed code. ROUGE: rouge-score with stemming "
                f"(about 0.1 below the perl ROUGE-1.5.5 the paper used). Student timing: {device}, batch 64 and "
                "batch 1 (the first test sentences one at a time), model forward included, each table's first-seed "
                "student timed alone (nothing else running); search timing: one CPU core per shard. Speedup: the "
                "teacher's time over the student's at batch 64.\n"]
    scorer = test_scorer(build)  # each test output scored once for the tables, figures and browser
    tables = _tables(metrics, build, spec, device, scorer)
    prints = fingerprints(build, {**spec.config, "profile": spec.profile})
    marks = stale(prints)
    warning = f"STALE: made with other settings than the configuration's ({'; '.join(marks)}). " if marks else ""
    for name, frame, caption in tables:
        if len(frame):
            caption = warning + caption
            body = write_table(frame, out / "tables", name, caption)
            if name in TEXT_TABLES:  # the test set's text: linked, kept out of the README a profile commits
                body = f"[tables/{name}.md](tables/{name}.md)"
            sections.append(f"## {name.replace('table', 'Table ')}\n\n{caption}\n\n{body}\n")
    sections += [section for section in (search_section(build), training_section(build), fingerprint_section(prints))
                 if section]
    if not spec.analysis:
        sections.append("## Table 4\n\nArchitecture analysis: not configured for this profile "
                        "(config key analysis.lengths is empty).\n")
    figures = _figures(metrics, build, out / "figures", spec, scorer)
    if figures:
        sections.append("## Figures\n\n" + "\n".join(f"- [{caption}](figures/{name}.png)" for name, caption in figures) + "\n")
        _write(out / "figures" / "captions.rst", "Figures of this profile: " + "; ".join(
            f"``{name}``: {caption}" for name, caption in figures) + "\n")
    browsable = browser(build, spec.profile, spec.lengths, spec.chars, OUR_SYSTEMS, out / "browse.html", scorer)
    if browsable:
        _write(out / "browse.rst", "Every test sentence with the output of each system and its per-sentence ROUGE: pick "
                                   "two systems and sort by their difference, filter by a word (a static page).\n")
        sections.append("## Every output\n\n[browse.html](browse.html): every test sentence with every system's output "
                        "and its ROUGE; sort by the difference of two systems, filter by a word.\n")
    _write(out / "README.md", "\n".join(sections))
    written = [name for name, frame, _ in tables if len(frame)]
    _write(out / "report.rst", landing_page(spec.profile, build, tables[0][1], written, figures, warning, browsable))
    with atomic_open(out / "fingerprints.json") as handle:
        json.dump({**prints, "stale": marks}, handle, indent=1, sort_keys=True)
    flat = {str(p.relative_to(metrics).with_suffix("")): {k: v for k, v in read_json(p, METRIC_KEYS, METRIC_BOUNDS).items() if k.startswith("rouge")}
            for p in sorted(metrics.rglob("*.json"))}
    with atomic_open(out / "metrics.json") as handle:
        json.dump(flat, handle, indent=1, sort_keys=True)


def _tables(metrics: Path, build: Path, spec: ReportSpec, device: str,
            scorer: SentenceTotals) -> list[tuple[str, pd.DataFrame, str]]:
    """Tables 2, 3, 4 and 6 with their captions (a table the profile does not configure is empty)."""
    profile, duc_length = spec.profile, spec.duc_length
    published = {p.stem: p for p in sorted((metrics / layout.published("")).glob("HC_*.json"))}
    timing = (f"Students timed on {device} (batch 64 and batch 1), each row's first-seed student decoding alone (nothing "
              "else running); the teacher on one CPU core per sentence.")
    quoted = ("Rows marked † are quoted from Liu, Huang & Mou (2022) (perl ROUGE, their GPU); \"published ... "
              "(rescored)\" rows are the authors' released outputs scored by our evaluator.")
    student = spec.config.get("model", {}).get("arch", "naus")
    runs = (f"The NAUS rows' students: {ARCHITECTURES[student].label}. " if student != "naus" else "")
    runs += (f"Each NAUS row is the mean of {len(spec.seeds)} students (seeds {_seed_list(spec.seeds)}, column Seeds: "
            "those run) ± their sd; ΔR's 95% interval resamples the seeds (bootstrap, 1,000 resamples)."
            if len(spec.seeds) > 1 else "One student per row (one seed).")
    significance = ("p vs teacher, p vs truncate: two-sided p-value of a paired approximate randomization test over the "
             "sentences (10,000 seeded sign flips of the per-sentence differences) of the total ROUGE (R-1 + R-2 + R-L), "
             "each NAUS row's per-sentence scores averaged over its seeds, against the teacher and (length control) "
             "against truncation.")
    other_runs = (f"The other students: {len(spec.analysis_seeds)} seeds each." if len(spec.analysis_seeds) > 1
                  else "The other students: one seed each.")
    return [
        ("table2", gigaword_table(metrics, build, spec.lengths, published, spec.chars, spec.seeds, scorer),
         f"Table 2 ({profile}): test-set ROUGE F1 (rouge-score with stemming) of Lead-L, the search teacher and "
         "the NAUS student decoded by truncation, length control and CTC beam search"
         + (", and within a budget of characters by char-control (whole words, at most that many characters with "
            "single spaces; NACC, Liu, Huang & Mou 2022, quoted †)" if spec.chars else "")
         + f"; ΔR (total ROUGE minus the teacher's), time per sample and speedup over search. {runs} {significance} "
         f"{timing} {quoted}"),
        ("table3", duc_table(metrics, build, duc_length, spec.duc_chars, spec.seeds) if duc_length else pd.DataFrame(),
         f"Table 3 ({profile}): DUC2004 (500 inputs, four references each), ROUGE recall of the output cut to 75 "
         f"bytes averaged over the references, for Lead (the first 75 bytes), the L={duc_length} teacher and "
         "student"
         + (f" (also by char-control within {spec.duc_chars} bytes: whole words, nothing for the cut to remove)"
            if spec.duc_chars else "")
         + f"; ΔR over the teacher. Outputs keep the input's digits (the models see them as #). {runs} {significance} "
         f"{timing} {quoted}"),
        ("table4", architecture_table(metrics, build, list(spec.analysis), spec.seeds, spec.analysis_seeds),
         f"Table 4 ({profile}): students of several architectures trained on the same search output, vocabulary "
         "and training loop: encoder-only NAUS (CTC), an autoregressive encoder-decoder (greedy or beam search, "
         "stopping at end of sequence or L words), a vanilla non-autoregressive one that fills exactly L slots, "
         "a non-autoregressive one trained with CTC, and (where run) NAUS whose encoder starts from "
         "all-MiniLM-L6-v2 (its 6 x 384 shape and weights; each of our words starts as the mean of its WordPiece "
         f"embeddings); ΔR over the teacher, time per sample. {runs} {other_runs} {timing}"),
        ("table6", transfer_table(metrics, spec.transfer, spec.analysis_seeds),
         f"Table 6 ({profile}): length transfer, a model trained for i words decoded for j words or 50% of each "
         f"source, by truncation and by length control; ΔR over the teacher searched for j words where there is one. "
         f"Each row: the students of seeds {_seed_list(spec.analysis_seeds)} (mean ± sd where several)."),
        ("case-study", case_study(build, spec.lengths[0], spec.chars, OUR_SYSTEMS),
         f"Case study ({profile}): {CASES} test sentences chosen with a fixed seed, one from each fifth of the test "
         f"set by source length (Sentence: its line in the test set), with the reference, the L={spec.lengths[0]} "
         "teacher's summary and the seed-0 student's by each decoding method (Words: its length)."),
    ]


def _seed_list(seeds: list[int]) -> str:
    return f"{seeds[0]}–{seeds[-1]}" if list(seeds) == list(range(seeds[0], seeds[-1] + 1)) else ", ".join(map(str, seeds))


def training_section(build: Path) -> str | None:
    """Each student's steps, best dev loss, time and device, from its history and timing files."""
    trained = sorted(build.glob(f"{layout.student_dir('*')}/history.json"))
    if not trained:
        return None
    lines = ["| model | steps | best dev loss | training time | device | unalignable pairs skipped |",
             "|---|---|---|---|---|---|"]
    for path in trained:
        info = read_json(path, ("history",))
        timing_file = build / layout.train_timing(path.parent.name)
        timing = read_json(timing_file, ("seconds", "device"), {"seconds": (0, 10**9)}) if timing_file.is_file() else {}
        history = info["history"]
        best = min((e["dev_loss"] for e in history if "dev_loss" in e), default=None)
        minutes = f"{timing['seconds'] / 60:.1f} min" if timing else "–"
        lines.append(f"| {path.parent.name} | {history[-1]['step'] if history else 0} | "
                     f"{'–' if best is None else f'{best:.3f}'} | {minutes} | "
                     f"{timing.get('device', '–')} | {info.get('skipped_pairs', 0)} |")
    return ("## Training\n\nStudents trained on the pool's search output; the checkpoint kept is the one "
            "with the lowest CTC loss on the dev split's search output.\n\n" + "\n".join(lines) + "\n")


def _figures(metrics: Path, build: Path, out: Path, spec: ReportSpec, scorer: SentenceTotals) -> list[tuple[str, str]]:
    """Figures 3 and 4 on the first length, and per length the training curve and summary lengths:
    (name, caption) of each one drawn."""
    figures = []
    first = spec.lengths[0]
    if spec.fractions and fraction_figure(metrics, first, list(spec.fractions), out / "training-size", spec.seeds,
                                          spec.analysis_seeds):
        figures.append(("training-size", f"Figure 3: training-set size vs ΔR (L={first}; mean ± sd over "
                                         f"{len(spec.analysis_seeds)} seeds, {len(spec.seeds)} for the whole pool)."))
    if spec.beams and beam_figure(metrics, build, first, list(spec.beams), out / "beam-size", spec.analysis_seeds):
        figures.append(("beam-size", f"Figure 4: beam size vs ΔR (mean ± sd over {len(spec.seeds)} seeds) and time "
                                     f"(L={first})."))
    if spec.char_sweep and chars_figure(metrics, build, first, list(spec.char_sweep), out / "char-budget"):
        figures.append(("char-budget", f"ROUGE F1 against a budget in characters (char-control, whole words) for the "
                                       f"L={first} student; stars: its {first}-word length control."))
    for length in spec.lengths:
        history = build / layout.student_dir(layout.model(length)) / "history.json"
        if history.is_file():
            name = layout.figure("loss", length)
            loss_curve(history, out / name, f"NAUS L={length}: training curve")
            figures.append((name, f"Training and dev loss of the L={length} student."))
        runs = {m: build / f"{layout.decoded('test', layout.model(length), m, length)}.txt"
                for m in ("truncate", "length-control")}
        if all(p.is_file() for p in runs.values()):
            name = layout.figure("lengths", length)
            length_histogram(runs, out / name, f"Summary lengths, L={length}")
            figures.append((name, f"Summary lengths on the test set: truncation vs length control (L={length})."))
        name = layout.figure("source-length", length)
        if source_length_figure(build, length, spec.seeds, out / name, scorer):
            figures.append((name, f"Total ROUGE F1 by the source's length in words (test sentences per bucket in "
                                  f"brackets) for the teacher and the L={length} student by truncation and length "
                                  f"control (per-sentence scores averaged over {len(spec.seeds)} seed(s))."))
    return figures


HEADLINE_SYSTEMS = ("Search teacher", "NAUS truncate", "NAUS length control")


def landing_page(profile: str, build: Path, table2: pd.DataFrame, tables: list[str],
                 figures: list[tuple[str, str]], warning: str = "", browsable: bool = False) -> str:
    """The HTML report's first page (Snakemake's `report:` description, reStructuredText): what the
    profile reproduces, Table 2's headline rows at L = 10 (else the first length) beside the
    paper's, and links to every table and figure (Snakemake names a result's link by its file name)."""
    stats = build / "data" / "stats.json"
    counts = read_json(stats) if stats.is_file() else {}
    length = 10 if 10 in set(table2["L"]) else int(table2["L"].iloc[0])
    rows = table2[table2["L"] == length].set_index("System")
    title = f"naus: the {profile} profile"
    lines = [title, "=" * len(title), "", *([f"**{warning.strip()}**", ""] if warning else []),
             "This profile reproduces Liu, Huang & Mou (ACL 2022), *Learning Non-Autoregressive Models from Search "
             "for Unsupervised Sentence Summarization*: a search teacher labels unpaired news sentences, an "
             "encoder-only student (NAUS) learns from its output with CTC, and decodes by truncation or by the "
             "length-control dynamic program." + (f" Data: {counts['pool_pairs']:,} pool sentences searched for training, "
                                                f"{counts['test_pairs']:,} test pairs." if counts else ""), "",
             f"Headline: Gigaword-style test set, L = {length} (Table 2; ROUGE F1; ΔR = total ROUGE minus the "
             "teacher's; † quoted from the paper):", ""]
    grid = [("System", "ours R-1 / R-2 / R-L", "ours ΔR", "paper † R-1 / R-2 / R-L", "paper † ΔR")]
    for system in HEADLINE_SYSTEMS:
        ours, paper = (rows.loc[name] if name in rows.index else None for name in (f"{system} (ours)", f"{system} †"))
        grid.append((system, *_scores(ours), *_scores(paper)))
    widths = [max(len(row[k]) for row in grid) for k in range(len(grid[0]))]
    rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    for k, row in enumerate(grid):
        lines += [rule.replace("-", "=") if k == 1 else rule, "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |"]
    lines += [rule, "", "Tables: " + ", ".join(f"`{name}.md`_" for name in tables) + "."]
    if figures:
        lines.append("Figures: " + ", ".join(f"`{name}.png`_ ({caption.rstrip('.')})" for name, caption in figures) + ".")
    if browsable:
        lines.append("Every test output, side by side with its ROUGE (sort by the difference of two systems, filter by a "
                     "word): `browse.html`_.")
    lines += ["", f"Every number comes from the pipeline's own run (``results/{profile}/README.md`` says how it was "
              f"run and timed); ``results/{profile}/fingerprints.json`` holds the SHA-256 of every search output, "
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


def _decode_device(build: Path, lengths: list[int]) -> str:
    for length in lengths:
        for path in sorted((build / layout.decoded("test", layout.model(length), "*", "*")).parent.glob("*.timing.json")):
            timing = read_json(path)
            threads = f", {timing['threads']} thread{'s' if timing['threads'] > 1 else ''}" if "threads" in timing else ""
            return timing.get("device", "cpu") + threads
    return "cpu"
