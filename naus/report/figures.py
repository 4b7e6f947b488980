"""The report's figures, each drawn from its declaration (`naus.pipeline.declarations.Figure`) with its caption: a
figure whose input is missing is an error naming the file, never a figure left out."""

from __future__ import annotations

import statistics
from pathlib import Path

import pandas as pd

from naus.pipeline import layout
from naus.plumbing.files import read_lines
from naus.methods import BEAM, CHAR_CONTROL, LENGTH_CONTROL, SOURCE_ORDER, TRUNCATE
from naus.plumbing.outputs import atomic_open
from naus.plumbing.provenance import read_history
from naus.evaluation.significance import seed_mean
from naus.report.rows import first_timing, read_metrics, read_row
from naus.report.sentences import SentenceTotals, by_source_length
from naus.pipeline.declarations import Figure, Spec


def _seeds(n: int) -> str:
    return "one seed" if n == 1 else f"mean ± sd over {n} seeds"


def caption(figure: Figure, spec: Spec) -> str:
    n, seeds, analysis = figure.length, len(spec.seeds), len(spec.analysis_seeds)
    return {
        "training-size": f"Figure 3: training-set size vs ΔR (L={n}; {_seeds(analysis)}, {_seeds(seeds)} for the "
                         "whole pool).",
        "beam-size": f"Figure 4: beam size vs ΔR ({_seeds(analysis)}) and time (L={n}). Look at the gap between the "
                     "lines: length control is nearly flat, its dynamic program already exact at beam 1 but for "
                     "merged repeats (Theorem 1), so a wider beam costs time, not ROUGE; CTC beam search "
                     "truncates, whatever its beam.",
        "char-budget": f"ROUGE F1 against a budget in characters (char-control, whole words) for the L={n} student; "
                       f"stars: its {n}-word length control.",
        "loss": f"Training and dev loss of the L={n} student.",
        "lengths": f"Summary lengths on the test set: truncation vs length control (L={n}).",
        "source-length": f"Total ROUGE F1 by the source's length in words (test sentences per bucket in brackets) for "
                         f"the teacher and the L={n} student by truncation and length control (per-sentence scores "
                         f"averaged over {seeds} seed{'s' if seeds > 1 else ''}).",
        "quality-speed": f"Quality against speed (L={n}): total test-set ROUGE F1 against seconds per sentence "
                         "(log scale). Left, ours on a CPU, each a sentence at a time on one thread: the search "
                         "teacher and the students, a colour per generation and a marker per decoding method (Table "
                         "1's speedups divide these times); dotted: rows with no "
                         "time (Lead, rescored released outputs). "
                         + ("Right, apart: the paper's rows at the times it reports (†, their GPU). " if figure.quoted
                            else "")
                         + "Look up and to the left: better and faster.",
    }[figure.kind]


def draw(figure: Figure, metrics: Path, build: Path, out: Path, scorer: SentenceTotals) -> None:
    """`figure` as figures/{name}.png and .pdf."""
    DRAW[figure.kind](figure, metrics, build, out / figure.name, scorer)


def _axes(columns: int = 1):
    """A new figure for the report: matplotlib without a display, one row of `columns` axes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(1, columns, figsize=(5 if columns == 1 else 8, 3.2))


def _save(fig, out: Path) -> None:
    """The figure as PNG and PDF (undated, so that a redraw gives the same bytes), then closed."""
    import matplotlib.pyplot as plt

    for suffix, metadata in ((".png", {}), (".pdf", {"CreationDate": None})):
        with atomic_open(out.with_suffix(suffix), "wb") as handle:
            fig.savefig(handle, format=suffix[1:], dpi=150, metadata=metadata, bbox_inches="tight")  # nothing clipped
    plt.close(fig)


# a legend below the axes, where it covers no point or error bar
BELOW = {"loc": "upper center", "bbox_to_anchor": (0.5, -0.22), "ncol": 2, "fontsize": 7, "frameon": False}


def _finish(fig, ax, out: Path, xlabel: str, ylabel: str, title: str, **legend) -> None:
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(**legend)
    fig.tight_layout()
    _save(fig, out)


def loss_curve(figure: Figure, metrics: Path, build: Path, out: Path, scorer: SentenceTotals) -> None:
    entries = read_history(build / figure.history)["history"]
    steps = [e["step"] for e in entries]
    fig, ax = _axes()
    ax.plot(steps, [e["train_loss"] for e in entries], label="train (smoothed)")
    if all("dev_loss" in e for e in entries):  # the same measure, on one axis: the gap between them is the point
        ax.plot(steps, [e["dev_loss"] for e in entries], label="dev (on search output)")
    ax.set_ylim(bottom=0)
    _finish(fig, ax, out, "step", "CTC loss per word", f"NAUS L={figure.length}: training curve")


def length_histogram(figure: Figure, metrics: Path, build: Path, out: Path, scorer: SentenceTotals) -> None:
    fig, ax = _axes()
    for series in figure.series:
        (_, (stem,)), = series.points
        lengths = [len(line.split()) for line in read_lines(build / f"{stem}.txt")]
        ax.hist(lengths, bins=[k - 0.5 for k in range(0, max(lengths + [1]) + 2)], alpha=0.6, label=series.label)
    ax.xaxis.get_major_locator().set_params(integer=True)  # a bar centred on each whole length
    _finish(fig, ax, out, "summary length (words)", "test samples", f"Summary lengths, L={figure.length}")


def source_length_figure(figure: Figure, metrics: Path, build: Path, out: Path, scorer: SentenceTotals) -> None:
    """Total ROUGE against the source's length (buckets of words) for the teacher and the student."""
    labels, counts, means = by_source_length(build, {s.label: list(s.points[0][1]) for s in figure.series}, scorer)
    fig, ax = _axes()
    for label, values in means.items():
        ax.plot(range(len(labels)), values, marker="o", label=label)
    ax.set_xticks(range(len(labels)), [f"{label}\n({n})" for label, n in zip(labels, counts)])
    _finish(fig, ax, out, "source length in words (sentences)", "total ROUGE F1 (R-1 + R-2 + R-L)",
            f"ROUGE by source length, L={figure.length}")


