"""Does a longer training budget let the student beat its teacher? One trained student, scored.

Reads a `naus train` output directory (its history and best checkpoint), decodes the profile's
test set with truncation and length control, scores both and the teacher's test output with the
pipeline's evaluator, and writes the ΔR of each over the teacher beside the dev-loss curve.
The student is trained beforehand with the rule's own command, for instance (gigaword-sample,
L = 10, the profile's settings with a longer budget):

    naus --threads 1 train --train-source build/gigaword-sample/search/pool/source.txt \\
        --train-target build/gigaword-sample/search/pool/L10.txt \\
        --dev-source build/gigaword-sample/search/dev/source.txt \\
        --dev-target build/gigaword-sample/search/dev/L10.txt --min-count 2 --n-layers 4 \\
        --d-model 256 --n-heads 4 --d-ff 1024 --max-len 128 --max-tokens 2048 --lr 1e-3 \\
        --warmup 100 --max-steps 2000 --eval-every 100 --checkpoint-every 100 --resume \\
        --out build/gigaword-sample/study/L10-s2000
    python benchmarks/archive/student_budget.py --train-dir build/gigaword-sample/study/L10-s2000
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from naus import layout
from naus.cli import main as naus
from naus.evaluation.evaluate import evaluate_files
from naus.files import read_json
from naus.outputs import write_json
from naus.student.checkpoint import load_checkpoint


def total(scores: dict) -> float:
    return scores["rouge1"] + scores["rouge2"] + scores["rougeL"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train-dir", required=True)
    parser.add_argument("--build", default="build/gigaword-sample")
    parser.add_argument("--length", type=int, default=10)
    parser.add_argument("--out", default="results/benchmarks/student_budget.json")
    args = parser.parse_args()

    build, train_dir = Path(args.build), Path(args.train_dir)
    reference = str(build / "data/test/title.txt")
    teacher = evaluate_files(str(build / f"{layout.search('test', args.length)}.txt"), [reference], "f1", None, "python")
    state = load_checkpoint(train_dir / "best.pt")["state"]
    report = {"train_dir": str(train_dir), "length": args.length, "best_step": state["step"],
              "best_dev_loss": state["best_dev"], "history": read_json(train_dir / "history.json")["history"],
              "teacher": teacher, "student": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for method in ("truncate", "length-control"):
            out = Path(tmp) / f"{method}.txt"
            code = naus(["--threads", "2", "-q", "decode", "--checkpoint", str(train_dir / "best.pt"),
                         "--input", str(build / "data/test/article.txt"), "--length", str(args.length),
                         "--method", method, "--out", str(out)])
            assert code == 0, f"decoding with {method} failed"
            scores = evaluate_files(str(out), [reference], "f1", None, "python")
            report["student"][method] = {**scores, "delta_r": round(total(scores) - total(teacher), 2)}
            print(method, report["student"][method], flush=True)
    write_json(args.out, report)


if __name__ == "__main__":
    main()
