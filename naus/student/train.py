"""Training a student (NAUS with CTC, or a Table 3 encoder–decoder) on (source → search output) pairs.

Batches hold about `max_tokens` source tokens. The batch order of an epoch is a function of
(seed, epoch) alone, so a checkpoint that stores the step, the epoch, the position in it and
the RNG states resumes to exactly the weights an uninterrupted run reaches. The best
checkpoint is chosen by CTC loss on a dev split of *search output*, never on references.
Every checkpoint carries its provenance (fingerprints of the training and dev pairs and the
vocabulary, the model and the training settings): a resumed run with other data or settings
refuses before it touches the directory. Only the budget and the reporting may change on resume.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import math
import os
import random
import time
from array import array
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable, Iterator, Sequence

import numpy as np
import torch

from naus import NausError
from naus.student.folder import BEST, HISTORY, LAST, STALE_LAST, STUDENT_NAMES, VOCAB
from naus.architectures import ARCHITECTURES
from naus.device import device_label, pick_device
from naus.plumbing.files import iter_parallel
from naus.plumbing.outputs import OutputLock, remove_temporaries, write_json
from naus.student.registry import build_model
from naus.settings import ModelConfig, TrainConfig
from naus.student.checkpoint import FORMAT, RESUME, load_checkpoint, save_checkpoint
from naus.student.frozen import States, digest
from naus.plumbing.provenance import check_same_provenance, file_record, fingerprint
from naus.student.vocab import Vocab

log = logging.getLogger(__name__)


# What a resumed run may change: how long it trains, how often it reports and saves, where it runs.
RESUMABLE_CHANGES = ("max_steps", "patience", "checkpoint_every", "eval_every", "device")


class Ragged:
    """Rows of token ids in one flat int32 array with their offsets: millions of sentences as Python
    lists of ints would take gigabytes. A row reads back as a list."""

    def __init__(self, rows: Iterable[Sequence[int]] = ()):
        self.flat, self.offsets = array("i"), array("q", [0])
        for row in rows:
            self.append(row)
        self.freeze()

    @classmethod
    def building(cls) -> "Ragged":
        """An empty one to `append` rows to, then `freeze`."""
        return cls._view(array("i"), array("q", [0]))

    def append(self, row: Sequence[int]) -> None:
        """Add a row while building (before `freeze`)."""
        self.flat.extend(row)
        self.offsets.append(len(self.flat))

    def freeze(self) -> "Ragged":
        """The built rows as NumPy views of the growable buffers."""
        self.flat, self.offsets = np.frombuffer(self.flat, dtype=np.int32), np.frombuffer(self.offsets, dtype=np.int64)
        return self

    @classmethod
    def _view(cls, flat: np.ndarray, offsets: np.ndarray) -> "Ragged":
        part = cls.__new__(cls)
        part.flat, part.offsets = flat, offsets
        return part

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, i: int | slice):
        if isinstance(i, slice):
            start, stop, _ = i.indices(len(self))
            return Ragged._view(self.flat[self.offsets[start] : self.offsets[stop]],
                                self.offsets[start : stop + 1] - self.offsets[start])
        i = range(len(self))[i]  # negative indices count from the end; out of range is an IndexError
        return self.flat[self.offsets[i] : self.offsets[i + 1]].tolist()

    def __iter__(self) -> Iterator[list[int]]:
        return (self[i] for i in range(len(self)))

    def lengths(self) -> list[int]:
        return np.diff(self.offsets).tolist()

    def digest(self) -> bytes:
        """The rows' content (values and boundaries), for fingerprints."""
        return self.flat.astype("<i4").tobytes() + np.diff(self.offsets).astype("<i8").tobytes()


@dataclass
class Pairs:
    sources: Ragged
    targets: Ragged
    states: States | None = None  # each source's frozen MiniLM states, for the students that read them

    def __post_init__(self) -> None:
        self.sources, self.targets = (x if isinstance(x, Ragged) else Ragged(x) for x in (self.sources, self.targets))

    def __len__(self) -> int:
        return len(self.sources)

    def head(self, fraction: float) -> "Pairs":
        """The first `fraction` of the pairs, at least one (the training-size sweep of Figure 3)."""
        keep = max(1, int(len(self) * fraction))
        states = None if self.states is None else self.states.take(range(keep))
        return Pairs(self.sources[:keep], self.targets[:keep], states)

    def fingerprint(self) -> str:
        digest = hashlib.sha256()
        for rows in (self.sources, self.targets):
            digest.update(rows.digest())
        if self.states is not None:
            digest.update(self.states.flat.tobytes())
        return digest.hexdigest()[:16]

