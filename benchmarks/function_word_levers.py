"""Levers against the function words the student drops, each at the depth where `function_words.json` found the loss.

The first generation, learning from the search, loses most of them; the second a little more; the decoder none. Each
lever changes one thing of gigaword-sample's chain and is trained with five seeds at each length, beside the build's
own students of the same seeds (the baseline: the same data, settings and seeds, only the lever differs):

* `aligned` (first generation): the training objective does not reward ε on a slot the teacher filled. CTC sums
  every alignment, so a slot whose word could be emitted elsewhere earns as much for ε; here each slot learns the
  teacher's own choice: copy its source position, or ε (the labels are the source's subsequence the teacher kept,
  matched leftmost in order).
* `keep-score` (first generation): the copy head scores each source word's keep-ness from its own state, whatever
  slot copies it (a learned linear score added to every slot's logit of that position): a word type's evidence pooled
  over slots, not split across them.
* `gen1-600` (first generation): the first generation trained 600 steps, as the second, rather than 300: a student
  stopped early keeps the confident content words first.
* `no-smoothing` (first generation): no label smoothing, whose uniform term spreads mass over every source word.
* `teacher-beside` (second generation): the second generation learns from the teacher's labels beside the first
  generation's ensemble's (each pool sentence twice), so the function words the first generation dropped stay in
  its labels.
* `calibrated` (decoder, on the baseline's second generation): each word type's score raised by the log-ratio of
  how often the teacher keeps it to how often this student does, counted on the pool's first 2,000 sentences (the
  teacher's labels and the student's own summaries: no title), log((t + 5) / (s + 5)).

For each: the dev total (R-1 + R-2 + R-L F1 against dev's titles, source-order decoding, the profile's; mean ± sd over
seeds, and the mean paired difference against the baseline's same seeds) and the function-word rates per 100
summaries. Dev's titles only score. Reads a build of gigaword-sample up to its second generation (see
`function_words.py`), and writes results/benchmarks/function_word_levers.json. Then the first generation's lever with
the best mean gain is carried through the chain: its ten seeds as one model label the pool, five second-generation
students learn from them.

    python -m benchmarks.function_word_levers     # twice: the second run (all kept) adds the chain

Findings (the JSON's numbers, as read when it was written; Markdown):

## Levers against the function words' loss (`function_word_levers.json`, issue 109's second part)

gigaword-sample's build at 112c24a, dev (500 sentences), source order, 2 cores of an AMD EPYC, 6 December 2026; five
seeds a lever, paired with the baseline's same seeds (gain ± its sd); `'s` per 100 summaries (dev's titles 10.2):

| lever | L = 10 dev total | gain | `'s` | L = 8 dev total | gain | `'s` |
|---|---|---|---|---|---|---|
| baseline, generation 1 | 89.33 ± 0.77 | | 6.6 | 88.70 ± 0.96 | | 3.2 |
| aligned objective | 88.64 ± 0.67 | −0.70 ± 0.37 | 5.5 | 88.58 ± 1.32 | −0.12 ± 0.95 | 2.4 |
| keep score in the copy head | 89.03 ± 0.30 | −0.30 ± 0.57 | 7.1 | 88.81 ± 0.46 | +0.10 ± 0.59 | 3.3 |
| first generation 600 steps | 89.99 ± 0.40 | +0.66 ± 0.91 | 10.6 | 88.68 ± 0.58 | −0.03 ± 1.44 | 7.4 |
| no label smoothing | 88.49 ± 1.17 | −0.84 ± 1.12 | 9.1 | 89.48 ± 0.85 | +0.78 ± 0.71 | 5.0 |
| baseline, generation 2 | 90.90 ± 0.21 | | 5.1 | 90.26 ± 0.55 | | 1.9 |
| teacher's labels beside generation 1's | 90.63 ± 0.61 | −0.27 ± 0.56 | 7.0 | 90.24 ± 0.25 | −0.02 ± 0.60 | 2.7 |
| decoder calibrated on the pool | 90.99 ± 0.18 | +0.09 ± 0.36 | 6.1 | 90.33 ± 0.76 | +0.07 ± 0.29 | 3.0 |
| generation 2 after a first of 600 steps | 90.52 ± 0.27 | −0.38 ± 0.18 | 10.3 | 90.05 ± 0.42 | −0.21 ± 0.85 | 7.0 |

The loss is the first generation's short training: 600 steps rather than 300 give back the teacher's `'s` (10.6
against the titles' 10.2 at L = 10; 7.4 against 3.2 at L = 8) and carried through the chain keep it in the second
generation (10.3 and 7.0), but dev's total falls by 0.38 and 0.21: the function words come back, the ROUGE does not.
No lever raises dev at both lengths beyond its spread; none is adopted and the recipe stays (a negative result).
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import torch
import torch.nn.functional as F
import yaml
from torch import Tensor, nn

from benchmarks.common import one_thread, run_all, total
from benchmarks.function_words import rates
from naus import layout
from naus.device import cpu_name, isa
from naus.files import read_lines
from naus.outputs import write_json, write_lines
from naus.provenance import code_state
from naus.settings import TrainConfig
from naus.student import model as models

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build/gigaword-sample"
PROFILE = ROOT / "config/gigaword-sample.yaml"
LENGTHS = (10, 8)
SEEDS = range(5)
CALIBRATION_LINES, PRIOR = 2000, 5.0
FIRST = {"aligned": {"model": "aligned"}, "keep-score": {"model": "keep"},
         "gen1-600": {"train": {"max_steps": 600, "warmup": 100, "eval_every": 100}},
         "no-smoothing": {"train": {"smoothing": 0.0}}}


class AlignedCopy(models.CopyNAUS):
    """The copy head trained slot by slot on the teacher's own alignment (cross entropy, not CTC's marginal)."""

    def loss(self, tokens: Tensor, lengths: Tensor, targets: list[list[int]], blank: int = 0, smoothing: float = 0.1,
             states: Tensor | None = None) -> tuple[Tensor, int, int]:
        labels = torch.full(tokens.shape, -100, dtype=torch.long)
        used = 0
        for b, target in enumerate(targets):
            source, k, row = tokens[b, : int(lengths[b])].tolist(), 0, []
            for j, word in enumerate(source):
                take = k < len(target) and word == target[k]
                row.append(j + 1 if take else 0)
                k += take
            if target and k == len(target):
                labels[b, : len(source)] = torch.tensor(row)
                used += 1
        log_probs = F.log_softmax(self.scores(states, lengths), dim=-1)
        if not used:
            return log_probs.sum() * 0.0, 0, len(targets)
        loss = F.nll_loss(log_probs.transpose(1, 2), labels.to(log_probs.device), ignore_index=-100)
        if smoothing > 0:
            valid = labels >= 0
            finite = torch.isfinite(log_probs)
            mean = log_probs.masked_fill(~finite, 0.0).sum(-1) / finite.sum(-1).clamp(min=1)
            loss = (1 - smoothing) * loss + smoothing * -(mean[valid]).mean()
        return loss, used, len(targets) - used


class KeepCopy(models.CopyNAUS):
    """The copy head with a keep score of each source position from its own state, added at every slot."""

    def __init__(self, config):
        super().__init__(config)
        self.keep = nn.Linear(config.d_model, 1)

    def scores(self, states: Tensor, lengths: Tensor) -> Tensor:
        time = states.shape[1]
        padding = models._padding(lengths, time)
        x, sources = self.top(self.dropout(self.norm(self.project(states))), padding)
        copy = self.query(x) @ self.key(sources).transpose(1, 2) / math.sqrt(self.config.d_model)
        position = torch.arange(time, device=states.device)
        copy = copy + self.offset[(position[None, :] - position[:, None]).clamp(-self.REACH, self.REACH) + self.REACH]
        copy = copy + self.keep(sources).transpose(1, 2)
        return torch.cat([self.blank(x).float(), copy.float().masked_fill(padding[:, None, :], -math.inf)], dim=-1)


VARIANTS = {"aligned": AlignedCopy, "keep": KeepCopy}


def use(variant: str | None) -> None:
    """This worker's naus-copy: the lever's variant, or the library's."""
    models.MODELS["naus-copy"] = VARIANTS[variant] if variant else models.CopyNAUS


