"""GPU check of training and decoding: NAUS and Table 4's students trained and decoded on CUDA.

On the GPU machine (`run`): trains every architecture for one length on a profile's search
output with that profile's model and training settings, through the same `naus train` and
`naus decode` calls the pipeline's rules make; decodes the test set with every method at
batch 64 and at batch 1; checks that CPU and GPU give the same log-probabilities from the same
weights; writes summaries, histories and timings as one archive plus a JSON under --out.
Here (`score`): ROUGE of those summaries (rouge-score is not on the GPU machine), written with
the timings to results/benchmarks/gpu_students.json.

    python benchmarks/gpu_students.py run --build build/gigaword-sample --out $OUT
    python benchmarks/gpu_students.py score --archive gpu_students.tar.gz --timings gpu_students.json
"""

from __future__ import annotations

import argparse
import json
import tarfile
import tempfile
from pathlib import Path

import torch
import yaml

from naus.architectures import ARCHITECTURES, CTC_METHODS
from naus.cli import main as naus
from naus.files import read_json, write_json

ROOT = Path(__file__).resolve().parents[1]


def resolved(profile: Path) -> dict:
    """A profile with the schema's defaults filled in, as the workflow sees it."""
    def fill(config: dict, schema: dict) -> dict:
        for key, spec in schema.get("properties", {}).items():
            if key not in config and "default" in spec:
                config[key] = json.loads(json.dumps(spec["default"]))
            if isinstance(config.get(key), dict):
                fill(config[key], spec)
        return config

    return fill(yaml.safe_load(profile.read_text()), yaml.safe_load((ROOT / "workflow/schemas/config.schema.yaml").read_text()))


def options(section: dict) -> list[str]:
    """A config section as `naus` options (the keys are the options' names)."""
    return [item for key, value in section.items() for item in (f"--{key.replace('_', '-')}", str(value))]


def train_and_decode(arch: str, build: Path, config: dict, length: int, work: Path, batch1: int) -> dict:
    m, t, d = config["model"], config["train"], config["decode"]
    out = work / f"{arch}-L{length}"
    search = build / "search"
    code = naus([
        "train", "--arch", arch, "--train-source", str(search / "pool/source.txt"),
        "--train-target", str(search / f"pool/L{length}.txt"), "--dev-source", str(search / "dev/source.txt"),
        "--dev-target", str(search / f"dev/L{length}.txt"), *options(m),
        *options({k: v for k, v in t.items() if k != "fractions"}), "--out", str(out), "--timing", str(out / "timing.json"),
    ])
    assert code == 0, f"training {arch} failed"
    history, timing = read_json(out / "history.json"), read_json(out / "timing.json")
    report = {"train_seconds": timing["seconds"], "device": timing["device"],
              "best_dev_loss": min(e["dev_loss"] for e in history["history"]), "decode": {}}
    for method in ([m for m in CTC_METHODS if m != "greedy"] if ARCHITECTURES[arch].ctc else ARCHITECTURES[arch].methods):
        code = naus([
            "decode", "--checkpoint", str(out / "best.pt"), "--input", str(build / "data/test/article.txt"),
            "--length", str(length), "--method", method, "--beam-size", str(d["beam_size"]),
            "--batch-size", str(d["batch_size"]), "--batch1-samples", str(batch1),
            "--out", str(out / f"{method}-{length}.txt"), "--timing", str(out / f"{method}-{length}.timing.json"),
        ])
        assert code == 0, f"decoding {arch} with {method} failed"
        report["decode"][method] = read_json(out / f"{method}-{length}.timing.json")
    if torch.cuda.is_available():
        report["cpu_gpu_max_abs_diff"] = cpu_gpu_difference(out / "best.pt", build / "data/test/article.txt", length)
    return report