def provenance(pairs: Pairs, dev: Pairs | None, vocab: Vocab, model_config: ModelConfig, config: TrainConfig) -> dict:
    """Everything that decides the weights a run reaches, step for step."""
    return {"pairs": pairs.fingerprint(), "dev": dev.fingerprint() if dev else None,
            "vocab": fingerprint(vocab.tokens), "model": model_config.to_dict(),
            "train": {k: v for k, v in asdict(config).items() if k not in RESUMABLE_CHANGES}}


def load_pairs(source_path: str | Path, target_path: str | Path, vocab: Vocab, max_len: int,
               states_path: str | Path | None = None) -> Pairs:
    """Encode aligned source/target files as they are read; empty or over-long sources are left out (and logged).
    `states_path`: the sources' frozen states (`naus encode-states`), checked to be theirs."""
    dropped, rows = 0, []
    states = States.load(states_path) if states_path else None

    def kept():
        nonlocal dropped
        for line, (src, tgt) in enumerate(iter_parallel(source_path, target_path)):
            ids = vocab.encode(src)
            if states is not None and (line >= len(states) or len(ids) != states.words()[line]
                                       or digest(src) != states.sentences[line].tobytes()):
                raise NausError(f"{states_path}: no states of line {line + 1} of {source_path} (states of another "
                                "file, or of the file before an edit? run `naus encode-states` on it)")
            if not ids or len(ids) > max_len:
                dropped += 1
                continue
            rows.append(line)
            yield ids, vocab.encode(tgt)

    sources, targets = Ragged.building(), Ragged.building()
    for ids, target in kept():
        sources.append(ids)
        targets.append(target)
    if states is not None and len(states) != len(rows) + dropped:
        raise NausError(f"{states_path}: states of {len(states)} sentences for the {len(rows) + dropped} lines of "
                        f"{source_path}")
    pairs = Pairs(sources.freeze(), targets.freeze(), None if states is None else states.take(rows))
    if dropped:
        log.info("%s: %d empty or over-long (> %d tokens) sources left out", source_path, dropped, max_len)
    if not len(pairs):
        raise NausError(f"{source_path}: no usable training pairs")
    return pairs


def make_batches(lengths: list[int], max_tokens: int, seed: int, epoch: int) -> list[list[int]]:
    """Length-sorted batches of at most `max_tokens` padded source tokens, in a seeded order."""
    rng = random.Random(seed * 1_000_003 + epoch)
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], rng.random()))
    batches, current, longest = [], [], 0
    for i in order:
        longest_if_added = max(longest, lengths[i])
        if current and longest_if_added * (len(current) + 1) > max_tokens:
            batches.append(current)
            current, longest_if_added = [], lengths[i]
        current.append(i)
        longest = longest_if_added
    if current:
        batches.append(current)
    rng.shuffle(batches)
    return batches


def collate(pairs: Pairs, batch: list[int], pad: int, device: torch.device):
    """Padded source ids, their lengths, the targets, and what else the student reads (its frozen states)."""
    lengths = torch.tensor([len(pairs.sources[i]) for i in batch])
    tokens = torch.full((len(batch), int(lengths.max())), pad, dtype=torch.long)
    for row, i in enumerate(batch):
        tokens[row, : lengths[row]] = torch.tensor(pairs.sources[i])
    extra = {}
    if pairs.states is not None:
        states = np.zeros((len(batch), tokens.shape[1], pairs.states.flat.shape[1]), dtype=np.float32)
        for row, i in enumerate(batch):
            states[row, : lengths[row]] = pairs.states[i]
        extra["states"] = torch.from_numpy(states).to(device)
    return tokens.to(device), lengths.to(device), [pairs.targets[i] for i in batch], extra


def inverse_sqrt(step: int, warmup: int) -> float:
    """Learning-rate multiplier: linear warm-up, then 1/sqrt(step)."""
    step = max(step, 1)
    return min(step / warmup, math.sqrt(warmup / step)) if warmup > 0 else 1.0 / math.sqrt(step)