def profile_settings(name: str) -> tuple[dict, dict]:
    config = yaml.safe_load(PROFILE.read_text())
    model = {k: v for k, v in config["model"].items() if k != "arch"}
    section = layout.train_settings(config["train"], name)
    keys = set(TrainConfig.__dataclass_fields__)
    return model, {k: v for k, v in section.items() if k in keys}


def trained(variant: str | None, name: str, out: Path, source: Path, target: Path, states: Path, length: int,
            seed: int, overrides: dict, dev_target: Path) -> Path:
    """A student trained as the profile trains `name`, with the lever's changes (kept: trained once)."""
    if (out / "history.json").is_file():
        return out / "best.pt"
    from naus.student.build import train_student

    use(variant)
    model, train = profile_settings(name)
    train.update(overrides, seed=seed)
    train_student(source, target, out, "naus-copy", model=model, config=TrainConfig(**train),
                  dev_source=BUILD / "search/dev/source.txt",
                  dev_target=dev_target, train_states=states, dev_states=BUILD / layout.frozen_states("dev"),
                  resume=True, restart=True)
    return out / "best.pt"


def decoded(variant: str | None, checkpoint: Path, length: int, out: Path, split: str = "dev",
            bias: dict | None = None, limit: int | None = None, method: str = "source-order") -> Path:
    """A student's summaries of dev (or the pool's first `limit`), source order unless said, optionally calibrated
    (kept)."""
    if out.is_file():
        return out
    from naus.decoding.summarizer import Summarizer
    from naus.student.frozen import States

    use(variant)
    summarizer = Summarizer.from_checkpoint(checkpoint, "cpu")
    if split == "dev":
        lines, states = read_lines(BUILD / layout.split_file("dev", "article")), States.load(BUILD / layout.frozen_states("dev"))
    else:
        lines, states = read_lines(BUILD / "search/pool/source.txt"), States.load(BUILD / layout.frozen_states("pool"))
        if limit:
            lines, states = lines[:limit], states.take(range(limit))
    if bias:
        calibrate(summarizer, bias)
    results = summarizer.summarize(lines, length=length, method=method, raw=False, states=states, beam_size=6,
                                   batch_size=64)
    write_lines(out, [r.summary for r in results])
    return out