@torch.no_grad()
def cpu_gpu_difference(checkpoint: Path, sources: Path, length: int) -> float:
    """Largest |log p| difference between CPU and GPU (float32) on 32 test sources, same weights."""
    from naus.train import load_checkpoint, model_from_checkpoint

    model, vocab = model_from_checkpoint(load_checkpoint(checkpoint))
    model.eval()
    lines = sources.read_text(encoding="utf-8").splitlines()[:32]
    encoded = [vocab.encode(line)[: model.config.max_len] for line in lines]
    lengths = torch.tensor([len(e) for e in encoded])
    tokens = torch.full((len(encoded), int(lengths.max())), vocab.pad, dtype=torch.long)
    for row, ids in enumerate(encoded):
        tokens[row, : len(ids)] = torch.tensor(ids)
    extra = {"ar": lambda: (tokens[:, :length],), "nar": lambda: (torch.full_like(lengths, length),)}
    args = extra.get(model.config.arch, lambda: ())()
    cpu = model(tokens, lengths, *args)
    gpu = model.cuda()(tokens.cuda(), lengths.cuda(), *(a.cuda() for a in args)).cpu()
    valid = torch.isfinite(cpu) & torch.isfinite(gpu)
    if ARCHITECTURES[model.config.arch].ctc:  # padded slots are not outputs
        valid &= (torch.arange(cpu.shape[1])[None, :] < lengths[:, None])[..., None]
    return float((cpu - gpu).abs()[valid].max())


def run(args: argparse.Namespace) -> None:
    config = resolved(Path(args.config))
    if args.steps:
        config["train"]["max_steps"] = args.steps
    gpu = torch.cuda.get_device_name() if torch.cuda.is_available() else "none (CPU)"
    report = {"gpu": gpu, "torch": torch.__version__, "profile": config["profile"],
              "length": args.length, "batch1_samples": args.batch1_samples, "students": {}}
    work = Path(tempfile.mkdtemp())
    for arch in args.archs:
        report["students"][arch] = train_and_decode(arch, Path(args.build), config, args.length, work,
                                                    args.batch1_samples)
        print(arch, json.dumps(report["students"][arch]), flush=True)
    out = Path(args.out)
    write_json(out / "gpu_students.json", report)
    with tarfile.open(out / "gpu_students.tar.gz", "w:gz") as tar:
        for path in sorted(work.rglob("*")):
            if path.is_file() and path.suffix in (".txt", ".json") and path.name != "vocab.txt":
                tar.add(path, arcname=str(path.relative_to(work)))


def score(args: argparse.Namespace) -> None:
    from naus.evaluate import evaluate_files

    report = read_json(args.timings)
    with tempfile.TemporaryDirectory() as tmp, tarfile.open(args.archive) as tar:
        tar.extractall(tmp, filter="data")
        for arch, student in report["students"].items():
            for method, timing in student["decode"].items():
                hyp = Path(tmp) / f"{arch}-L{report['length']}" / f"{method}-{report['length']}.txt"
                timing["rouge"] = evaluate_files(str(hyp), [args.reference], "f1", None, "python")
    write_json(args.out, report)
    print(json.dumps(report, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="step", required=True)
    on_gpu = sub.add_parser("run", help="train and decode on the GPU machine")
    on_gpu.add_argument("--build", default="build/gigaword-sample")
    on_gpu.add_argument("--config", default="config/gigaword-sample.yaml")
    on_gpu.add_argument("--length", type=int, default=10)
    on_gpu.add_argument("--archs", nargs="+", default=list(ARCHITECTURES))
    on_gpu.add_argument("--batch1-samples", type=int, default=200)
    on_gpu.add_argument("--steps", type=int, help="override the profile's train.max_steps (smoke runs)")
    on_gpu.add_argument("--out", required=True)
    on_gpu.set_defaults(func=run)
    here = sub.add_parser("score", help="ROUGE of the GPU run's summaries, here")
    here.add_argument("--archive", required=True)
    here.add_argument("--timings", required=True)
    here.add_argument("--reference", default="build/gigaword-sample/data/test/title.txt")
    here.add_argument("--out", default="results/benchmarks/gpu_students.json")
    here.set_defaults(func=score)
    args = parser.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
