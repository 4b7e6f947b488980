"""An encoder pretrained here by masked-language modelling on unlabelled text alone: the contextual pair-free stand-in
for all-MiniLM-L6-v2 (`naus.architectures.MINILM_PAIRS`), since no encoder pretrained without sentence pairs can be
had from a package registry (issue 118).

A BERT-style Transformer over whole words (the text's own vocabulary, words seen `min_count` times; `[UNK]` for the
rest) with sinusoidal positions, trained to restore 15% of the words (BERT's 80/10/10 masking) of the profile's
unlabelled sentences: the pool's articles and the LM's headlines, never a title of a searched article. Its last
layer's states are 384 wide, as MiniLM's: the teacher's re-ranking reads their mean (`MaskedLMEmbedder`), a student's
frozen states are them, a word a state (`naus.student.frozen.MaskedLMStates`; `naus encode-states --encoder
FILE`).

Each step's batch and masking are functions of (seed, step), and a run saves its state every `SAVE_EVERY` steps: an
interrupted run resumes to the weights an uninterrupted one reaches; one with other settings or text refuses.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import math
from collections import Counter
from pathlib import Path

import numpy as np

from naus import NausError
from naus.plumbing.files import check_file, sha256sum
from naus.plumbing.outputs import atomic_open
from naus.settings import MaskedLMConfig

log = logging.getLogger(__name__)
KIND = "naus masked-LM encoder"  # what its file says it is
HINT = "made by `naus pretrain-mlm`"
PAD, UNK, MASK = 0, 1, 2
SPECIALS = ("[PAD]", "[UNK]", "[MASK]")
SAVE_EVERY = 100  # steps between saves of an unfinished run's state


def vocabulary(lines: list[list[str]], min_count: int) -> list[str]:
    """The special tokens, then words seen at least `min_count` times, most frequent first (ties by code point)."""
    counts = Counter(word for line in lines for word in line)
    return [*SPECIALS, *(w for w, c in sorted(counts.items(), key=lambda item: (-item[1], item[0])) if c >= min_count)]


def position_code(length: int, width: int) -> np.ndarray:
    """Sinusoidal codes of positions 0..length-1 (Vaswani et al. 2017), [length, width]: the encoder's positions, and
    the order beside a word vector in a student's states (`naus.student.frozen.WordStates`)."""
    angles = np.arange(length)[:, None] / 10000.0 ** (np.arange(0, width, 2)[None] / width)
    code = np.zeros((length, width))
    code[:, 0::2], code[:, 1::2] = np.sin(angles), np.cos(angles)
    return code


def build_model(config: MaskedLMConfig, vocab_size: int):
    """The encoder and its tied output head, as one module (`states`, `logits`)."""
    import torch
    from torch import nn

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab_size, config.width, padding_idx=PAD)
            self.norm = nn.LayerNorm(config.width)
            layer = nn.TransformerEncoderLayer(config.width, config.heads, config.ffn, dropout=0.1,
                                               activation="gelu", batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, config.layers, enable_nested_tensor=False)
            self.head = nn.Sequential(nn.Linear(config.width, config.width), nn.GELU(), nn.LayerNorm(config.width))
            self.bias = nn.Parameter(torch.zeros(vocab_size))
            nn.init.normal_(self.embed.weight, std=0.02)

        def states(self, ids, padding=None):
            """Last-layer states [B, T, width] of word ids [B, T] (`padding`: True where a slot is padding)."""
            x = self.embed(ids) * math.sqrt(config.width) + torch.from_numpy(
                position_code(ids.shape[1], config.width)).float()
            return self.encoder(self.norm(x), src_key_padding_mask=padding)

        def logits(self, states):
            return self.head(states) @ self.embed.weight.T + self.bias

    return Model()


