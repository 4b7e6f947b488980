"""The students on frozen MiniLM states (naus-copy, and Table 3's encoder-decoders beside it: nar-ctc-copy, ar-copy,
nar-copy): a copy head over the states, trained and decoded as the students of their kind."""

import math

import numpy as np
import pytest
import torch

from naus import NausError
from naus.architectures import ARCHITECTURES
from naus.methods import AR
from naus.decoding.summarizer import Summarizer
from naus.settings import ModelConfig, TrainConfig
from naus.student.checkpoint import load_checkpoint
from naus.student.copy_head import source_positions
from naus.student.frozen import WIDTH, Encoder, States, digests
from naus.student.registry import build_model
from naus.student.train import Pairs, load_pairs, train
from naus.student.vocab import Vocab
from tests.helpers import write
from tests.unit.test_train import brute_force_ctc

SOURCES = [f"w{i} w{i + 1} filler{i % 3} w{i + 2} extra{i % 4} w{i + 3}" for i in range(20)]
TARGETS = [" ".join(s.split()[k] for k in (0, 1, 3, 5)) for s in SOURCES]
FROZEN = [name for name, arch in ARCHITECTURES.items() if arch.frozen]
FROZEN_CTC = [name for name in FROZEN if ARCHITECTURES[name].ctc]


def tiny_config(vocab_size: int = 8, arch: str = "naus-copy") -> ModelConfig:
    return ModelConfig(vocab_size, d_model=32, n_heads=4, n_layers=1, d_ff=64, dropout=0.0, max_len=32, arch=arch)


def word_states(lines: list[str]) -> States:
    """Stand-ins for MiniLM's states: a fixed random vector per word (what a copy head needs to tell them apart)."""
    rows = [np.stack([np.random.default_rng(abs(hash(w)) % 2**32).normal(size=WIDTH) for w in line.split()])
            for line in lines]
    offsets = np.concatenate([[0], np.cumsum([len(r) for r in rows])]).astype(np.int64)
    return States(np.concatenate(rows).astype(np.float16), offsets, digests(lines))


@pytest.mark.parametrize("arch", FROZEN_CTC)
def test_a_words_probability_is_the_sum_over_its_positions_and_absent_words_have_none(arch):
    torch.manual_seed(0)
    model = build_model(tiny_config(arch=arch)).eval()
    states, lengths = torch.randn(2, 5, WIDTH), torch.tensor([5, 3])
    words = torch.tensor([[3, 4, 3, 5, 4], [6, 6, 7, 0, 0]])  # repeats; the second source is 3 long
    with torch.no_grad():
        positions = model.scores(states, lengths).log_softmax(-1).exp()  # ε, then each position
        merged = model(states, lengths, words, 9).exp()
    for b in range(2):
        for word in range(1, 9):
            at = [j for j in range(int(lengths[b])) if words[b, j] == word]
            expected = positions[b, :, [1 + j for j in at]].sum(-1) if at else torch.zeros(5)
            assert torch.allclose(merged[b, :, word], expected, atol=1e-6)
        assert torch.allclose(merged[b, :, 0], positions[b, :, 0])
        assert torch.allclose(merged[b].sum(-1), torch.ones(5), atol=1e-5)


@pytest.mark.parametrize("arch", FROZEN_CTC)
@pytest.mark.parametrize("target", [[3], [4, 3], [3, 5], [5, 4, 3]])
def test_the_loss_is_the_ctc_marginal_over_the_sources_own_words(target, arch):
    """CTC over ε and the source's words (vocabulary ids 3 4 3 5: word 3 at two positions) equals the brute-force
    sum over every path, in the vocabulary's own space."""
    torch.manual_seed(len(target))
    model = build_model(tiny_config(arch=arch)).double().eval()
    tokens, lengths = torch.tensor([[3, 4, 3, 5]]), torch.tensor([4])
    states = torch.randn(1, 4, WIDTH, dtype=torch.float64)
    with torch.no_grad():
        loss, used, skipped = model.loss(tokens, lengths, [target], smoothing=0.0, states=states)
        lp = model(states, lengths, tokens, 6)[0]
    assert (used, skipped) == (1, 0)
    assert float(loss) * len(target) == pytest.approx(brute_force_ctc(lp, target), rel=1e-6)


def test_a_target_word_not_in_the_source_is_left_out_and_counted():
    model = build_model(tiny_config())
    loss, used, skipped = model.loss(torch.tensor([[3, 4]]), torch.tensor([2]), [[7]], states=torch.randn(1, 2, WIDTH))
    assert (used, skipped) == (0, 1)