def calibrate(summarizer, bias: dict[str, float]) -> None:
    """Raise each source position's copy score by its word's bias (every slot)."""
    plain = summarizer._copy_batch

    def batch(sources, states, method, shown, options):
        made, seconds, vocab = plain(sources, states, method, shown, options)
        table = torch.tensor([bias.get(token, 0.0) for token in vocab.tokens])
        made.positions[..., 1:] += table[made.source_ids][:, None, :].to(made.positions.device)
        return made, seconds, vocab

    summarizer._copy_batch = batch


def bias_of(student: Path, teacher: Path) -> dict[str, float]:
    counts = [Counter(w for line in read_lines(path)[:CALIBRATION_LINES] for w in line.split()) for path in (teacher, student)]
    return {w: math.log((counts[0][w] + PRIOR) / (counts[1][w] + PRIOR)) for w in counts[0] | counts[1]}


def summary(paths: list[Path], baseline: list[float] | None, titles: Path) -> dict:
    totals = [total(path, titles)["total"] for path in paths]
    out = {"dev_totals": totals, "dev_total": round(statistics.mean(totals), 2), "dev_sd": round(statistics.stdev(totals), 2),
           "rates": rates([line for path in paths for line in read_lines(path)])}
    if baseline:
        gains = [a - b for a, b in zip(totals, baseline)]
        out["paired_gain"] = round(statistics.mean(gains), 2)
        out["paired_gain_sd"] = round(statistics.stdev(gains), 2)
    return out


