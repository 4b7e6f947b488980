"""How many states the fast teacher encodes: its cost is MiniLM over the states its learned estimate ranks best
(three quarters of a sentence's time at 30 states), so fewer states buy speed; what do they cost in quality?

The `fast` preset as the pipeline runs it (its estimate fitted once per length as `naus fit-estimate` does, on the
pool's first `FIT_SENTENCES` sentences), with `rerank_exact` of 30 (the preset), 20 and 15, on the dev split and the
select split (held out from the pool, never learned from), one process per length on one thread each, as
`naus --threads 1` runs a search shard. Writes results/benchmarks/teacher_states.json.

    python -m benchmarks.archive.teacher_states --data build/gigaword-sample/data \
        --lm build/gigaword-sample/lm/lm.bin --onnx build/gigaword-sample/similarity/minilm-int8.onnx
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.archive.teacher_default import (
    FAST, fitted, per_length, scored_splits, split_pairs, study_parser, study_report, teacher_for,
)
from naus.files import read_lines, write_json
from naus.settings import FIT_SENTENCES

STATES = (30, 20, 15)


def run_length(job) -> list[dict]:
    args, length = job
    data = Path(args.data)
    estimate, fit = fitted(args, args.onnx, length, read_lines(data / "pool" / "article.txt")[:FIT_SENTENCES],
                           reference=False)
    splits = split_pairs(data)
    rows = []
    for states in STATES:
        teacher = teacher_for(args, args.onnx, length, estimate, **{**FAST, "rerank_exact": states})
        row = {"length": length, "rerank_exact": states, "fit": fit, **scored_splits(teacher, splits)}
        print(row, flush=True)
        rows.append(row)
    return rows


def main() -> None:
    parser = study_parser(__doc__.splitlines()[0], "results/benchmarks/teacher_states.json")
    args = parser.parse_args()
    write_json(args.out, study_report(Path(args.data), per_length(run_length, args)))


if __name__ == "__main__":
    main()
