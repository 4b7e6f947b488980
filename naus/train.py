"""Training a student (NAUS with CTC, or a Table 4 encoder–decoder) on (source → search output) pairs.

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
import json
import logging
import math
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from naus import NausError
from naus.device import device_label, pick_device
from naus.files import OutputLock, atomic_open, check_file, read_parallel, write_json
from naus.model import build_model
from naus.settings import ModelConfig, TrainConfig
from naus.shards import check_same_provenance
from naus.vocab import Vocab

log = logging.getLogger(__name__)
FORMAT = "naus-ctc-1"


# What a resumed run may change: how long it trains, how often it reports and saves, where it runs.
RESUMABLE_CHANGES = ("max_steps", "patience", "checkpoint_every", "eval_every", "device")
RESUME = ("optimizer", "scheduler", "state", "rng")  # what last.pt holds beyond the weights


@dataclass
class Pairs:
    sources: list[list[int]]
    targets: list[list[int]]

def _digest(value: object) -> str:
    return hashlib.sha256(json.dumps(value).encode()).hexdigest()[:16]


def provenance(pairs: Pairs, dev: Pairs | None, vocab: Vocab, model_config: ModelConfig, config: TrainConfig) -> dict:
    """Everything that decides the weights a run reaches, step for step."""
    return {"pairs": _digest([pairs.sources, pairs.targets]), "dev": _digest([dev.sources, dev.targets]) if dev else None,
            "vocab": _digest(vocab.tokens), "model": model_config.to_dict(),
            "train": {k: v for k, v in asdict(config).items() if k not in RESUMABLE_CHANGES}}


def load_pairs(source_path: str | Path, target_path: str | Path, vocab: Vocab, max_len: int) -> Pairs:
    """Encode aligned source/target files; empty or over-long sources are left out (and logged)."""
    sources, targets = read_parallel(source_path, target_path)
    pairs = Pairs([], [])
    dropped = 0
    for src, tgt in zip(sources, targets):
        ids = vocab.encode(src)
        if not ids or len(ids) > max_len:
            dropped += 1
            continue
        pairs.sources.append(ids)
        pairs.targets.append(vocab.encode(tgt))
    if dropped:
        log.info("%s: %d empty or over-long (> %d tokens) sources left out", source_path, dropped, max_len)
    if not pairs.sources:
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
    lengths = torch.tensor([len(pairs.sources[i]) for i in batch])
    tokens = torch.full((len(batch), int(lengths.max())), pad, dtype=torch.long)
    for row, i in enumerate(batch):
        tokens[row, : lengths[row]] = torch.tensor(pairs.sources[i])
    return tokens.to(device), lengths.to(device), [pairs.targets[i] for i in batch]


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


def save_checkpoint(path: str | Path, payload: dict) -> None:
    """Written whole or not at all (a full disk leaves the previous checkpoint in place)."""
    try:
        with atomic_open(path, "wb") as handle:
            torch.save(payload, handle)
    except RuntimeError as err:  # torch's zip writer reports a failed write (ENOSPC, EIO) this way
        raise NausError(f"{path}: could not write the checkpoint ({str(err).splitlines()[0]}); the previous one "
                        "is kept") from None


def load_checkpoint(path: str | Path, map_location: str | torch.device = "cpu", needs: tuple[str, ...] = ()) -> dict:
    """A checkpoint read as data only (`weights_only`: tensors and plain Python types, never code a
    crafted pickle could run), with the entries every use needs and the `needs` of this one."""
    path = check_file(path, "checkpoint")
    try:
        payload = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as err:  # torch raises many types for a damaged or foreign file
        raise NausError(f"{path}: not a readable checkpoint ({type(err).__name__}: "
                        f"{str(err).strip().splitlines()[-1][:200] if str(err).strip() else 'no detail'})") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise NausError(f"{path}: not a naus checkpoint (expected format {FORMAT})")
    for key in ("vocab", "model_config", "model", *needs):
        if key not in payload:
            raise NausError(f"{path}: checkpoint has no {key!r}" + (" (a weights-only checkpoint: train without "
                                                                   "--resume to start over)" if key in RESUME else ""))
    return payload


def model_from_checkpoint(payload: dict, path: str | Path = "checkpoint") -> tuple[torch.nn.Module, Vocab]:
    vocab = Vocab(payload["vocab"])
    config = ModelConfig(**payload["model_config"])
    if config.vocab_size != len(vocab):
        raise NausError(f"{path}: model has {config.vocab_size} output words but the vocabulary has {len(vocab)}")
    try:
        model = build_model(config)
    except ValueError as err:
        raise NausError(f"{path}: {err}") from None
    try:
        model.load_state_dict(payload["model"])
    except RuntimeError as err:
        raise NausError(f"{path}: weights do not match the model configuration ({str(err).splitlines()[0]})") from None
    return model, vocab


@torch.no_grad()
def dev_loss(model: torch.nn.Module, pairs: Pairs, vocab: Vocab, max_tokens: int, device: torch.device) -> float:
    """The model's loss on the dev split (no smoothing, no dropout): CTC per target word, or cross entropy per token."""
    model.eval()
    total, count = 0.0, 0
    for batch in make_batches([len(s) for s in pairs.sources], max_tokens, 0, 0):
        tokens, lengths, targets = collate(pairs, batch, vocab.pad, device)
        loss, used, _ = model.loss(tokens, lengths, targets, vocab.blank, smoothing=0.0)
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
    timing: str | Path | None = None,
) -> dict:
    """Train to `config.max_steps`, writing `last.pt`, `best.pt` and `history.json` under `out_dir`
    (and this run's time to `timing`: apart, so the same run writes the same bytes); a second
    run into the same directory meanwhile is refused."""
    with OutputLock(out_dir):
        return _train(pairs, dev, vocab, model_config, config, Path(out_dir), resume, timing)


