"""Tables and figures of the paper from the pipeline's metric files.

Rows marked † are quoted from Liu, Huang & Mou (2022) (perl ROUGE-1.5.5, GPU timing); every
other number is read from files the pipeline wrote. ΔR is total ROUGE (R-1 + R-2 + R-L) minus
the search teacher's: ours for our rows and the rescored published outputs, the paper's for †.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pandas as pd

from naus.files import atomic_open, read_json
from naus.shards import read_records

log = logging.getLogger(__name__)

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
COLUMNS = ["System", "Len", "R-1", "R-2", "R-L", "ΔR", "Time (s/sample)", "Speedup"]
OUR_SYSTEMS = (
    ("NAUS truncate", "truncate"),
    ("NAUS length control", "length-control"),
    ("CTC beam search + truncate", "beam"),
)


def _metric_row(name: str, metrics: dict, seconds: float | None) -> dict:
    return {"System": name, "Len": metrics["avg_words"], "R-1": metrics["rouge1"], "R-2": metrics["rouge2"],
            "R-L": metrics["rougeL"], "Time (s/sample)": seconds}


def _total(row: dict) -> float:
    return row["R-1"] + row["R-2"] + row["R-L"]


def _finish(rows: list[dict], teacher: dict | None) -> list[dict]:
    for row in rows:
        row["ΔR"] = round(_total(row) - _total(teacher), 2) if teacher else None
        seconds, base = row.get("Time (s/sample)"), teacher.get("Time (s/sample)") if teacher else None
        row["Speedup"] = f"{base / seconds:.0f}×" if seconds and base else None
    return rows


def teacher_seconds(search_jsonl: Path) -> float | None:
    """Mean search seconds per sentence (one CPU core per shard), from the teacher's records."""
    records = read_records(search_jsonl)
    seconds = [r["seconds"] for r in records if "seconds" in r]
    return sum(seconds) / len(seconds) if seconds else None


def gigaword_table(metrics: Path, build: Path, lengths: list[int], published: dict[str, Path]) -> pd.DataFrame:
    """Table 2: one group of rows per target length."""
    frames = []
    for length in lengths:
        teacher_file = metrics / f"search/test/L{length}.json"
        teacher = _metric_row("Search teacher (ours)", read_json(teacher_file),
                              teacher_seconds(build / f"search/test/L{length}.jsonl"))
        ours = [_metric_row(f"Lead-{length} (ours)", read_json(metrics / f"decode/test/lead-{length}.json"), None), teacher]
        for name, method in OUR_SYSTEMS:
            path = metrics / f"decode/test/L{length}/{method}-{length}.json"
            if path.is_file():
                timing = read_json(build / f"decode/test/L{length}/{method}-{length}.timing.json")
                ours.append(_metric_row(f"{name} (ours)", read_json(path), timing["seconds_per_sample"]))
        rows = _finish(ours, teacher)
        for label, path in sorted(published.items()):
            if label.startswith(f"HC_{length}_"):
                rescored = _metric_row(f"published {label} (rescored)", read_json(path), None)
                rows += _finish([rescored], teacher)
        paper = [dict(zip(["System", "Len", "R-1", "R-2", "R-L", "Time (s/sample)"], r)) for r in PAPER_GIGAWORD.get(length, [])]
        rows += _finish(paper, next((r for r in paper if r["System"].startswith("Search")), None))
        frame = pd.DataFrame(rows, columns=COLUMNS)
        frame.insert(0, "L", length)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def _display(frame: pd.DataFrame) -> pd.DataFrame:
    """Numbers as the paper prints them: two decimals, signed ΔR, short times, '–' when missing."""

    def cell(column: str, value) -> str:
        if value is None or (isinstance(value, float) and pd.isna(value)):
            return "–"
        if column == "ΔR":
            return f"{value:+.2f}"
        if column == "Time (s/sample)":
            return f"{value:.3g}"
        if isinstance(value, float):
            return f"{value:.2f}"
        return str(value)

    return pd.DataFrame({c: [cell(c, v) for v in frame[c].tolist()] for c in frame.columns})


