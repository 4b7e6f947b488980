"""Table 3's students: AR, vanilla NAR and NAR-CTC encoder–decoders trained on the same search output."""

import itertools

import pytest
import torch

from naus import NausError
from naus.architectures import ARCHITECTURES, TABLE4_ARCHS
from naus.student.model import uniform_copy
from naus.student.registry import build_model
from naus.decoding.summarizer import Summarizer
from naus.settings import ModelConfig, TrainConfig
from naus.student.checkpoint import load_checkpoint, save_checkpoint
from naus.student.train import Pairs, train
from naus.student.vocab import Vocab

SOURCES = [f"w{i} w{i + 1} filler{i % 3} w{i + 2} extra{i % 4} w{i + 3}" for i in range(20)]
TARGETS = [" ".join(s.split()[k] for k in (0, 1, 3, 5)) for s in SOURCES]
# naus-minilm has MiniLM's 6 x 384 shape, slow to overfit on a CPU (tests/unit/test_pretrained.py trains it briefly);
# naus-copy reads frozen states (tests/unit/test_copy_head.py)
METHODS = {arch: [method for method, _ in ARCHITECTURES[arch].table4] for arch in TABLE4_ARCHS
           if not ARCHITECTURES[arch].pretrained and not ARCHITECTURES[arch].frozen}


def tiny_config(vocab_size: int, arch: str) -> ModelConfig:
    return ModelConfig(vocab_size, d_model=64, n_heads=4, n_layers=2, d_ff=128, dropout=0.0, max_len=32, arch=arch)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """One overfitted checkpoint per architecture (20 pairs, 80 steps: each overfits by 50, in about a second)."""
    vocab = Vocab.build(SOURCES)
    pairs = Pairs([vocab.encode(s) for s in SOURCES], [vocab.encode(t) for t in TARGETS])
    paths = {}
    for arch in METHODS:
        out = tmp_path_factory.mktemp(arch)
        config = TrainConfig(max_steps=80, max_tokens=512, lr=3e-3, warmup=20, smoothing=0.0,
                             eval_every=50, checkpoint_every=1000, device="cpu")
        train(pairs, None, vocab, tiny_config(len(vocab), arch), config, out)
        paths[arch] = out / "best.pt"
    return paths


@pytest.mark.parametrize("arch,method", [(a, m) for a, methods in METHODS.items() for m in methods])
def test_each_variant_overfits_a_handful_of_pairs(trained, arch, method):
    summarizer = Summarizer.from_checkpoint(trained[arch], "cpu")
    assert summarizer.model.config.arch == arch
    outputs = summarizer.summarize(SOURCES, length=4, method=method, raw=False)
    assert [o.summary for o in outputs] == TARGETS


def test_ar_stops_at_end_of_sequence_or_at_l(trained):
    summarizer = Summarizer.from_checkpoint(trained["ar"], "cpu")
    for method in ("greedy", "beam"):
        # trained on 4-word targets: with room for 10 it ends itself after 4 words ...
        assert [o.summary for o in summarizer.summarize(SOURCES, length=10, method=method, raw=False)] == TARGETS
        # ... and with room for 2 it is stopped at 2
        short = summarizer.summarize(SOURCES, length=2, method=method, raw=False)
        assert [o.summary for o in short] == [" ".join(t.split()[:2]) for t in TARGETS]


def test_vanilla_nar_always_emits_exactly_l_words():
    torch.manual_seed(0)
    vocab = Vocab.build(SOURCES)
    model = build_model(tiny_config(len(vocab), "nar"))
    summarizer = Summarizer(model, vocab, torch.device("cpu"))
    for length in (1, 3, 6, 9, 20):  # 9 and 20 exceed the 6-word sources
        for out in summarizer.summarize(SOURCES[:5], length=length, raw=False):
            words = out.summary.split()
            assert len(words) == length == out.length
            assert not set(words) & {"<blank>", "<pad>"}


def brute_force_ar(model, tokens, lengths, max_words, allowed, eos):
    """The most probable output over every word sequence of at most L words (ε ends a shorter one)."""
    best = (None, -float("inf"))
    for n in range(max_words + 1):
        for words in itertools.product(allowed, repeat=n):
            gold = list(words) + ([eos] if n < max_words else [])
            if not gold:
                continue
            previous = torch.tensor([[eos] + list(words)[: len(gold) - 1]])
            log_probs = model(tokens, lengths, previous)[0]
            score = float(log_probs[range(len(gold)), gold].sum())
            if score > best[1]:
                best = (list(words), score)
    return best