@pytest.fixture(scope="module", params=FROZEN)
def trained(tmp_path_factory, request):
    """One overfitted student per architecture on frozen states (20 pairs, 80 steps)."""
    vocab = Vocab.build(SOURCES)
    pairs = Pairs([vocab.encode(s) for s in SOURCES], [vocab.encode(t) for t in TARGETS], word_states(SOURCES))
    out = tmp_path_factory.mktemp("copy")
    config = TrainConfig(max_steps=80, max_tokens=512, lr=3e-3, warmup=20, smoothing=0.0, eval_every=50,
                         checkpoint_every=1000, device="cpu")
    train(pairs, None, vocab, tiny_config(len(vocab), request.param), config, out)
    return out / "best.pt"


@pytest.mark.parametrize("method", ["length-control", "truncate", "greedy", "beam"])
def test_it_overfits_a_handful_of_pairs_and_decodes_by_every_method(trained, method):
    summarizer = Summarizer.from_checkpoint(trained, "cpu")
    if method not in ARCHITECTURES[summarizer.model.config.arch].methods:
        pytest.skip(f"{summarizer.model.config.arch} does not decode by {method}")
    outputs = summarizer.summarize(SOURCES, length=4, method=method, raw=False, states=word_states(SOURCES))
    assert [o.summary for o in outputs] == TARGETS


def test_words_it_never_saw_are_kept_not_unk(trained):
    """Its vocabulary is each batch's own words: a new word comes back as written."""
    new = ["zebra w1 filler1 quokka extra1 w4"]
    summary = Summarizer.from_checkpoint(trained, "cpu").summarize(new, length=4, raw=False, states=word_states(new))
    ends = ARCHITECTURES[load_checkpoint(trained)["model_config"]["arch"]].generates == AR  # it may end before L
    assert "<unk>" not in summary[0].summary and (len(summary[0].summary.split()) <= 4 if ends else
                                                  len(summary[0].summary.split()) == 4)
    assert set(summary[0].summary.split()) <= set(new[0].split())


def test_a_character_budget_is_kept(trained):
    summarizer = Summarizer.from_checkpoint(trained, "cpu")
    if not ARCHITECTURES[summarizer.model.config.arch].ctc:
        pytest.skip("an encoder-decoder has no budget in characters")
    for result in summarizer.summarize(SOURCES, chars=12, raw=False, states=word_states(SOURCES)):
        assert 0 < len(result.summary.encode()) <= 12


def test_states_of_other_sentences_are_refused(trained, tmp_path):
    summarizer = Summarizer.from_checkpoint(trained, "cpu")
    with pytest.raises(NausError, match="the states of sentence 2 .* encode another sentence than line 2"):
        summarizer.summarize([SOURCES[0], "two words"], raw=False, states=word_states(SOURCES[:2]))
    source, target = write(tmp_path / "s.txt", "\n".join(SOURCES[:3]) + "\n"), write(tmp_path / "t.txt", "a\nb\nc\n")
    states = tmp_path / "states.npz"
    word_states(SOURCES[:3] + ["one"]).save(states)
    with pytest.raises(NausError, match="states of 4 sentences for the 3 lines"):
        load_pairs(source, target, Vocab.build(SOURCES), 32, states)
    word_states(["a b", "c d e f g h", "x"]).save(states)
    with pytest.raises(NausError, match="no states of line 1 of .*s.txt"):
        load_pairs(source, target, Vocab.build(SOURCES), 32, states)


def test_a_crafted_states_file_is_refused(tmp_path):
    path = tmp_path / "states.npz"
    np.savez(path, flat=np.zeros((3, WIDTH), dtype=np.float16), offsets=np.array([0, 2, 5]),
             sentences=np.zeros((2, 32), dtype=np.uint8))
    with pytest.raises(NausError, match="offsets do not index"):
        States.load(path)
    np.savez(path, flat=np.zeros((3, 7), dtype=np.float16), offsets=np.array([0, 3]), sentences=np.zeros((1, 32), np.uint8))
    with pytest.raises(NausError, match="expected N x 384"):
        States.load(path)


