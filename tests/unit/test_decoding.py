import itertools
import math

import numpy as np
import pytest
import torch

from naus import NausError
from naus.decoding import (
    char_control_batch,
    ctc_beam_search,
    ctc_beam_search_batch,
    forced_alignment,
    greedy,
    greedy_batch,
    length_control,
    length_control_batch,
    reduce_path,
    slot_log_norm,
    top_k_slots,
    truncate,
)
from naus.decoding.topk import _grouped_top_kernel, _grouped_top_torch
from tests.helpers import write
from tests.reference import char_control_python, ctc_beam_search_python, length_control_tensors


def random_log_probs(time, vocab, seed, peaked_blank=False):
    gen = torch.Generator().manual_seed(seed)
    logits = torch.randn(time, vocab, generator=gen) * 2
    if peaked_blank:
        logits[:, 0] += 10
    return logits.log_softmax(-1)


def brute_force_best_path(lp, length, merge):
    """Most probable path whose reduction has exactly `length` words (None when there is none)."""
    best = None
    for path in itertools.product(range(lp.shape[1]), repeat=lp.shape[0]):
        if len(reduce_path(list(path), 0, merge)) != length:
            continue
        score = float(lp[range(lp.shape[0]), list(path)].sum())
        if best is None or score > best[0] + 1e-9:
            best = (score, list(path))
    return best


def test_reduce_path():
    assert reduce_path([0, 3, 3, 0, 3, 5, 5], 0, True) == [3, 3, 5]
    assert reduce_path([0, 3, 3, 0, 3, 5, 5], 0, False) == [3, 3, 3, 5, 5]


@pytest.mark.parametrize("seed", range(12))
def test_theorem_1_exact_without_merging_for_beam_1(seed):
    time, vocab = 5, 4
    lp = random_log_probs(time, vocab, seed)
    for length in range(0, time + 1):
        score, _ = brute_force_best_path(lp, length, merge=False)
        hyp = length_control(lp, length, beam_size=1, merge_repeats=False)
        assert len(hyp.tokens) == length
        assert hyp.log_prob == pytest.approx(score, abs=1e-5)


@pytest.mark.parametrize("seed", range(12))
def test_merging_with_a_beam_of_every_state_equals_brute_force(seed):
    time, vocab = 5, 4
    lp = random_log_probs(time, vocab, seed)
    for length in range(1, time + 1):
        score, _ = brute_force_best_path(lp, length, merge=True)
        hyp = length_control(lp, length, beam_size=vocab)  # states: ε and the 3 words
        assert len(hyp.tokens) == length
        assert reduce_path(hyp.path) == hyp.tokens
        assert hyp.log_prob == pytest.approx(score, abs=1e-5)
        assert hyp.log_prob == pytest.approx(float(lp[range(time), hyp.path].sum()), abs=1e-5)


def test_papers_two_slot_example():
    # vocabulary: ε=0, I=1, like=2, coding=3; slot probabilities from the paper
    probs = torch.tensor([[0.11, 0.39, 0.4, 0.1], [0.0, 0.1, 0.9, 0.0]])
    lp = probs.clamp_min(1e-12).log()
    assert length_control(lp, 2, beam_size=1).tokens == [2, 1]  # "like I"
    assert length_control(lp, 2, beam_size=4).tokens == [1, 2]  # the exact answer, "I like"


@pytest.mark.parametrize("seed", range(6))
def test_exact_length_whenever_the_slots_allow(seed):
    lp = random_log_probs(20, 30, seed, peaked_blank=seed % 2 == 0)
    for length in (1, 5, 10, 20):
        assert len(length_control(lp, length).tokens) == length


def test_fewer_slots_than_words_gives_as_many_as_possible():
    lp = random_log_probs(3, 10, 0)
    assert len(length_control(lp, 8).tokens) == 3


def test_all_blank_argmax():
    lp = random_log_probs(12, 20, 1, peaked_blank=True)
    assert greedy(lp).tokens == []
    assert truncate(greedy(lp), 4).tokens == []
    assert len(length_control(lp, 4).tokens) == 4


def test_force_length_false_keeps_a_short_greedy_output():
    lp = random_log_probs(12, 20, 1, peaked_blank=True)
    assert length_control(lp, 4, force_length=False).tokens == []