def _batches(lengths: np.ndarray, config: MaskedLMConfig, epoch: int) -> list[np.ndarray]:
    """One epoch's batches of sentence rows, a function of (seed, epoch): the rows shuffled, sorted by length within
    chunks of a hundred batches (little padding), cut at about `batch_words` words, the batches shuffled."""
    rng = np.random.default_rng([config.seed, epoch])
    order = rng.permutation(len(lengths))
    per_batch = max(1, config.batch_words // max(1, int(np.mean(lengths))))
    batches = []
    for start in range(0, len(order), 100 * per_batch):
        chunk = order[start : start + 100 * per_batch]
        chunk = chunk[np.argsort(lengths[chunk], kind="stable")]
        rows, words = [], 0
        for row in chunk:
            if rows and words + lengths[row] > config.batch_words:
                batches.append(np.array(rows))
                rows, words = [], 0
            rows.append(row)
            words += lengths[row]
        if rows:
            batches.append(np.array(rows))
    return [batches[k] for k in rng.permutation(len(batches))]


def _masked(ids, config: MaskedLMConfig, step: int, vocab_size: int):
    """BERT's masking of a batch, a function of (seed, step): which words to restore, and the ids the model reads."""
    import torch

    generator = torch.Generator().manual_seed(config.seed * 1_000_003 + step)
    real = ids != PAD
    chosen = (torch.rand(ids.shape, generator=generator) < config.mask_rate) & real
    if not chosen.any():  # a tiny batch: one word to restore all the same
        chosen[0, 0] = True
    draw = torch.rand(ids.shape, generator=generator)
    random_words = torch.randint(len(SPECIALS), vocab_size, ids.shape, generator=generator)
    inputs = torch.where(chosen & (draw < 0.8), torch.full_like(ids, MASK), ids)
    inputs = torch.where(chosen & (draw >= 0.8) & (draw < 0.9), random_words, inputs)
    return chosen, inputs


def pretrain(lines: list[str], out: str | Path, config: MaskedLMConfig = MaskedLMConfig()) -> dict:
    """`naus pretrain-mlm`: an encoder learned from `lines` (unlabelled sentences, words space-separated) into `out`,
    resuming an interrupted run's `out`.partial; returns what the run measured (steps, last losses, words)."""
    import torch

    from naus.plumbing.progress import Progress

    out = Path(out)
    words = [line.split()[: config.max_words] for line in lines]
    words = [w for w in words if w]
    if not words:
        raise NausError("pretrain-mlm: the text has no words")
    vocab = vocabulary(words, config.min_count)
    index = {w: i for i, w in enumerate(vocab)}
    rows = [np.array([index.get(w, UNK) for w in line], dtype=np.int64) for line in words]
    lengths = np.array([len(r) for r in rows])
    text = hashlib.sha256("\n".join(" ".join(w) for w in words).encode()).hexdigest()
    settings = {"config": dataclasses.asdict(config), "text_sha256": text}
    torch.manual_seed(config.seed)
    model = build_model(config, len(vocab))
    decay = [p for n, p in model.named_parameters() if p.dim() > 1]
    rest = [p for n, p in model.named_parameters() if p.dim() <= 1]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": config.weight_decay},
                                   {"params": rest, "weight_decay": 0.0}], lr=config.lr)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min((s + 1) / config.warmup,
                                                                          max(0.0, (config.steps - s) /
                                                                              max(1, config.steps - config.warmup))))
    partial, step, losses = out.with_name(out.name + ".partial"), 0, []
    if partial.is_file():
        saved = torch.load(partial, weights_only=False)
        if saved["settings"] != settings:
            raise NausError(f"{partial}: an unfinished run with other settings or text; delete it to start again")
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        schedule.load_state_dict(saved["schedule"])
        step, losses = saved["step"], saved["losses"]
        log.info("resuming %s at step %d", partial, step)
    epoch, position, batches = 0, step, _batches(lengths, config, 0)
    while position >= len(batches):  # where a resumed run's step falls
        epoch, position = epoch + 1, position - len(batches)
        batches = _batches(lengths, config, epoch)
    progress = Progress("pretrain-mlm", config.steps - step, "steps", log)
    model.train()
    while step < config.steps:
        for rows_of in batches[position:][: config.steps - step]:
            longest = int(lengths[rows_of].max())
            ids = torch.zeros(len(rows_of), longest, dtype=torch.long)
            for k, row in enumerate(rows_of):
                ids[k, : lengths[row]] = torch.from_numpy(rows[row])
            chosen, inputs = _masked(ids, config, step, len(vocab))
            torch.manual_seed(config.seed * 1_000_003 + step)  # dropout's
            states = model.states(inputs, ids == PAD)
            loss = torch.nn.functional.cross_entropy(model.logits(states[chosen]), ids[chosen])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            step += 1
            losses.append(round(loss.item(), 4))
            progress.update(1, f"loss {np.mean(losses[-50:]):.3f}")
            if step % SAVE_EVERY == 0 and step < config.steps:
                with atomic_open(partial, "wb") as handle:
                    torch.save({"settings": settings, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
                                "schedule": schedule.state_dict(), "step": step, "losses": losses}, handle)
        epoch, position = epoch + 1, 0
        batches = _batches(lengths, config, epoch)
    save(out, model, vocab, config)
    partial.unlink(missing_ok=True)
    record = {"steps": step, "words": len(vocab) - len(SPECIALS), "sentences": len(rows),
              "tokens": int(lengths.sum()), "first_loss": round(float(np.mean(losses[:50])), 4),
              "last_loss": round(float(np.mean(losses[-50:])), 4), "seconds": round(progress.elapsed, 1)}
    log.info("masked-LM encoder: %s -> %s", record, out)
    return record


