"""Restoring `<unk>`: does giving each `<unk>` of a student's summary back its source word raise dev ROUGE?

A student's vocabulary holds the words seen at least `train.min_count` times in its training sources; the
others read and decode as `<unk>`. A CTC student's slot i reads source word i, so the word under the slot
that emitted `<unk>` is the one it stands for (`naus.decoding.summarizer.restore_unknown`). Per student of a
profile's Table 2 (each length and seed) and per word-budget decoding method, the dev split is decoded with
and without the restoration and scored against the dev titles (rouge-score, as the pipeline scores).

Writes results/benchmarks/unk_restore.json.

    python -m benchmarks.archive.unk_restore --profile demo

Findings (the JSON's numbers, as read when it was written; Markdown):

## Restoring `<unk>` in the decodings the pipeline scores (`unk_restore.json`)

`python -m benchmarks.archive.unk_restore --profile demo` after `make demo` (this 2-core AMD EPYC, 28 November
2026):
the demo's students (150 steps, words seen once are `<unk>`) decode the 150 dev pairs with and without giving
each `<unk>` back the source word under the slot that emitted it (`naus.decoding.summarizer.restore_unknown`, what
`naus summarize` already did for raw text). Dev total ROUGE: length control 45.21 → **50.89** (L = 10, 63
summaries held `<unk>`) and 41.29 → **46.64** (L = 8, 67); truncation 40.85 → 41.86 and 38.09 → 39.05. So
`naus decode` restores by default (`--keep-unk` keeps the token), and the demo's length control then scored
above Lead at both lengths (Table 2; with 1,500 searched pairs and 150 steps, at L = 8 only: ΔR −9.87 against
Lead's −15.09, −12.92 against −11.44 at L = 10; in today's demo, 800 pairs, 100 steps and the 20-state teacher,
at both: −11.77 against −14.56 at L = 8, −11.87 against −12.96 at L = 10; with 600 pairs, the 100-sentence estimate
and the new splits of 28 November: −7.84 against −12.45 and −8.60 against −10.93). The gigaword-sample students
(vocabulary of words seen twice in 35k sources) have far
fewer `<unk>`; their effect will show when the lease retrains them.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from naus.device import cpu_name
from naus import layout
from naus.evaluation.evaluate import rouge
from naus.files import read_lines
from naus.outputs import write_json
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
