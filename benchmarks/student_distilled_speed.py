"""What the distilled encoders' states cost where `student_states.json` times MiniLM's (issue 88: the student at 6 ms
a sentence on plain AVX2, MiniLM's states most of it): the first `--samples` Gigaword test articles at batch 64 on two
threads, fp32 PyTorch on the portable AVX2 kernels, each encoder's time the median of student_states' passes, the
encoders taking turns in each pass. The encoders: MiniLM's six layers, and every one `student_distilled.py` kept under
`--work` (its folders d*, each named by its layers and recipe). Speed only: their students' dev totals are that study's.

    python -m benchmarks.student_distilled_speed --build build/gigaword-sample

Writes results/benchmarks/student_distilled_speed.json: per encoder, the states' ms a sentence; with the bundled
student's own time after its states (`student_states.json`'s fp32 PyTorch row, the same sentences and batch), the
student's total here and projected on plain AVX2 at the ratio issue 88 measured for the bundled student.

Findings (the JSON's numbers, as read when it was written; Markdown):

## Measured

Not yet run.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from benchmarks.student_states import median_seconds
from naus import layout
from naus.device import cpu_name, isa
from naus.files import read_json, read_lines, write_json

# Issue 88's plain AVX2 machine: the bundled student 12.0 ms a sentence (2 threads, batch 64, states included) where
# student_states.json's fp32 PyTorch row totals 7.234 here: the ratio a total here is projected by.
AVX2_STUDENT_RATIO = round(12.0 / 7.234, 2)
GOAL_MS = 6.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=Path(layout.profile_dir("build", "gigaword-sample")))
    parser.add_argument("--work", type=Path, default=Path("build/benchmarks/student_layers"))
    parser.add_argument("--samples", type=int, default=512)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("results/benchmarks/student_distilled_speed.json"))
    args = parser.parse_args()
    from naus.cli import portable_cpu_kernels

    portable_cpu_kernels()
    import torch
    from safetensors.torch import load_file

    from naus.student.frozen import Encoder

    torch.set_num_threads(args.threads)
    encoders = {"whole 6": Encoder()}
    for folder in sorted(args.work.glob("d*")):
        if (folder / "encoder.json").is_file():
            recipe = read_json(folder / "encoder.json")
            encoder = Encoder()
            encoder.model.w, encoder.model.layers = load_file(folder / "encoder.safetensors"), len(recipe["layers_from"])
            encoders[f"distilled {folder.name}"] = encoder
    sentences = read_lines(args.build / layout.DECODE_SOURCES["test"])[: args.samples]
    seconds = median_seconds({name: lambda e=encoder: e.encode(sentences) for name, encoder in encoders.items()})
    after = read_json(Path("results/benchmarks/student_states.json"))["fp32-torch"]["batch64"]["student_and_decoder_ms"]
    rows = {}
    for name, encoder in encoders.items():
        states = round(1000 * seconds[name] / len(sentences), 3)
        rows[name] = {"layers": encoder.model.layers, "states_ms": states,
                      "states_ratio": round(seconds[name] / seconds["whole 6"], 3), "student_total_ms": round(states + after, 3),
                      "avx2_projected_ms": round((states + after) * AVX2_STUDENT_RATIO, 2)}
        print(name, rows[name], flush=True)
    write_json(args.out, {"machine": f"{cpu_name()} ({', '.join(isa())}), {os.cpu_count()} cores, {args.threads} threads",
                          "kernels": "PyTorch pinned to AVX2 (naus.cli.portable_cpu_kernels)", "samples": len(sentences),
                          "batch": 64, "student_and_decoder_ms": after, "avx2_ratio": AVX2_STUDENT_RATIO,
                          "goal_ms": GOAL_MS, "encoders": rows})


if __name__ == "__main__":
    main()