def _deltas(metrics: Path, stems: tuple[str, ...], teacher: dict) -> list[float]:
    """Each seed's ΔR over the teacher."""
    base = teacher["rouge1"] + teacher["rouge2"] + teacher["rougeL"]
    runs = (read_metrics(metrics / f"{s}.json") for s in stems)
    return [m["rouge1"] + m["rouge2"] + m["rougeL"] - base for m in runs]


def _teacher(metrics: Path, figure: Figure) -> dict:
    return read_metrics(metrics / f"{layout.search('test', figure.length)}.json")


def fraction_figure(figure: Figure, metrics: Path, build: Path, out: Path, scorer: SentenceTotals) -> None:
    """Figure 3: training-set size vs ΔR, for truncation and length control (mean ± sd over seeds)."""
    teacher = _teacher(metrics, figure)
    fig, ax = _axes()
    for series in figure.series:
        runs = [_deltas(metrics, stems, teacher) for _, stems in series.points]
        ax.errorbar([x for x, _ in series.points], [statistics.mean(d) for d in runs],
                    yerr=[statistics.stdev(d) if len(d) > 1 else 0.0 for d in runs], marker="o", capsize=3,
                    label=series.label)
    ax.axhline(0, color="grey", linewidth=0.8)
    _finish(fig, ax, out, "training pairs used (% of the searched pool)", "ΔR over the teacher",
            f"Training-set size, L={figure.length}", **BELOW)


def beam_figure(figure: Figure, metrics: Path, build: Path, out: Path, scorer: SentenceTotals) -> None:
    """Figure 4: beam size vs ΔR (mean ± sd over seeds) and vs time per sample, for length control and CTC beam
    search (its points: `beam_points`, which its claims read too)."""
    points = beam_points(figure, metrics, build, scorer)
    fig, (left, right) = _axes(2)
    for decoder, rows in points.groupby("Decoder", sort=False):
        xs = rows["Beam"].tolist()
        left.errorbar(xs, rows["ΔR"].tolist(), yerr=rows["ΔR sd"].fillna(0.0).tolist(), marker="o", capsize=3,
                      label=decoder)
        right.plot(xs, (1000 * rows["Time (s/sample)"]).tolist(), marker="o", label=decoder)
    for ax in (left, right):
        ax.set_xlabel("beam size")
        ax.set_xticks(xs)  # whole beams only
    left.set_ylabel("ΔR over the teacher")
    batch = points["Batch"].iloc[0]  # as the timing job ran it
    right.set_ylabel(f"ms per sample (batch {batch})" if batch else "ms per sample")
    right.set_ylim(bottom=0)  # from zero: a few percent drawn as a few percent
    left.legend(**BELOW)
    fig.suptitle(f"Beam size, L={figure.length}")
    fig.tight_layout()
    _save(fig, out)


def beam_points(figure: Figure, metrics: Path, build: Path, scorer: SentenceTotals) -> pd.DataFrame:
    """Figure 4's points as a frame its claims read: per decoder and beam, ΔR over the teacher (mean, sd and number
    of seeds), the per-sentence totals averaged over the seeds (None without the outputs), the times (the timing job's
    batch, and batch 1 on one thread) and that batch."""
    teacher, rows = _teacher(metrics, figure), []
    for series in figure.series:
        for beam, stems in series.points:
            deltas, timing = _deltas(metrics, stems, teacher), first_timing(build, stems)
            runs = [scorer(build / f"{stem}.txt") for stem in stems]
            rows.append({"Decoder": series.label, "Beam": beam, "ΔR": statistics.mean(deltas),
                         "ΔR sd": statistics.stdev(deltas) if len(deltas) > 1 else None, "Seeds": len(deltas),
                         "Scores": seed_mean(runs) if all(r is not None for r in runs) else None,
                         "Time (s/sample)": timing["seconds_per_sample"],
                         "Time b=1 (s/sample)": timing.get("batch1_seconds_per_sample"),
                         "Batch": timing.get("batch_size")})
    return pd.DataFrame(rows)