def _train(pairs: Pairs, dev: Pairs | None, vocab: Vocab, model_config: ModelConfig, config: TrainConfig,
           out_dir: Path, resume: bool, timing: str | Path | None) -> dict:
    device = pick_device(config.device)
    torch.manual_seed(config.seed)
    random.seed(config.seed)
    np.random.seed(config.seed)
    model = build_model(model_config).to(device)
    log.info("%s model: %d parameters on %s", model_config.arch, sum(p.numel() for p in model.parameters()), device)
    lengths = [len(s) for s in pairs.sources]
    if not model.usable(lengths, pairs.targets):
        raise NausError(f"none of the {len(lengths)} training pairs can be learnt by a {model_config.arch} student "
                        "(with CTC a target must fit its source's slots: are the training source and target "
                        "swapped?)")
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=config.lr, betas=(0.9, 0.98), eps=1e-8, weight_decay=config.weight_decay
    )
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: inverse_sqrt(s + 1, config.warmup))
    state = {"step": 0, "epoch": 0, "position": 0, "best_dev": math.inf, "history": [], "skipped": 0, "stale": 0}
    made_of = provenance(pairs, dev, vocab, model_config, config)
    last = out_dir / "last.pt"
    if resume and last.is_file():
        payload = load_checkpoint(last, device, RESUME)
        check_same_provenance(last, payload.get("provenance", {}), made_of,
                              remedy="train without --resume (or into another directory) to start over")
        model.load_state_dict(payload["model"])
        optimizer.load_state_dict(payload["optimizer"])
        scheduler.load_state_dict(payload["scheduler"])
        state = payload["state"]
        _set_rng_state(payload["rng"])
        log.info("resumed from %s at step %d", last, state["step"])
        if not (out_dir / "best.pt").is_file() and state["best_dev"] < math.inf:
            log.warning("best.pt is gone (dev loss %.4f): the next evaluation writes a new one", state["best_dev"])
            state["best_dev"] = math.inf

    def checkpoint(path: Path, weights_only: bool = False) -> None:
        """A checkpoint (with vocab.txt beside the first one, for readers without torch)."""
        if not (out_dir / "vocab.txt").is_file():
            vocab.save(out_dir / "vocab.txt")
        out = {"format": FORMAT, "vocab": vocab.tokens, "model_config": model_config.to_dict(),
               "train_config": asdict(config), "provenance": made_of, "model": model.state_dict(), "state": state}
        if not weights_only:
            out.update(optimizer=optimizer.state_dict(), scheduler=scheduler.state_dict(), rng=_rng_state())
        save_checkpoint(path, out)

    autocast = (
        torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda" else contextlib.nullcontext()
    )
    model.train()
    started, tokens_seen, window_loss, window_steps = time.perf_counter(), 0, 0.0, 0
    first_step = state["step"]

    def go_on() -> bool:
        """Below the budget, and (with patience) the dev loss fell within the last `patience` evaluations."""
        return state["step"] < config.max_steps and not (config.patience and state["stale"] >= config.patience)

    while go_on():
        batches = make_batches(lengths, config.max_tokens, config.seed, state["epoch"])
        while state["position"] < len(batches) and go_on():
            tokens, src_lengths, targets = collate(pairs, batches[state["position"]], vocab.pad, device)
            with autocast:
                loss, used, skipped = model.loss(tokens, src_lengths, targets, vocab.blank, config.smoothing)
            state["skipped"] += skipped
            if used and not torch.isfinite(loss):
                _diverged(f"loss {float(loss.detach())}", state["step"] + 1, last)
            optimizer.zero_grad(set_to_none=True)
            if used:
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), config.clip)
                optimizer.step()
            scheduler.step()
            state["step"] += 1
            state["position"] += 1
            tokens_seen += int(src_lengths.sum())
            window_loss += float(loss.detach())
            window_steps += 1
            step = state["step"]
            if step % config.eval_every == 0 or step == config.max_steps:
                entry = {"step": step, "train_loss": round(window_loss / window_steps, 5),
                         "lr": optimizer.param_groups[0]["lr"]}
                if dev is not None:
                    entry["dev_loss"] = round(dev_loss(model, dev, vocab, config.max_tokens, device), 5)
                    if not math.isfinite(entry["dev_loss"]):
                        _diverged(f"dev loss {entry['dev_loss']}", step, last)
                    state["stale"] += 1
                    if entry["dev_loss"] < state["best_dev"]:
                        state["best_dev"], state["stale"] = entry["dev_loss"], 0
                        checkpoint(out_dir / "best.pt", weights_only=True)
                state["history"].append(entry)
                elapsed = time.perf_counter() - started
                eta = elapsed / max(step - first_step, 1) * (config.max_steps - step)
                log.info(
                    "step %d/%d loss %.4f%s lr %.2e %.0f tokens/s ETA %s, skipped pairs %d",
                    step, config.max_steps, entry["train_loss"],
                    f" dev {entry['dev_loss']:.4f}" if "dev_loss" in entry else "", entry["lr"],
                    tokens_seen / elapsed, f"{eta / 60:.1f} min", state["skipped"],
                )
                window_loss, window_steps = 0.0, 0
            if step % config.checkpoint_every == 0 or not go_on():
                if not all(bool(torch.isfinite(p).all()) for p in model.parameters()):
                    _diverged("weights that are not finite", step, last)
                checkpoint(last)
        if state["position"] >= len(batches):
            state["epoch"] += 1
            state["position"] = 0
    if config.patience and state["stale"] >= config.patience:
        log.info("stopped early at step %d: no lower dev loss in %d evaluations (best %.4f)", state["step"],
                 config.patience, state["best_dev"])
    if dev is None:
        checkpoint(out_dir / "best.pt", weights_only=True)
    write_json(out_dir / "history.json", {"history": state["history"], "skipped_pairs": state["skipped"]})
    if timing:
        write_json(timing, {"steps": state["step"] - first_step, "seconds": round(time.perf_counter() - started, 1),
                            "tokens_per_second": round(tokens_seen / (time.perf_counter() - started)),
                            "device": device_label(device), "threads": torch.get_num_threads()})
    return state