def write_table(frame: pd.DataFrame, out_dir: Path, name: str, caption: str) -> list[Path]:
    """The same table as Markdown, CSV and LaTeX."""
    shown = _display(frame)
    paths = [out_dir / f"{name}.md", out_dir / f"{name}.csv", out_dir / f"{name}.tex"]
    with atomic_open(paths[0]) as handle:
        handle.write(f"{caption}\n\n{shown.to_markdown(index=False, disable_numparse=True)}\n")
    with atomic_open(paths[1]) as handle:
        frame.to_csv(handle, index=False)
    with atomic_open(paths[2]) as handle:
        handle.write(shown.to_latex(index=False, caption=caption, label=f"tab:{name}"))
    return paths


def loss_curve(history: Path, out: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    entries = read_json(history)["history"]
    steps = [e["step"] for e in entries]
    fig, ax = plt.subplots(figsize=(5, 3.2))
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
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.2))
    for label, path in files.items():
        lengths = [len(line.split()) for line in path.read_text(encoding="utf-8").splitlines()]
        ax.hist(lengths, bins=range(0, max(lengths + [1]) + 2), alpha=0.6, label=label)
    ax.set_xlabel("summary length (words)")
    ax.set_ylabel("test samples")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    _save(fig, out)


def _save(fig, out: Path) -> None:
    import matplotlib.pyplot as plt

    out.parent.mkdir(parents=True, exist_ok=True)
    for suffix in (".png", ".pdf"):
        with atomic_open(out.with_suffix(suffix), "wb") as handle:
            fig.savefig(handle, format=suffix[1:], dpi=150)
    plt.close(fig)


def summary_json(frame: pd.DataFrame) -> str:
    return json.dumps(json.loads(frame.to_json(orient="records")), indent=2)


def build_report(metrics: Path, build: Path, lengths: list[int], out: Path, profile: str) -> None:
    """Every table and figure the metrics allow, and results/{profile}/README.md linking them."""
    published = {p.stem: p for p in sorted((metrics / "published").glob("HC_*.json"))}
    sections = [f"# Results: {profile} profile\n",
                "Generated by `snakemake --cores all` from the committed code; see the captions for data and device.\n"]
    table2 = gigaword_table(metrics, build, lengths, published)
    device = _decode_device(build, lengths)
    caption = (f"Table 2 ({profile}): test-set ROUGE F1 (rouge-score, stemming). Our times: search on one CPU core per "
               f"shard; NAUS decoding at batch 64 on {device}, model forward included. † quoted from the paper.")
    write_table(table2, out / "tables", "table2", caption)
    sections.append(f"## Table 2\n\n{caption}\n\n{(out / 'tables' / 'table2.md').read_text().split(chr(10), 2)[2]}")
    figures = []
    for length in lengths:
        history = build / f"train/L{length}/history.json"
        if history.is_file():
            name = f"loss-L{length}"
            loss_curve(history, out / "figures" / name, f"NAUS L={length}: training curve")
            figures.append((name, f"Training and dev loss of the L={length} student."))
        runs = {m: build / f"decode/test/L{length}/{m}-{length}.txt" for m in ("truncate", "length-control")}
        if all(p.is_file() for p in runs.values()):
            name = f"lengths-L{length}"
            length_histogram(runs, out / "figures" / name, f"Summary lengths, L={length}")
            figures.append((name, f"Summary lengths on the test set: truncation vs length control (L={length})."))
    if figures:
        sections.append("## Figures\n\n" + "\n".join(f"- [{caption}](figures/{name}.png)" for name, caption in figures) + "\n")
    with atomic_open(out / "README.md") as handle:
        handle.write("\n".join(sections))


def _decode_device(build: Path, lengths: list[int]) -> str:
    for length in lengths:
        for timing in sorted((build / f"decode/test/L{length}").glob("*.timing.json")):
            return read_json(timing).get("device", "cpu")
    return "cpu"
