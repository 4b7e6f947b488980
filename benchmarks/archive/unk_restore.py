"""Restoring `<unk>`: does giving each `<unk>` of a student's summary back its source word raise dev ROUGE?

A student's vocabulary holds the words seen at least `train.min_count` times in its training sources; the
others read and decode as `<unk>`. A CTC student's slot i reads source word i, so the word under the slot
that emitted `<unk>` is the one it stands for (`naus.decoding.summarizer.restore_unknown`). Per student of a
profile's Table 2 (each length and seed) and per word-budget decoding method, the dev split is decoded with
and without the restoration and scored against the dev titles (rouge-score, as the pipeline scores).

Writes results/benchmarks/unk_restore.json.

    python -m benchmarks.archive.unk_restore --profile demo
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from benchmarks.common import cpu_name
from naus import layout
from naus.evaluation.evaluate import rouge
from naus.files import read_lines, write_json
from naus.methods import METHODS, WORDS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="demo")
    parser.add_argument("--methods", nargs="+", default=["length-control", "truncate"],
                        choices=[name for name, method in METHODS.items() if method.budget == WORDS])
    parser.add_argument("--out", default="results/benchmarks/unk_restore.json")
    args = parser.parse_args()

    from naus.decoding.summarizer import Summarizer

    build = Path("build") / args.profile
    articles = read_lines(build / layout.DECODE_SOURCES["dev"])
    titles = read_lines(build / "data" / "dev" / "title.txt")
    students = sorted(path.parent.name for path in (build / "train").glob("*/best.pt")
                      if (student := layout.parse_model(path.parent.name)).arch == "naus" and student.fraction == 1)
    rows = []
    for name in students:
        summarizer = Summarizer.from_checkpoint(build / "train" / name / "best.pt", "cpu")
        length = layout.parse_model(name).length
        for method in args.methods:
            row = {"student": name, "method": method, "length": length}
            for restore in (False, True):
                results = summarizer.summarize(articles, length=length, method=method, raw=False, restore=restore)
                summaries = [r.summary for r in results]
                scores = rouge(summaries, [titles])
                row["restored" if restore else "kept"] = {
                    "total": round(sum(scores[m] for m in ("rouge1", "rouge2", "rougeL")), 2),
                    "summaries_with_unk": sum("<unk>" in s.split() for s in summaries)}
            row["gain"] = round(row["restored"]["total"] - row["kept"]["total"], 2)
            print(row, flush=True)
            rows.append(row)
    gains = [row["gain"] for row in rows]
    write_json(args.out, {
        "data": f"build/{args.profile}: the dev split ({len(articles)} pairs), Table 2's students (every length and "
                "seed), decoded at their own length",
        "machine": cpu_name(), "rows": rows,
        "mean_gain": round(statistics.mean(gains), 2) if gains else None,
        "gains_positive": sum(g > 0 for g in gains), "gains_negative": sum(g < 0 for g in gains)})


if __name__ == "__main__":
    main()