def chars_figure(figure: Figure, metrics: Path, build: Path, out: Path, scorer: SentenceTotals) -> None:
    """ROUGE F1 against the budget in characters (char-control), with the student's word length control
    (at the mean characters of its summaries) for comparison."""
    budgets, reference = figure.series
    points = [(budget, read_metrics(metrics / f"{stem}.json")) for budget, (stem,) in budgets.points]
    (_, (words,)), = reference.points
    scores = read_metrics(metrics / f"{words}.json")
    summaries = read_lines(build / f"{words}.txt")
    mean_chars = sum(len(s.encode()) for s in summaries) / max(len(summaries), 1)
    fig, ax = _axes()
    for key, label in (("rouge1", "R-1"), ("rouge2", "R-2"), ("rougeL", "R-L")):
        line, = ax.plot([b for b, _ in points], [m[key] for _, m in points], marker="o", label=f"{label}, char control")
        ax.plot([mean_chars], [scores[key]], marker="*", markersize=12, color=line.get_color(), linestyle="none",
                label=f"{label}, {figure.length} words (mean {mean_chars:.0f} chars)")
    _finish(fig, ax, out, "budget (characters, whole words)", "ROUGE F1",
            f"Character budgets, L={figure.length} student", **BELOW)


# a decoding method's marker: the first whose label a row's holds (source order's label holds length control's)
MARKERS = {SOURCE_ORDER.label: "s", BEAM.label: "^", CHAR_CONTROL.label: "D", TRUNCATE.label: "v",
           LENGTH_CONTROL.label: "o"}


def _style(label: str, families: dict[str, str]) -> dict:
    """A row's colour by its family (the teacher, each generation of students, each peer) and marker by its
    decoding method, so that a reader tells them apart without a legend entry each."""
    family = label.split(",", 1)[1].split("(")[0].strip() if ", generation" in label else (
        "students" if label.startswith(("NAUS", "CTC")) else label.split(" (")[0])
    colour = families.setdefault(family, f"C{len(families) % 10}")
    method = next((name for name in MARKERS if name in label), None)
    return {"color": colour, "marker": MARKERS.get(method, "o")}


def quality_speed_figure(figure: Figure, metrics: Path, build: Path, out: Path, scorer: SentenceTotals) -> None:
    """Total ROUGE against seconds per sentence (log): left, each timed row of Table 1 at this length (ours, a CPU)
    and the rows with no time (Lead, rescored outputs) as dotted lines; right, apart, the paper's rows at the times
    it reports (its GPU). Legend outside the axes."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    fig, axes = _axes(2 if figure.quoted else 1)
    ours, paper = (axes[0], axes[1]) if figure.quoted else (axes, None)
    fig.set_size_inches(9, 4)
    untimed, families = [], {}
    for row in figure.rows:
        read = read_row(row, metrics, build)
        total, seconds = read["R-1"] + read["R-2"] + read["R-L"], read.get("Time b=1 (s/sample)")  # like for like
        if seconds:
            ours.scatter([seconds], [total], label=row.label.replace(" (ours)", ""), zorder=3, alpha=0.8,
                         edgecolors="white", linewidths=0.5, **_style(row.label, families))  # a cluster stays legible
        else:
            untimed.append((row.label, total))
    for k, (label, total) in enumerate(untimed):  # in the legend: their labels would overlap on the axes
        ours.axhline(total, linestyle=(0, (1, 1 + k % 3)), color=f"C{(len(families) + k) % 10}", linewidth=1,
                     label=f"{label.replace(' (ours)', '')} (no time)")
    ours.set_xscale("log")
    ours.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))  # 1-2-5 in each decade: ours span about one
    ours.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    ours.xaxis.set_minor_formatter(NullFormatter())
    ours.set_xlabel("s per sentence, ours (one at a time, one thread)")  # the caption says: log scale
    ours.set_ylabel("total ROUGE F1 (R-1 + R-2 + R-L)")
    ours.set_title(f"Ours, L={figure.length}")
    if paper is not None:
        paper.sharey(ours)  # one ROUGE scale: the two panels differ in their clocks only
        for row in figure.quoted:
            if row.seconds and row.r1 is not None:
                total = row.r1 + row.r2 + row.rl
                paper.scatter([row.seconds], [total], facecolors="none", edgecolors="grey", zorder=3)
                paper.annotate(row.label, (row.seconds, total), fontsize=7, color="grey", xytext=(4, -3),
                               textcoords="offset points")
        paper.set_xscale("log")
        paper.set_xlabel("s per sentence, the paper's (GPU)")
        paper.set_title("The paper's, †")
    fig.tight_layout()  # the axes laid out first: the legend below the figure takes no room from them
    fig.legend(*ours.get_legend_handles_labels(), fontsize=6, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=3,
               frameon=False)
    _save(fig, out)


DRAW = {"training-size": fraction_figure, "beam-size": beam_figure, "char-budget": chars_figure, "loss": loss_curve,
        "lengths": length_histogram, "source-length": source_length_figure, "quality-speed": quality_speed_figure}