def test_greedy_is_argmax_then_reduce():
    lp = random_log_probs(15, 8, 3)
    path = lp.argmax(-1).tolist()
    hyp = greedy(lp)
    assert hyp.path == path and hyp.tokens == reduce_path(path)
    assert truncate(hyp, 2).tokens == hyp.tokens[:2]


def test_batched_equals_unbatched():
    lps = [random_log_probs(t, 12, seed) for seed, t in enumerate([7, 12, 4, 9])]
    targets = [3, 6, 4, 9]
    padded = torch.full((4, 12, 12), -5.0)
    for i, lp in enumerate(lps):
        padded[i, : lp.shape[0]] = lp
    lengths = torch.tensor([lp.shape[0] for lp in lps])
    for merge in (True, False):
        batch = length_control_batch(padded, lengths, targets, beam_size=3, merge_repeats=merge)
        for lp, target, hyp in zip(lps, targets, batch):
            single = length_control(lp, target, beam_size=3, merge_repeats=merge)
            assert (hyp.tokens, hyp.path) == (single.tokens, single.path)
            assert hyp.log_prob == pytest.approx(single.log_prob, abs=1e-5)
    for lp, hyp in zip(lps, greedy_batch(padded, lengths)):
        assert hyp.tokens == greedy(lp).tokens


@pytest.mark.parametrize("seed", range(6))
def test_compiled_length_control_equals_the_tensor_version(seed):
    """Ragged lengths and targets (some unreachable, some zero), small vocabularies so repeats
    and clashes with the best parent are frequent, every beam size and both reductions."""
    gen = torch.Generator().manual_seed(seed)
    n, time, vocab = 7, 14, 3 + seed
    logits = torch.randn(n, time, vocab, generator=gen) * 3
    logits[:, :, 0] += torch.randn(n, time, generator=gen) * 3  # blank sometimes peaked
    lp = logits.log_softmax(-1)
    lengths = torch.randint(0, time + 1, (n,), generator=gen)
    lengths[0] = time
    targets = torch.randint(0, time + 3, (n,), generator=gen).tolist()
    for merge in (True, False):
        for beam in (1, 2, 3, 6):
            compiled = length_control_batch(lp, lengths, targets, beam, merge_repeats=merge)
            tensors = length_control_tensors(lp, lengths, targets, beam, merge_repeats=merge)
            for got, expected in zip(compiled, tensors):
                assert (got.path, got.tokens) == (expected.path, expected.tokens)
                # the same float32 terms, summed for the whole batch at once there: equal to a few ulps
                assert got.log_prob == pytest.approx(expected.log_prob, rel=1e-6, abs=1e-6)


@pytest.mark.parametrize("seed", range(6))
def test_length_control_is_exact_when_many_paths_tie(seed):
    """Integer log-probabilities make equal scores common; the compiled DP breaks ties its own
    way (the earlier candidate), and must still reach the brute-force optimum with an exact beam."""
    gen = torch.Generator().manual_seed(seed)
    time, vocab = 5, 4
    lp = -torch.randint(0, 3, (time, vocab), generator=gen).float()
    for length in range(1, time + 1):
        for merge, beam in ((True, vocab), (False, 1)):
            best = brute_force_best_path(lp, length, merge)
            hyp = length_control(lp, length, beam_size=beam, merge_repeats=merge)
            assert len(hyp.tokens) == length and hyp.log_prob == best[0]


@pytest.mark.parametrize("seed", range(40))
def test_compiled_beam_search_equals_the_dictionary_version(seed):
    gen = torch.Generator().manual_seed(seed)
    time, vocab = int(torch.randint(0, 16, (1,), generator=gen)), int(torch.randint(2, 9, (1,), generator=gen))
    lp = (torch.randn(time, vocab, generator=gen) * 3).log_softmax(-1)
    for beam in (1, 2, 3, 6):
        got, expected = ctc_beam_search(lp, beam), ctc_beam_search_python(lp, beam)
        assert (got.tokens, got.path) == (expected.tokens, expected.path)
        # the same float32 terms, summed for the whole batch at once there: equal to a few ulps
        assert got.log_prob == pytest.approx(expected.log_prob, rel=1e-6, abs=1e-6)