def save(out: str | Path, model, vocab: list[str], config: MaskedLMConfig) -> None:
    """The encoder (the output head left out) as one .npz: its fp32 tensors, its words and its settings."""
    arrays = {f"w/{name}": tensor.detach().float().numpy() for name, tensor in model.state_dict().items()
              if not name.startswith(("head.", "bias"))}
    arrays["words"] = np.frombuffer("\n".join(vocab).encode(), dtype=np.uint8)
    arrays["config"] = np.frombuffer(json.dumps({"kind": KIND, **dataclasses.asdict(config)}).encode(), dtype=np.uint8)
    with atomic_open(out, "wb") as handle:
        np.savez(handle, **arrays)


def is_masked_lm(path: str | Path) -> bool:
    """Whether an .npz is this module's encoder (and not a table of word vectors)."""
    with np.load(path) as arrays:
        return "config" in arrays.files and "words" in arrays.files


class MaskedLM:
    """A pretrained encoder read back for inference: each word's state in its sentence (`word_states`)."""

    def __init__(self, path: str | Path):
        import torch

        self.path = check_file(path, "masked-LM encoder", HINT)
        try:
            with np.load(self.path) as arrays:
                record = json.loads(arrays["config"].tobytes().decode())
                words = arrays["words"].tobytes().decode().split("\n")
                weights = {k[2:]: torch.from_numpy(arrays[k]) for k in arrays.files if k.startswith("w/")}
        except (OSError, ValueError, KeyError, UnicodeDecodeError) as err:
            raise NausError(f"{path}: not a masked-LM encoder ({err}; {HINT})") from None
        if record.pop("kind", None) != KIND:
            raise NausError(f"{path}: not a masked-LM encoder ({HINT})")
        self.config = MaskedLMConfig(**record)
        self.index = {w: i for i, w in enumerate(words)}
        self.model = build_model(self.config, len(words))
        missing = self.model.load_state_dict(weights, strict=False)
        if missing.unexpected_keys or any(not k.startswith(("head.", "bias")) for k in missing.missing_keys):
            raise NausError(f"{path}: its tensors are not a masked-LM encoder's ({HINT})")
        self.model.eval()
        self.identity = sha256sum(self.path)

    def word_states(self, sentences: list[list[str]]) -> list[np.ndarray]:
        """Each sentence's word states [words, width] float64, sentences of one length run together (no padding)."""
        import torch

        out: list[np.ndarray] = [np.zeros((0, self.config.width))] * len(sentences)
        groups: dict[int, list[int]] = {}
        for i, words in enumerate(sentences):
            if words:
                groups.setdefault(len(words), []).append(i)
        with torch.inference_mode():
            for _, rows in sorted(groups.items()):
                for start in range(0, len(rows), 64):
                    part = rows[start : start + 64]
                    ids = torch.tensor([[self.index.get(w, UNK) for w in sentences[i]] for i in part])
                    states = self.model.states(ids).double().numpy()
                    for k, i in enumerate(part):
                        out[i] = states[k]
        return out


class MaskedLMEmbedder:
    """The teacher's contextual similarity from the encoder (`naus.teacher.search.Teacher`'s `contextual`): a
    sentence's unit vector is the mean of its word states; no special token."""

    def __init__(self, path: str | Path):
        self.encoder = MaskedLM(path)

    def encode_group(self, sentences: list[str]) -> np.ndarray:
        from naus.teacher.similarity import _unit

        states = self.encoder.word_states([s.split() for s in sentences])
        width = self.encoder.config.width
        return _unit(np.array([s.mean(axis=0) if len(s) else np.zeros(width) for s in states])).astype(np.float32)

    def source_context(self, words: list[str]):
        from naus.teacher.similarity import SourceContext, _unit

        (states,) = self.encoder.word_states([words])
        return SourceContext(_unit(states.mean(axis=0)), states, np.zeros(states.shape[1]))