def test_a_files_states_are_a_function_of_its_lines_and_a_sentence_alone_moves_by_1e_3_at_most(tmp_path):
    """MiniLM's mean state of each word's pieces, with no padding: the same lines give the same bytes, and a
    sentence encoded alone moves by 1e-3 at most (entries of order 1; the kernels' blocking depends on the
    batch's size)."""
    lines = ["police arrested five men on monday", "the quake hit unbelievably hard", "police said",
             "rebels seized two towns on friday"]  # the first and the last: one batch of 8 pieces each
    encoder = Encoder()
    together = encoder.encode(lines)
    assert together.words().tolist() == [6, 5, 2, 6]
    assert np.array_equal(encoder.encode(lines).flat, together.flat)
    for i, line in enumerate(lines):
        assert np.abs(encoder.encode([line])[0].astype(np.float32) - together[i]).max() <= 1e-3
    together.save(tmp_path / "s.npz")
    loaded = States.load(tmp_path / "s.npz")
    assert np.array_equal(loaded.flat, together.flat) and np.array_equal(loaded.offsets, together.offsets)


def test_a_words_state_is_the_mean_np_add_at_makes_to_the_bit():
    """`_word_means` against the one-piece-at-a-time sums it replaced: random pieces, words of up to 12 pieces
    (past numpy's 8-way unrolled sums), pieces of no word (-1), words with no piece and owners out of order."""
    from naus.student.frozen import WIDTH, _word_means

    rng = np.random.default_rng(0)
    for words, pieces in ((1, 1), (5, 40), (30, 200), (4, 0)):
        owner = np.sort(rng.integers(-1, words, pieces)) if pieces % 3 else rng.integers(-1, words, pieces)
        owner[: min(12, pieces)] = 0 if pieces > 12 else owner[: min(12, pieces)]
        states = rng.standard_normal((pieces, WIDTH)).astype(np.float32)
        sums = np.zeros((words, WIDTH), dtype=np.float64)
        np.add.at(sums, owner[owner >= 0], states[owner >= 0])
        expected = (sums / np.maximum(np.bincount(owner[owner >= 0], minlength=words), 1)[:, None]).astype(np.float16)
        assert np.array_equal(_word_means(states, owner, words), expected), (words, pieces)


def test_the_encoder_is_transformers_bert_model_bit_for_bit():
    """`MiniLM` against transformers' BertModel (all-MiniLM-L6-v2, as `naus encode-states` once ran it): the same
    token states to the last bit, for batches of one piece to the model's 512: the states the committed students
    learned from are unchanged."""
    import torch
    from transformers import AutoModel

    from naus.student.frozen import MiniLM
    from naus.teacher.similarity import model_dir

    reference = AutoModel.from_pretrained(str(model_dir())).eval()
    ours = MiniLM(model_dir())
    generator = torch.Generator().manual_seed(0)
    with torch.inference_mode():
        for batch, pieces in ((1, 1), (3, 9), (64, 23), (2, 512)):
            ids = torch.randint(1000, 30522, (batch, pieces), generator=generator)
            expected = reference(input_ids=ids, attention_mask=torch.ones_like(ids)).last_hidden_state
            assert torch.equal(ours(ids), expected), (batch, pieces)


def test_without_states_it_computes_them_from_the_raw_text(trained):
    """`naus summarize` on new text: MiniLM runs on the normalised sentence, and the summary is its words (an AR
    student's may end before L)."""
    summary = Summarizer.from_checkpoint(trained, "cpu").summarize(["Zebras crossed 3 rivers in Kenya on Monday."],
                                                                   length=4)
    words = summary[0].summary.split()
    ends = ARCHITECTURES[load_checkpoint(trained)["model_config"]["arch"]].generates == AR
    assert (len(words) <= 4 if ends else len(words) == 4) and set(words) <= set("Zebras crossed 3 rivers in Kenya on Monday Crossed Rivers In "
                                                  "On".split())  # a headline: as written, the first capitalised


def test_states_for_a_student_that_reads_none_are_refused_and_empty_lines_have_none(tmp_path):
    from tests.unit.test_architectures import tiny_config as table4_config

    vocab = Vocab.build(SOURCES)
    pairs = Pairs([vocab.encode(s) for s in SOURCES[:4]], [vocab.encode(t) for t in TARGETS[:4]])
    train(pairs, None, vocab, table4_config(len(vocab), "nar-ctc"), TrainConfig(max_steps=2, device="cpu"), tmp_path)
    with pytest.raises(NausError, match="a nar-ctc student reads no frozen states"):
        Summarizer.from_checkpoint(tmp_path / "best.pt", "cpu").summarize(SOURCES[:1], raw=False,
                                                                         states=word_states(SOURCES[:1]))
    assert Encoder().encode(["", "police said", ""]).words().tolist() == [0, 2, 0]