@pytest.mark.parametrize("seed", range(4))
def test_ar_beam_search_with_a_full_beam_is_exact(seed):
    torch.manual_seed(seed)
    vocab = Vocab(["<blank>", "<pad>", "<unk>", "a", "b"])
    model = build_model(ModelConfig(5, d_model=16, n_heads=2, n_layers=1, d_ff=32, dropout=0.0, max_len=16, arch="ar"))
    model.eval()
    with torch.no_grad():
        model.embed.weight.mul_(8.0)  # sharper distributions than the tiny init gives
        tokens, lengths = torch.tensor([[3, 4, 2, 3]]), torch.tensor([4])
        words, score = brute_force_ar(model, tokens, lengths, 3, [2, 3, 4], vocab.blank)
        (found, found_score), = model.generate(tokens, lengths, [3], beam_size=125, eos=vocab.blank,
                                                banned=(vocab.pad,))
    assert found == words
    assert found_score == pytest.approx(score, abs=1e-4)


def test_ar_incremental_step_equals_the_full_causal_decoder():
    torch.manual_seed(1)
    model = build_model(ModelConfig(7, d_model=16, n_heads=2, n_layers=2, d_ff=32, dropout=0.0, max_len=16, arch="ar"))
    model.eval()
    tokens, lengths = torch.tensor([[3, 4, 5, 6, 1], [4, 4, 3, 1, 1]]), torch.tensor([4, 3])
    previous = torch.tensor([[0, 5, 3, 6], [0, 4, 4, 5]])
    with torch.no_grad():
        full = model(tokens, lengths, previous)
        memory, padding = model.encode(tokens, lengths)
        caches = [memory.new_zeros(2, 0, 16) for _ in model.decoder.layers]
        steps = torch.stack([model.step(previous[:, t], t, caches, memory, padding) for t in range(4)], dim=1)
    assert torch.allclose(steps, full, atol=1e-5)


def test_uniform_copy_spreads_slots_over_the_source():
    embedded = torch.arange(6, dtype=torch.float)[None, :, None].repeat(2, 1, 1)  # value = position
    out = uniform_copy(embedded, torch.tensor([6, 3]), torch.tensor([3, 6]))
    assert out[0, :3, 0].tolist() == [0, 2, 4]
    assert out[1, :, 0].tolist() == [0, 0, 1, 1, 2, 2]


def test_wrong_method_or_architecture_is_a_clear_error(trained, tmp_path):
    with pytest.raises(NausError, match="nar model decodes with greedy, not 'length-control'"):
        Summarizer.from_checkpoint(trained["nar"], "cpu").summarize(SOURCES[:1], method="length-control")
    payload = load_checkpoint(trained["nar"])
    payload["model_config"]["arch"] = "rnn"
    save_checkpoint(tmp_path / "odd.pt", payload)
    with pytest.raises(NausError, match="unknown architecture 'rnn'"):
        Summarizer.from_checkpoint(tmp_path / "odd.pt", "cpu")


def test_every_architecture_has_a_model_and_supports_its_table4_methods():
    from naus.student.registry import MODELS

    assert set(MODELS) == set(ARCHITECTURES)
    for arch in ARCHITECTURES.values():
        assert {method for method, _ in arch.table4} <= set(arch.methods)


def test_table4_takes_the_profiles_own_students_for_their_architecture_not_a_second_set():
    """With model.arch naus-minilm, Table 3's MiniLM row is Table 1's students (trained once), first, named so."""
    from naus.pipeline.tables import spec
    from tests.helpers import ROOT, resolved_config

    config = resolved_config(ROOT / "config/demo.yaml")
    config["model"]["arch"], config["analysis"]["archs"] = "naus-minilm", ["ar", "naus-minilm"]
    declared = spec(config)
    assert not any(model.startswith("naus-minilm-") for model in declared.students())
    rows = declared.table("table4").groups[0].rows
    labels = [row.label for row in rows[1:]]
    assert labels[0].startswith(ARCHITECTURES["naus-minilm"].label) and not any("Encoder-only NAUS" in x for x in labels)
    assert "/L10/" in rows[1].stems[0] and any(label.startswith("AR encoder-decoder") for label in labels)