def prefix_probability(lp, prefix):
    total = -math.inf
    for path in itertools.product(range(lp.shape[1]), repeat=lp.shape[0]):
        if reduce_path(list(path)) == list(prefix):
            total = torch.logaddexp(torch.tensor(total), lp[range(lp.shape[0]), list(path)].sum()).item()
    return total


@pytest.mark.parametrize("seed", range(4))
def test_prefix_beam_search_with_a_wide_beam_finds_the_most_probable_summary(seed):
    lp = random_log_probs(4, 3, seed)
    prefixes = {tuple(reduce_path(list(p))) for p in itertools.product(range(3), repeat=4)}
    best = max(prefixes, key=lambda p: prefix_probability(lp, p))
    hyp = ctc_beam_search(lp, beam_size=64)
    assert tuple(hyp.tokens) == best
    assert reduce_path(hyp.path) == hyp.tokens


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("tokens", [[2, 2, 1], [3], [1, 2, 3], [], [1, 1, 1]])
def test_forced_alignment_is_the_best_path_for_its_summary(seed, tokens):
    lp = random_log_probs(5, 4, seed)
    if seed % 2:  # integer scores: many equal paths
        lp = -torch.randint(0, 3, (5, 4), generator=torch.Generator().manual_seed(seed)).float()
    path = forced_alignment(lp, tokens)
    assert reduce_path(path) == tokens
    best = max(
        (p for p in itertools.product(range(4), repeat=5) if reduce_path(list(p)) == tokens),
        key=lambda p: float(lp[range(5), list(p)].sum()),
    )
    assert float(lp[range(5), path].sum()) == pytest.approx(float(lp[range(5), list(best)].sum()), abs=1e-5)


@pytest.mark.parametrize("vocab,k,exclude", [(30_000, 7, 4), (20_845, 7, 0), (6, 5, 0), (6, 6, -1), (130, 3, -1),
                                             (65, 7, 64), (1_027, 7, 1_025)])  # the last: tail entries
