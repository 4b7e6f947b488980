"""A teacher with the same bytes on every x86 CPU: MiniLM's int8 ONNX model with its attention Softmax written out
(the pipeline's export) against the export before it (onnxruntime's Softmax kernel) and MiniLM in PyTorch (fp32,
`search.embedder: torch`), quality and cost on both dev splits.

onnxruntime picks its Softmax kernel by the CPU, and its AVX-512 and AVX2 kernels differ in the last bit, which the
int8 rounding of the next layers carries to other summaries (3 of 150 of the demo's test summaries at L = 10 under
AVX2-only emulation); every other kernel of the int8 model gave the same bits under that emulation. `naus
export-onnx` now writes Softmax as ReduceMax, Sub, Exp, ReduceSum and Div
(`naus.teacher.similarity._portable_softmax`). PyTorch runs on the AVX2 kernels `naus` pins on every x86-64 CPU
(`naus.cli.portable_cpu_kernels`). Each embedder runs the `fast` preset with its learned estimate fitted as
`naus fit-estimate` fits it (the pool's first `FIT_SENTENCES`), one process per length on one thread, as
`naus --threads 1` runs a search shard. Writes results/benchmarks/teacher_portable.json.

    python -m benchmarks.archive.teacher_portable --data build/gigaword-sample/data \
        --lm build/gigaword-sample/lm/lm.bin --onnx build/gigaword-sample/similarity/minilm-int8.onnx \
        --onnx-softmax-kernel build/benchmarks/minilm-int8-softmax-kernel.onnx
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.archive.teacher_default import (
    FAST, fitted, per_length, scored_splits, split_pairs, study_parser, study_report, teacher_for,
)
from naus.cli import portable_cpu_kernels
from naus.files import read_lines, write_json
from naus.settings import FIT_SENTENCES


def run_length(job) -> list[dict]:
    args, length = job
    data = Path(args.data)
    pool = read_lines(data / "pool" / "article.txt")[:FIT_SENTENCES]
    splits = split_pairs(data)
    rows = []
    embedders = (("onnx-int8", args.onnx), ("onnx-int8, Softmax kernel", args.onnx_softmax_kernel), ("torch", None))
    for embedder, onnx in embedders:
        estimate, fit = fitted(args, onnx, length, pool, reference=False)
        teacher = teacher_for(args, onnx, length, estimate, **FAST)
        row = {"length": length, "embedder": embedder, "fit": fit, **scored_splits(teacher, splits)}
        print(row, flush=True)
        rows.append(row)
    return rows


def main() -> None:
    parser = study_parser(__doc__.splitlines()[0], "results/benchmarks/teacher_portable.json",
                          "MiniLM as the pipeline exports it (7-bit weights)")
    parser.add_argument("--onnx-softmax-kernel", required=True,
                        help="MiniLM as exported before, with onnxruntime's Softmax node "
                             "(`naus export-onnx` of 0ae3740)")
    args = parser.parse_args()
    portable_cpu_kernels()  # before the workers start: they inherit the pin, as every `naus` process sets it
    write_json(args.out, study_report(Path(args.data), per_length(run_length, args)))


if __name__ == "__main__":
    main()