def test_states_computed_here_read_only_the_words_the_student_reads_and_count_in_the_time(trained, monkeypatch):
    """A 1 MB line took 2.4 GB (MiniLM's states were computed for the whole line before the cut), and `--timing`
    without `--states` left MiniLM's time out (0.040 s reported where 0.15 s was spent)."""
    import time

    import naus.student.frozen as frozen

    seen = []

    class Slow:
        def encode(self, lines):
            seen.extend(len(line.split()) for line in lines)
            time.sleep(0.3)
            return word_states(lines)

    monkeypatch.setattr(frozen, "encoder", lambda onnx=None, top=None: Slow())
    summarizer = Summarizer.from_checkpoint(trained, "cpu")
    long = " ".join(SOURCES[0].split() * 5000)
    summarizer.summarize([long, SOURCES[1]], raw=False, length=3)
    assert max(seen) == summarizer.model.config.max_len and summarizer.last_timing["seconds"] >= 0.3


def test_a_target_word_stands_at_its_first_place_after_the_previous_words():
    assert source_positions([5, 6, 5, 7], [5, 7]) == [0, 3]
    assert source_positions([5, 6, 5, 7], [6, 5]) == [1, 2]  # the 5 after the 6
    assert source_positions([5, 6, 5, 7], [7, 5]) == [3, 0]  # out of the source's order: its first place
    assert source_positions([5, 6], [5, 8]) is None


@pytest.mark.parametrize("arch", ["ar-copy", "nar-copy"])
def test_the_encoder_decoders_loss_is_the_cross_entropy_of_each_words_source_position(arch):
    """Without smoothing: the mean over slots of −log p(position) (and, for AR, of the end after the last word)."""
    torch.manual_seed(3)
    model = build_model(tiny_config(arch=arch)).double().eval()
    tokens, lengths = torch.tensor([[3, 4, 3, 5], [6, 7, 0, 0]]), torch.tensor([4, 2])
    states = torch.randn(2, 4, WIDTH, dtype=torch.float64)
    targets = [[4, 3, 5], [7]]  # positions 1 2 3, and 1; a third pair whose word 9 is not in its source
    with torch.no_grad():
        loss, used, skipped = model.loss(torch.cat([tokens, tokens[:1]]), torch.cat([lengths, lengths[:1]]),
                                         targets + [[9]], smoothing=0.0, states=torch.cat([states, states[:1]]))
        if arch == "ar-copy":
            choices = model.scores(states, lengths, torch.tensor([[-1, 1, 2, 3], [-1, 1, -1, -1]]))
            picked = [(0, t, g) for t, g in enumerate([2, 3, 4, 0])] + [(1, 0, 2), (1, 1, 0)]
        else:
            choices = model.scores(states, lengths, torch.tensor([3, 1]))[..., 1:]
            picked = [(0, 0, 1), (0, 1, 2), (0, 2, 3), (1, 0, 1)]
        log_probs = choices.log_softmax(-1)
    assert (used, skipped) == (2, 1)
    assert float(loss) == pytest.approx(-sum(float(log_probs[b, t, g]) for b, t, g in picked) / len(picked))


@pytest.mark.parametrize("seed", range(3))
def test_ar_copy_beam_search_with_a_full_beam_is_exact(seed):
    """Every summary of at most L = 3 copied positions (the end after each, but at L), scored by the teacher-forced
    decoder: the widest beam of the incremental one finds the best and its log-probability."""
    import itertools

    torch.manual_seed(seed)
    model = build_model(tiny_config(arch="ar-copy")).double().eval()
    with torch.no_grad():
        model.query.weight.mul_(6.0)  # sharper choices than the tiny init gives
        states, lengths, words = torch.randn(1, 3, WIDTH, dtype=torch.float64), torch.tensor([3]), torch.tensor([[3, 4, 5]])
        best = ([], -math.inf)
        for n in range(4):
            for picked in itertools.product(range(3), repeat=n):
                log_probs = model.scores(states, lengths, torch.tensor([[-1, *picked]]))[0].log_softmax(-1)
                score = sum(float(log_probs[t, j + 1]) for t, j in enumerate(picked))
                score += float(log_probs[n, 0]) if n < 3 else 0.0
                if score > best[1]:
                    best = ([int(words[0, j]) for j in picked], score)
        (found, found_score), = model.generate(states, lengths, words, [3], beam_size=40)
    assert found == best[0]
    assert found_score == pytest.approx(best[1], abs=1e-6)  # the beam's scores in float32