def test_top_k_kernel_equals_torch_topk(vocab, k, exclude):
    gen = torch.Generator().manual_seed(vocab + k)
    lp = (torch.randn(3, 5, vocab, generator=gen) * 3).log_softmax(-1)
    lp[0, 0, : vocab // 2] = float("-inf")  # masked entries still count, as in torch.topk
    lp[1, 1] = lp[1, 1].round(decimals=0)  # many ties: the same values, the ids pointing at them
    values, ids = top_k_slots(lp, k, exclude)
    keep = torch.ones(vocab, dtype=torch.bool)
    if exclude >= 0:
        keep[exclude] = False
    expected = lp[..., keep].topk(min(k, int(keep.sum())), dim=-1).values
    assert torch.equal(values, expected)
    assert torch.equal(lp.gather(-1, ids), values) and not (ids == exclude).any()
    assert all(len(set(row)) == len(row) for row in ids.reshape(-1, ids.shape[-1]).tolist())


def summary_chars(tokens, word_chars):
    """Characters of a reduced summary written with single spaces."""
    return sum(word_chars[t] for t in tokens) + max(len(tokens) - 1, 0)


def brute_force_within_budget(lp, budget, word_chars):
    """The most probable path whose summary has at most `budget` characters."""
    best = None
    for path in itertools.product(range(lp.shape[1]), repeat=lp.shape[0]):
        if summary_chars(reduce_path(list(path)), word_chars) <= budget:
            score = float(lp[range(lp.shape[0]), list(path)].sum())
            if best is None or score > best[0]:
                best = (score, list(path))
    return best


def char_control(lp, budget, word_chars, beam, **kwargs):
    return char_control_batch(lp[None], torch.tensor([lp.shape[0]]), [budget], word_chars, beam, **kwargs)[0]


@pytest.mark.parametrize("seed", range(8))
def test_char_control_with_a_beam_of_every_state_equals_brute_force(seed):
    """Words of 1-3 characters, so budgets 0-9 cut between one and three words; integer
    log-probabilities in half the seeds make ties common (the optimum's score must still be reached)."""
    gen = torch.Generator().manual_seed(seed)
    time, vocab = 5, 5
    if seed % 2:
        lp = -torch.randint(0, 3, (time, vocab), generator=gen).float()
    else:
        lp = (torch.randn(time, vocab, generator=gen) * 2).log_softmax(-1)
    word_chars = [0] + torch.randint(1, 4, (vocab - 1,), generator=gen).tolist()
    for budget in range(0, 10):
        best, _ = brute_force_within_budget(lp, budget, word_chars)
        hyp = char_control(lp, budget, word_chars, beam=vocab)  # states: ε and the 4 words
        assert summary_chars(hyp.tokens, word_chars) <= budget
        assert hyp.tokens == reduce_path(hyp.path)
        assert hyp.log_prob == pytest.approx(best, abs=1e-5)


@pytest.mark.parametrize("seed", range(6))
def test_char_control_takes_only_the_words_that_can_enter_the_beam(seed):
    """Each slot offers only the B + 1 best words of each length; with more words per length than
    that, the result must be what the same beam search over every word gives."""
    gen = torch.Generator().manual_seed(seed)
    time, vocab = 6, 14
    logits = torch.randn(time, vocab, generator=gen) * 3
    logits[:, 0] += torch.randn(time, generator=gen) * 3  # ε sometimes peaked
    lp = logits.log_softmax(-1)
    word_chars = [0] + torch.randint(1, 4, (vocab - 1,), generator=gen).tolist()
    for budget in (0, 1, 3, 5, 8, 12, 20):
        for beam in (1, 2, 3):
            hyp = char_control(lp, budget, word_chars, beam)
            assert hyp.path == char_control_python(lp, budget, word_chars, beam)
            assert summary_chars(hyp.tokens, word_chars) <= budget


def test_char_control_counts_an_unknown_word_as_the_source_word_it_stands_for():
    """`<unk>` (id 2 here, 5 characters as written) at slot 0 stands for a 12-letter source word:
    within 10 characters it cannot be used there, though it is the slot's most probable word."""
    lp = torch.full((2, 4), -9.0)
    lp[0, 2], lp[0, 3], lp[1, 0] = -0.1, -2.0, -0.1  # slot 0: <unk> best, then word 3; slot 1: ε
    word_chars = [0, 5, 5, 4]
    plain = char_control(lp, 10, word_chars, beam=3, unk=2)
    assert plain.tokens == [2]
    raw = char_control(lp, 10, word_chars, beam=3, unk=2, unk_chars=[[12, 5]])
    assert raw.tokens == [3]


def test_char_control_batch_equals_one_sample_at_a_time():
    gen = torch.Generator().manual_seed(3)
    n, time, vocab = 5, 12, 40
    lp = (torch.randn(n, time, vocab, generator=gen) * 3).log_softmax(-1)
    lengths = torch.tensor([12, 7, 1, 0, 10])
    budgets = [30, 12, 5, 8, 0]
    word_chars = torch.randint(1, 9, (vocab,), generator=gen).numpy()
    batch = char_control_batch(lp, lengths, budgets, word_chars, beam_size=4)
    for i, hyp in enumerate(batch):
        single = char_control_batch(lp[i : i + 1, : lengths[i]], lengths[i : i + 1], budgets[i : i + 1], word_chars, 4)[0]
        assert (hyp.path, hyp.tokens) == (single.path, single.tokens)
        assert len(hyp.path) == lengths[i] and summary_chars(hyp.tokens, word_chars) <= budgets[i]


WORD_CHARS = torch.randint(1, 7, (30,), generator=torch.Generator().manual_seed(5)).numpy()
DECODERS = {  # each batch decoder, on 4 samples of 30 words
    "length-control": lambda lp, lengths, norm: length_control_batch(lp, lengths, [6, 3, 2, 0], 3, log_norm=norm),
    "free length": lambda lp, lengths, norm: length_control_batch(lp, lengths, [9, 3, 0, 0], 3, force_length=False,
                                                                  log_norm=norm),
    "beam": lambda lp, lengths, norm: ctc_beam_search_batch(lp, lengths, 3, log_norm=norm),
    "greedy": lambda lp, lengths, norm: greedy_batch(lp, lengths, log_norm=norm),
    "char-control": lambda lp, lengths, norm: char_control_batch(lp, lengths, [25, 14, 9, 3], WORD_CHARS, 3,
                                                                 log_norm=norm),
}


@pytest.mark.parametrize("decoder", ["length-control", "beam", "char-control"])
def test_decoders_read_alike_in_place_and_from_gathered_columns(monkeypatch, decoder):
    """The GPU's way (a gathered table of the candidate columns) gives the CPU's paths and scores."""
    from naus.decoding import beam, common

    gen = torch.Generator().manual_seed(5)
    lp = (torch.randn(4, 10, 30, generator=gen) * 3).log_softmax(-1)
    lengths = torch.tensor([10, 9, 4, 10])
    in_place = DECODERS[decoder](lp, lengths, None)
    repeats, candidates = common.repeat_table, beam._candidate_table
    monkeypatch.setattr(common, "repeat_table", lambda lp, word_id, gather: repeats(lp, word_id, True))
    monkeypatch.setattr(beam, "_candidate_table", lambda lp, ranks, blank, gather: candidates(lp, ranks, blank, True))
    gathered = DECODERS[decoder](lp, lengths, None)
    assert [(h.path, h.log_prob) for h in gathered] == [(h.path, h.log_prob) for h in in_place]


@pytest.mark.parametrize("decoder", list(DECODERS))
def test_logits_with_their_log_norm_decode_as_their_log_probs(decoder):
    """Decoders given logits and each slot's log-sum-exp normalise only what they read: the same paths as
    from the log-softmax, and scores equal to float32 rounding (x − lse and log_softmax's x − max − log Σ
    differ in the last bits: 1e-6 of 12 terms of about −5 each)."""
    gen = torch.Generator().manual_seed(8)
    logits = torch.randn(4, 12, 30, generator=gen) * 3 + 20  # far from normalised
    lengths = torch.tensor([12, 9, 4, 1])
    expected = DECODERS[decoder](logits.log_softmax(-1), lengths, None)
    got = DECODERS[decoder](logits, lengths, slot_log_norm(logits))
    assert [(h.path, h.tokens) for h in got] == [(h.path, h.tokens) for h in expected]
    assert [h.log_prob for h in got] == pytest.approx([h.log_prob for h in expected], rel=1e-5, abs=1e-5)


def test_slot_log_norm_is_logsumexp():
    logits = torch.randn(3, 5, 40, generator=torch.Generator().manual_seed(1)) * 4
    assert torch.allclose(slot_log_norm(logits), logits.logsumexp(-1), rtol=1e-6, atol=1e-6)  # per sample: same sums
    assert slot_log_norm(logits[:0]).shape == (0, 5)


def test_grouped_top_kernel_equals_a_top_k_per_group():
    """The CPU kernel and the GPU path (`torch.topk` per group) pick the same words, best first;
    groups smaller than the number asked are padded with -inf and id -1."""
    gen = torch.Generator().manual_seed(0)
    lp = torch.randn(2, 3, 50, generator=gen)
    group = torch.randint(-1, 4, (50,), generator=gen).numpy()
    group[group == 3] = 2  # group 3 empty
    group[:] = np.where(np.arange(50) == 7, 3, group)  # ... but for one word
    values, ids = _grouped_top_kernel(lp.reshape(6, 50).numpy(), group, 4, 3)
    expected_values, expected_ids = _grouped_top_torch(lp, group, 4, 3)
    assert torch.equal(torch.from_numpy(ids).reshape(2, 3, -1), expected_ids)
    assert torch.equal(torch.from_numpy(values).reshape(2, 3, -1), expected_values)
    assert (expected_ids[..., 10:] == -1).all() and expected_ids[..., 9].eq(7).all()


def test_length_control_of_a_batch_on_two_threads_equals_one_thread():
    """The samples of a batch are decoded in parallel (numba's prange over the process's torch threads)."""
    gen = torch.Generator().manual_seed(7)
    lp = (torch.randn(33, 12, 9, generator=gen) * 3).log_softmax(-1)
    lengths = torch.randint(0, 13, (33,), generator=gen)
    targets = torch.randint(0, 8, (33,), generator=gen).tolist()
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = length_control_batch(lp, lengths, targets, 3)
        torch.set_num_threads(2)
        two = length_control_batch(lp, lengths, targets, 3)
    finally:
        torch.set_num_threads(threads)
    assert [(h.path, h.tokens, h.log_prob) for h in one] == [(h.path, h.tokens, h.log_prob) for h in two]


def test_beam_search_of_a_batch_equals_each_sample_alone():
    """Padded slots, empty samples and parallel threads change nothing: the batch gives each sample's own result."""
    gen = torch.Generator().manual_seed(11)
    lp = (torch.randn(9, 10, 7, generator=gen) * 3).log_softmax(-1)
    lengths = torch.tensor([10, 0, 3, 7, 10, 1, 5, 9, 2])
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        batch = ctc_beam_search_batch(lp, lengths, 3)
    finally:
        torch.set_num_threads(threads)
    for i, got in enumerate(batch):
        alone = ctc_beam_search_python(lp[i, : lengths[i]], 3)
        assert (got.tokens, got.path) == (alone.tokens, alone.path)
        assert got.log_prob == pytest.approx(alone.log_prob, rel=1e-6, abs=1e-6)

# -- hostile and careless input (the review rounds): each test names the input it spoils and what it did before --

def test_the_largest_beam_on_a_long_sentence_costs_its_extensions_not_their_square(tmp_path, env):
    """Beam 256 (the maximum) over 128 slots of 300 words: 128 × 256² extensions, each a dictionary step (a
    few seconds; a scan of the slot's prefixes per extension made it minutes). Bounded at 120 s."""
    import subprocess
    import sys

    from tests.helpers import ROOT

    script = ("import torch; from naus.decoding.beam import ctc_beam_search; torch.manual_seed(0); "
              "h = ctc_beam_search(torch.randn(128, 300).log_softmax(-1), beam_size=256); print(len(h.path))")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT,
                            timeout=120)
    assert result.returncode == 0 and result.stdout.strip() == "128", result.stderr[-2000:]


