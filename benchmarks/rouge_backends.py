"""rouge-score against the perl ROUGE-1.5.5 (the paper's) on the authors' published outputs.

Writes results/benchmarks/rouge_backends.json.

    NAUS_DATA=../shared/data python benchmarks/rouge_backends.py
"""

from __future__ import annotations

import argparse
import ast
import os
from pathlib import Path

from naus.evaluation.evaluate import rouge
from naus.plumbing.files import read_lines
from naus.plumbing.outputs import write_json


def duc_order(path: Path, lines: list[str]) -> list[str]:
    text = path.read_text()
    index = ast.literal_eval(text[text.index("[") : text.rindex("]") + 1])
    ordered = [""] * len(lines)
    for k, i in enumerate(index):
        ordered[i] = lines[k]
    return ordered


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.environ.get("NAUS_DATA", "../shared/data"))
    parser.add_argument("--out", default="results/benchmarks/rouge_backends.json")
    args = parser.parse_args()
    data = Path(args.data)
    giga = data / "published/naus/gigaword"
    duc = data / "published/naus/duc2004"
    jobs = {
        name: (read_lines(giga / f"{name}.txt"), [read_lines(giga / "ref_summary.txt")], "f1", None)
        for name in ("HC_8_truncating", "HC_8_length_control", "HC_10_truncating", "HC_10_length_control")
    }
    duc_refs = [read_lines(data / f"duc2004/task1_ref{i}.txt") for i in range(4)]
    for name in ("HC_13_truncating", "HC_13_length_control"):
        jobs[f"duc2004 {name}"] = (duc_order(duc / "summary_index.txt", read_lines(duc / f"{name}.txt")), duc_refs, "recall", 75)
    rows = {}
    for name, (hyps, refs, metric, max_bytes) in jobs.items():
        python = rouge(hyps, refs, metric, max_bytes, "python")
        perl = rouge(hyps, refs, metric, max_bytes, "perl")
        rows[name] = {
            "python": [python[k] for k in ("rouge1", "rouge2", "rougeL")],
            "perl": [perl[k] for k in ("rouge1", "rouge2", "rougeL")],
            "perl_minus_python": [round(perl[k] - python[k], 2) for k in ("rouge1", "rouge2", "rougeL")],
        }
        print(name, rows[name], flush=True)
    write_json(args.out, {"data": "the NAUS authors' published outputs (../shared/data/published)",
                          "metric": "Gigaword F1; DUC2004 recall at 75 bytes, 4 references", "rows": rows})


if __name__ == "__main__":
    main()