def _rng_state() -> dict:
    """Every generator's state in types `torch.load(weights_only=True)` reads (NumPy's key as a list)."""
    name, key, position, has_gauss, gauss = np.random.get_state()
    state = {"python": random.getstate(), "numpy": (name, key.tolist(), position, has_gauss, gauss),
             "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _set_rng_state(state: dict) -> None:
    random.setstate(state["python"])
    name, key, position, has_gauss, gauss = state["numpy"]
    np.random.set_state((name, np.array(key, dtype=np.uint32), position, has_gauss, gauss))
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


@torch.no_grad()
def dev_loss(model: torch.nn.Module, pairs: Pairs, vocab: Vocab, max_tokens: int, device: torch.device) -> float:
    """The model's loss on the dev split (no smoothing, no dropout): CTC per target word, or cross entropy per token."""
    model.eval()
    total, count = 0.0, 0
    for batch in make_batches(pairs.sources.lengths(), max_tokens, 0, 0):
        tokens, lengths, targets, extra = collate(pairs, batch, vocab.pad, device)
        loss, used, _ = model.loss(tokens, lengths, targets, vocab.blank, smoothing=0.0, **extra)
        total += float(loss) * used
        count += used
    model.train()
    return total / max(count, 1)


def _diverged(what: str, step: int, last: Path) -> None:
    """Stop a run that went non-finite, before it writes anything more."""
    kept = f"{last} holds the last finite state" if last.is_file() else "no checkpoint was written"
    raise NausError(f"training diverged at step {step} ({what}): stopped; {kept}. Lower --lr (or raise --warmup)")


def train(
    pairs: Pairs,
    dev: Pairs | None,
    vocab: Vocab,
    model_config: ModelConfig,
    config: TrainConfig,
    out_dir: str | Path,
    resume: bool = False,
    restart: bool = False,
    timing: str | Path | None = None,
    made_from: dict | None = None,
) -> dict:
    """Train to `config.max_steps`, writing `last.pt`, `best.pt` and `history.json` under `out_dir` (and this run's
    time to `timing`: apart, so the same run writes the same bytes); a second run into it meanwhile is refused.
    The folder is one set (`_Run.begin`; `restart`: a last.pt of other data or settings set aside, not refused).
    `made_from` (the input files' records, `inputs`; the settings asked for, `settings`) goes into history.json with
    best.pt's sha256: what a GPU run brought back is checked against, and what the report compares with the settings."""
    with OutputLock(out_dir):
        if removed := remove_temporaries(out_dir, STUDENT_NAMES):
            log.info("%s: removed %d temporary files of a run that was killed", out_dir, removed)
        run = _Run(pairs, dev, vocab, model_config, config, Path(out_dir))
        run.begin(resume, restart)
        run.loop()
        return run.finish(timing, made_from or {})


class _Run:
    """One training run in named steps: set up (seeded), resume, train, finish."""

    def __init__(self, pairs: Pairs, dev: Pairs | None, vocab: Vocab, model_config: ModelConfig, config: TrainConfig,
                 out_dir: Path):
        self.pairs, self.dev, self.vocab, self.model_config, self.config = pairs, dev, vocab, model_config, config
        self.out_dir, self.last = out_dir, out_dir / LAST
        self.device = pick_device(config.device)
        torch.manual_seed(config.seed)
        random.seed(config.seed)
        np.random.seed(config.seed)
        self.model = build_model(model_config)
        if ARCHITECTURES[model_config.arch].pretrained:
            from naus.student.pretrained import start_from_minilm
            start_from_minilm(self.model, vocab.tokens)
        self.model.to(self.device)
        log.info("%s model: %d parameters on %s", model_config.arch, sum(p.numel() for p in self.model.parameters()),
                 self.device)
        self.lengths = pairs.sources.lengths()
        if not self.model.usable(self.lengths, pairs.targets):
            raise NausError(f"none of the {len(self.lengths)} training pairs can be learnt by a {model_config.arch} "
                            "student (with CTC a target must fit its source's slots: are the training source and "
                            "target swapped?)")
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=config.lr, betas=(0.9, 0.98), eps=1e-8,
                                           weight_decay=config.weight_decay)
        warmup = config.warmup_steps
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, lambda s: inverse_sqrt(s + 1, warmup))
        self.state = {"step": 0, "epoch": 0, "position": 0, "best_dev": math.inf, "history": [], "skipped": 0,
                      "stale": 0, "window": []}  # window: the training losses since the last history entry
        self.provenance_record = provenance(pairs, dev, vocab, model_config, config)
        self.started, self.first_step, self.tokens_seen = time.perf_counter(), 0, 0

    def begin(self, resume: bool, restart: bool) -> None:
        """Continue from last.pt (`resume`; one of other data or settings refused before anything is touched), or start
        over, the old set removed; either way the folder reads as unfinished (no history.json) until `finish`."""
        if resume and self.last.is_file() and (not restart or self._same_run()):
            self.resume()
            (self.out_dir / HISTORY).unlink(missing_ok=True)
            return
        if resume and self.last.is_file():
            os.replace(self.last, self.out_dir / STALE_LAST)
            log.warning("%s was made with other data or settings: set aside as %s, starting over", self.last,
                        STALE_LAST)
        for name in (HISTORY, BEST, LAST, VOCAB):
            (self.out_dir / name).unlink(missing_ok=True)

    def _same_run(self) -> bool:  # last.pt made with these data and settings
        try:
            payload = load_checkpoint(self.last, self.device, RESUME)
            check_same_provenance(self.last, payload.get("provenance", {}), self.provenance_record)
        except NausError:
            return False
        return True

    def resume(self) -> None:
        """Continue from last.pt, made with the same data and settings (only the budget may differ)."""
        if not self.last.is_file():
            return
        payload = load_checkpoint(self.last, self.device, RESUME)
        check_same_provenance(self.last, payload.get("provenance", {}), self.provenance_record,
                              remedy="train with --restart (it is set aside), without --resume, or into another "
                                     "directory to start over")
        try:  # one rule for a checkpoint without the architecture mark, last.pt as best.pt: refused
            self.model.load_state_dict(payload["model"])
        except RuntimeError as err:
            raise NausError(f"{self.last}: weights do not match the model ({str(err).splitlines()[0]}); train without "
                            "--resume (or into another directory) to start over") from None
        self.optimizer.load_state_dict(payload["optimizer"])
        self.scheduler.load_state_dict(payload["scheduler"])
        self.state = payload["state"]
        _set_rng_state(payload["rng"])
        self.first_step = self.state["step"]
        log.info("resumed from %s at step %d", self.last, self.state["step"])
        if not (self.out_dir / BEST).is_file() and self.state["best_dev"] < math.inf:
            log.warning("best.pt is gone (dev loss %.4f): the next evaluation writes a new one", self.state["best_dev"])
            self.state["best_dev"] = math.inf

    def checkpoint(self, path: Path, weights_only: bool = False) -> None:
        """A checkpoint (with vocab.txt beside the first one, for readers without torch)."""
        if not (self.out_dir / VOCAB).is_file():
            self.vocab.save(self.out_dir / VOCAB)
        out = {"format": FORMAT, "vocab": self.vocab.tokens, "model_config": self.model_config.to_dict(),
               "train_config": asdict(self.config), "provenance": self.provenance_record,
               "model": self.model.state_dict(), "state": self.state}
        if not weights_only:
            out.update(optimizer=self.optimizer.state_dict(), scheduler=self.scheduler.state_dict(), rng=_rng_state())
        save_checkpoint(path, out)

    def go_on(self) -> bool:
        """Below the budget, and (with patience) the dev loss fell within the last `patience` evaluations."""
        config, state = self.config, self.state
        return state["step"] < config.max_steps and not (config.patience and state["stale"] >= config.patience)

    def loop(self) -> None:
        """Epochs of seeded batches until the budget or patience runs out; reports, evaluates and saves on the way."""
        self.model.train()
        self.started = time.perf_counter()
        state, config = self.state, self.config
        state.setdefault("window", [])  # in the checkpoint, so that a resumed run's entries are an uninterrupted one's
        while self.go_on():
            batches = make_batches(self.lengths, config.max_tokens, config.seed, state["epoch"])
            while state["position"] < len(batches) and self.go_on():
                state["window"].append(self.step(batches[state["position"]]))
                if state["step"] % config.eval_every == 0 or state["step"] == config.max_steps:
                    self.evaluate(state["window"])
                    state["window"] = []
                if state["step"] % config.checkpoint_every == 0 or not self.go_on():
                    if not all(bool(torch.isfinite(p).all()) for p in self.model.parameters()):
                        _diverged("weights that are not finite", state["step"], self.last)
                    self.checkpoint(self.last)
            if state["position"] >= len(batches):
                state["epoch"] += 1
                state["position"] = 0
        if config.patience and state["stale"] >= config.patience:
            log.info("stopped early at step %d: no lower dev loss in %d evaluations (best %.4f)", state["step"],
                     config.patience, state["best_dev"])

    def step(self, batch: list[int]) -> float:
        """One optimizer step on one batch; its training loss."""
        tokens, src_lengths, targets, extra = collate(self.pairs, batch, self.vocab.pad, self.device)
        autocast = (torch.autocast("cuda", dtype=torch.bfloat16) if self.device.type == "cuda"
                    else contextlib.nullcontext())
        with autocast:
            loss, used, skipped = self.model.loss(tokens, src_lengths, targets, self.vocab.blank, self.config.smoothing,
                                                  **extra)
        self.state["skipped"] += skipped
        if used and not torch.isfinite(loss):
            _diverged(f"loss {float(loss.detach())}", self.state["step"] + 1, self.last)
        self.optimizer.zero_grad(set_to_none=True)
        if used:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.clip)
            self.optimizer.step()
        self.scheduler.step()
        self.state["step"] += 1
        self.state["position"] += 1
        self.tokens_seen += int(src_lengths.sum())
        return float(loss.detach())

    def evaluate(self, window: list[float]) -> None:
        """A history entry: the mean training loss since the last one, and the dev loss (best.pt when lowest)."""
        state, config, step = self.state, self.config, self.state["step"]
        entry = {"step": step, "train_loss": round(sum(window) / len(window), 5),
                 "lr": self.optimizer.param_groups[0]["lr"]}
        if self.dev is not None:
            entry["dev_loss"] = round(dev_loss(self.model, self.dev, self.vocab, config.max_tokens, self.device), 5)
            if not math.isfinite(entry["dev_loss"]):
                _diverged(f"dev loss {entry['dev_loss']}", step, self.last)
            state["stale"] += 1
            if entry["dev_loss"] < state["best_dev"]:
                state["best_dev"], state["stale"] = entry["dev_loss"], 0
                self.checkpoint(self.out_dir / BEST, weights_only=True)
        state["history"].append(entry)
        elapsed = time.perf_counter() - self.started
        eta = elapsed / max(step - self.first_step, 1) * (config.max_steps - step)
        log.info("step %d/%d loss %.4f%s lr %.2e %.0f tokens/s ETA %s, skipped pairs %d", step, config.max_steps,
                 entry["train_loss"], f" dev {entry['dev_loss']:.4f}" if "dev_loss" in entry else "", entry["lr"],
                 self.tokens_seen / elapsed, f"{eta / 60:.1f} min", state["skipped"])

    def finish(self, timing: str | Path | None, made_from: dict) -> dict:
        """best.pt (without a dev split: the last weights), history.json, and this run's time apart."""
        if self.dev is None:
            self.checkpoint(self.out_dir / BEST, weights_only=True)
        elif not (self.out_dir / BEST).is_file():  # a finished run resumed after best.pt was deleted
            log.warning("%s is gone and no evaluation is left in the budget: the last weights stand in for it",
                        self.out_dir / BEST)
            self.checkpoint(self.out_dir / BEST, weights_only=True)
        write_json(self.out_dir / HISTORY, {"history": self.state["history"],
                                                   "skipped_pairs": self.state["skipped"], **made_from,
                                                   "best": file_record(self.out_dir / BEST)})
        if timing:
            seconds = time.perf_counter() - self.started
            write_json(timing, {"steps": self.state["step"] - self.first_step, "seconds": round(seconds, 1),
                                "tokens_per_second": round(self.tokens_seen / seconds),
                                "device": device_label(self.device), "threads": torch.get_num_threads()})
        return self.state