def test_a_length_or_budget_beyond_what_the_slots_hold_gives_what_the_slots_allow():
    """No table wider than the source: L above the slots is the longest reachable summary, as with L = T,
    and a budget above what T of the longest words fill is the best summary of any length."""
    gen = torch.Generator().manual_seed(3)
    lp = (torch.randn(2, 6, 9, generator=gen) * 2).log_softmax(-1)
    lengths = torch.tensor([6, 4])
    huge = length_control_batch(lp, lengths, [10**9, 10**9], 3)
    exact = length_control_batch(lp, lengths, [6, 4], 3)
    assert [(h.path, h.log_prob) for h in huge] == [(h.path, h.log_prob) for h in exact]
    word_chars = [0, 0, 0, 5, 1, 7, 2, 3, 4]
    wide = char_control_batch(lp, lengths, [10**9, 10**9], word_chars, 3)
    fitted = char_control_batch(lp, lengths, [6 * 8, 4 * 8], word_chars, 3)
    assert [(h.path, h.log_prob) for h in wide] == [(h.path, h.log_prob) for h in fitted]


def test_a_decoder_whose_kernel_did_not_finish_is_an_error_not_an_empty_summary():
    lp = torch.full((2, 5, 6), float("nan"))  # what a diverged model gives: no sample's kernel ends with a score
    with pytest.raises(NausError, match="the decoder failed on 2 of 2 samples"):
        length_control_batch(lp, torch.tensor([5, 3]), [2, 2], 2)


def test_an_allocation_that_fails_inside_the_parallel_kernel_is_an_error(tmp_path):
    """numba drops an exception raised inside `prange`: under an address-space limit the tables of a huge
    request cannot be allocated, and the decoder must say so instead of returning empty paths."""
    import subprocess
    import sys

    script = write(tmp_path / "oom.py", """
import resource, sys, torch
from naus import NausError
from naus.decoding import length_control_batch
torch.set_num_threads(2)  # the two samples on threads of their own, whatever the suite's one thread a worker
lp = torch.randn(2, 3000, 6).log_softmax(-1)
length_control_batch(lp[:, :5].contiguous(), torch.tensor([5, 5]), [2, 2], 2)  # compiled before the limit
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
try:
    length_control_batch(lp, torch.tensor([3000, 3000]), [3000, 3000], 200)  # 2 x 46 GB of tables
except NausError as err:
    sys.exit(f"refused: {err}")
""")
    result = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 1 and "refused: the decoder failed" in result.stderr, result.stderr[-2000:]