def chain(pool: ProcessPoolExecutor, work: Path, lever: str, length: int, titles: Path) -> dict:
    """The first generation's best lever carried through the chain: its ten seeds as one model label the pool and
    dev (length control, as the profile's), and five second-generation students learn from them."""
    from naus.student.checkpoint import save_ensemble

    change, folder = FIRST[lever], work / lever
    teacher, dev_teacher = BUILD / f"{layout.search('pool', length)}.txt", BUILD / f"{layout.search('dev', length)}.txt"
    names = [layout.model(length, seed=seed) for seed in range(10)]
    run_all(pool, [(trained, change.get("model"), name, folder / name, BUILD / "search/pool/source.txt", teacher,
                    BUILD / layout.frozen_states("pool"), length, seed, change.get("train", {}), dev_teacher)
                   for seed, name in enumerate(names)])
    ensemble = folder / layout.model(length, seed=layout.ENSEMBLE)
    if not (ensemble / "best.pt").is_file():
        save_ensemble([folder / name / "best.pt" for name in names], ensemble / "best.pt")
    labels = {split: ensemble / f"{split}-length-control-{length}.txt" for split in ("pool", "dev")}
    run_all(pool, [(decoded, change.get("model"), ensemble / "best.pt", length, labels[split], split, None, None,
                    "length-control") for split in labels])
    g2 = [layout.model(length, seed=seed, generation=2) for seed in SEEDS]
    run_all(pool, [(trained, None, name, folder / name, BUILD / "search/pool/source.txt", labels["pool"],
                    BUILD / layout.frozen_states("pool"), length, seed, {}, labels["dev"]) for seed, name in zip(SEEDS, g2)])
    run_all(pool, [(decoded, None, folder / name / "best.pt", length, folder / f"{name}.txt") for name in g2])
    base = [total(work / "baseline" / f"{name}.txt", titles)["total"] for name in g2]
    return {f"{lever}: its ten first-generation students as one model, dev labels": {
                "dev_total": total(labels["dev"], titles)["total"], "rates": rates(read_lines(labels["dev"]))},
            f"{lever} (generation 2, after its first)": summary([folder / f"{name}.txt" for name in g2], base, titles)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=ROOT / "build/function_word_levers", help="kept: resumes")
    parser.add_argument("--out", type=Path, default=ROOT / "results/benchmarks/function_word_levers.json")
    args = parser.parse_args()
    work, titles = args.work, BUILD / layout.split_file("dev", "title")
    pool_source, pool_states = BUILD / "search/pool/source.txt", BUILD / layout.frozen_states("pool")
    doubled = work / "doubled"
    if not (doubled / "states.npz").is_file():
        from naus.student.frozen import States

        sources = read_lines(pool_source)
        write_lines(doubled / "source.txt", sources + sources)
        States.load(pool_states).take(list(range(len(sources))) * 2).save(doubled / "states.npz")
    stages = {}
    with ProcessPoolExecutor(2, initializer=one_thread) as pool:
        for length in LENGTHS:
            ens = BUILD / layout.DECODINGS / "{split}" / layout.model(length, seed=layout.ENSEMBLE) / f"length-control-{length}.txt"
            teacher = BUILD / f"{layout.search('pool', length)}.txt"
            both = doubled / f"L{length}.txt"
            if not both.is_file():
                write_lines(both, read_lines(Path(str(ens).format(split="pool"))) + read_lines(teacher))
            jobs, names = [], {}
            for seed in SEEDS:
                for generation in (1, 2):
                    name = layout.model(length, seed=seed, generation=generation)
                    names[("baseline", generation, seed)] = work / "baseline" / f"{name}.txt"
                    jobs.append((decoded, None, BUILD / layout.student_checkpoint(name), length,
                                 work / "baseline" / f"{name}.txt"))
                name = layout.model(length, seed=seed)
                for lever, change in FIRST.items():
                    out = work / lever / name
                    jobs.append((trained, change.get("model"), name, out, pool_source, teacher, pool_states, length, seed,
                                 change.get("train", {}), BUILD / f"{layout.search('dev', length)}.txt"))
                g2 = layout.model(length, seed=seed, generation=2)
                jobs.append((trained, None, g2, work / "teacher-beside" / g2, doubled / "source.txt", both,
                             doubled / "states.npz", length, seed, {}, Path(str(ens).format(split="dev"))))
            run_all(pool, jobs)
            jobs = []
            for seed in SEEDS:
                name = layout.model(length, seed=seed)
                for lever, change in FIRST.items():
                    jobs.append((decoded, change.get("model"), work / lever / name / "best.pt", length,
                                 work / lever / f"{name}.txt"))
                g2 = layout.model(length, seed=seed, generation=2)
                jobs.append((decoded, None, work / "teacher-beside" / g2 / "best.pt", length, work / "teacher-beside" / f"{g2}.txt"))
                jobs.append((decoded, None, BUILD / layout.student_checkpoint(g2), length, work / "calibration" / f"{g2}.txt",
                             "pool", None, CALIBRATION_LINES))
            run_all(pool, jobs)
            jobs = []
            for seed in SEEDS:
                g2 = layout.model(length, seed=seed, generation=2)
                bias = bias_of(work / "calibration" / f"{g2}.txt", teacher)
                jobs.append((decoded, None, BUILD / layout.student_checkpoint(g2), length, work / "calibrated" / f"{g2}.txt",
                             "dev", bias))
            run_all(pool, jobs)
            base = {g: [total(work / "baseline" / f"{layout.model(length, seed=s, generation=g)}.txt", titles)["total"]
                        for s in SEEDS] for g in (1, 2)}
            rows = {f"baseline, generation {g}": summary([work / "baseline" / f"{layout.model(length, seed=s, generation=g)}.txt"
                                                          for s in SEEDS], None, titles) for g in (1, 2)}
            for lever in FIRST:
                rows[f"{lever} (generation 1)"] = summary([work / lever / f"{layout.model(length, seed=s)}.txt" for s in SEEDS],
                                                          base[1], titles)
            for lever in ("teacher-beside", "calibrated"):
                rows[f"{lever} (generation 2)"] = summary(
                    [work / lever / f"{layout.model(length, seed=s, generation=2)}.txt" for s in SEEDS], base[2], titles)
            stages[str(length)] = rows
            print(yaml.safe_dump({length: {k: (v["dev_total"], v.get("paired_gain")) for k, v in rows.items()}}))
        chosen = max(FIRST, key=lambda lever: statistics.mean(stages[str(n)][f"{lever} (generation 1)"]["paired_gain"]
                                                             for n in LENGTHS))
        for length in LENGTHS:
            stages[str(length)].update(chain(pool, work, chosen, length, titles))
    write_json(args.out, {"profile": "gigaword-sample", "made_by": code_state(),
                          "machine": f"{cpu_name()} ({', '.join(isa())}), 2 cores", "seeds": len(SEEDS),
                          "dev_titles": rates(read_lines(titles)), "lengths": stages})
    print(f"-> {args.out}")


if __name__ == "__main__":
    main()
