"""What every decoder shares: the hypothesis, Γ, the slot tables the compiled kernels read (and the
backtrace through them), the batch a decoding method is given, and the checks around the kernels."""

from __future__ import annotations

import contextlib
from collections import namedtuple
from dataclasses import dataclass, field
from typing import Any, Iterator

import numba
import numpy as np
import torch

from naus import NausError
from naus.settings import DecodeConfig

NEG_INF = float("-inf")
BEAM = DecodeConfig.beam_size


@dataclass
class Hypothesis:
    tokens: list[int]  # the reduced summary
    path: list[int] = field(default_factory=list)  # one id per valid slot
    log_prob: float = 0.0  # sum of log_probs[s, path[s]]
    positions: list[int] | None = None  # the source position of each word (`source_order`'s decoders)


@dataclass
class Batch:
    """One batch of sentences as a decoding method reads it (`naus.methods`): CTC students' scores, or the
    encoder-decoder and its input, with each sample's target."""

    lengths: torch.Tensor  # valid source tokens (CTC: slots) per sample
    targets: list[int]  # words per sample
    beam_size: int
    blank: int
    logits: torch.Tensor | None = None  # CTC: [N, T, V] scores, normalised by `log_norm`
    log_norm: torch.Tensor | None = None
    chars: int | None = None  # char-control's budget
    word_chars: np.ndarray | None = None  # characters of each token as written (char-control)
    unk: int = -1
    unk_chars: list[list[int]] | None = None  # per sample and slot, the characters of the source word `unk` stands for
    model: Any = None  # an encoder-decoder
    tokens: torch.Tensor | None = None  # its input ids [N, S]
    banned: tuple[int, ...] = ()  # tokens it may not emit
    positions: torch.Tensor | None = None  # a copy head's scores [N, T, 1 + T] of ε and each source position
    source_ids: torch.Tensor | None = None  # [N, T]: the token of each source position (copy heads)
    tied: np.ndarray | None = None  # [N, T]: position k kept only with k + 1 after it (source order: phrases)
    adjacency: float = 0.0  # source order: the bonus of a word after its source neighbour
    dangling: np.ndarray | None = None  # [N, T]: positions a source-order summary may not end on
    max_memory_mb: int | None = None  # char-control: what its tables may take


def reduce_path(path: list[int], blank: int = 0, merge_repeats: bool = True) -> list[int]:
    """Γ: merge repeated neighbours, then drop ε (Γ′ when merge_repeats is False: drop ε only)."""
    out, previous = [], None
    for token in path:
        if token != blank and not (merge_repeats and token == previous):
            out.append(token)
        previous = token
    return out


def word_slots(path: list[int], blank: int = 0) -> list[int]:
    """The slot where each word of Γ(path) starts (its first slot after ε or another token)."""
    return [s for s, token in enumerate(path) if token != blank and (s == 0 or path[s - 1] != token)]


def share_threads(samples: int) -> None:
    """The batch kernels' `prange` runs on the threads torch was given (`--threads`), no more than the batch's
    samples: a one-thread job stays one, and a batch of one wakes no worker. Numba's pool itself is as large
    as NUMBA_NUM_THREADS when numba is imported (`naus --threads` sets it): the idle workers of a larger pool
    spin, keeping another core busy."""
    numba.set_num_threads(max(1, min(torch.get_num_threads(), numba.config.NUMBA_NUM_THREADS, samples)))


def slot_log_norm(logits: torch.Tensor) -> torch.Tensor:
    """Each slot's log-sum-exp [N, T]: what turns logits [N, T, V] into log-probabilities. On a CPU one
    sample at a time, as a batch-sized temporary costs more in page faults than the exponentials; on a GPU one
    call."""
    if logits.device.type != "cpu":
        return logits.logsumexp(dim=-1)
    return torch.stack([sample.logsumexp(dim=-1) for sample in logits]) if len(logits) else logits[..., 0]


def normalized(log_probs: torch.Tensor, log_norm: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    """The decoders' scores and what each slot's must lose to be a log-probability (on the CPU): `log_norm`
    for logits, zero for log-probabilities (which are their own logits: x − 0 is x, the same bits)."""
    lp = log_probs.detach().float()
    if log_norm is None:
        return lp, torch.zeros(lp.shape[:2])
    return lp, log_norm.detach().float().cpu()


@contextlib.contextmanager
def failures_raised() -> Iterator[None]:
    """A compiled kernel that failed is an error in one line: an allocation that failed inside numba's
    `prange` comes back as a SystemError whose cause is the MemoryError (or not at all: `check_finished`)."""
    try:
        yield
    except (MemoryError, SystemError) as err:
        cause = err.__cause__ if isinstance(err.__cause__, MemoryError) else err
        raise NausError(f"the decoder failed ({type(cause).__name__}: {cause}): a smaller beam, batch or "
                        "target needs less memory") from None


def check_finished(scores: np.ndarray, valid: np.ndarray) -> None:
    """A batch kernel leaves a sample's score NaN when its kernel did not finish: an exception inside
    numba's `prange` (an allocation that failed, say) is dropped there, so it is raised here."""
    failed = np.flatnonzero(np.isnan(scores) & (valid > 0))
    if len(failed):
        raise NausError(f"the decoder failed on {len(failed)} of {len(valid)} samples of a batch (the first: row "
                        f"{failed[0]} of {valid[failed[0]]} slots): out of memory, or a non-finite model output")


def check_targets(beam_size: int, targets: list[int]) -> None:
    if beam_size < 1:
        raise ValueError(f"beam_size must be at least 1, got {beam_size}")
    if any(t < 0 for t in targets):
        raise ValueError("target lengths must be non-negative")


def repeat_table(lp: torch.Tensor, word_id: torch.Tensor, gather: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """Where the repeats read a slot's log-probability of a candidate word [N, T, K]: `rep_lp[i, s,
    columns[i, t, k]]`. On the CPU the log-probabilities themselves (a word's column is its id); from
    a GPU only the columns a state can end in, [N, T, T·K], its columns contiguous as on the CPU (so the
    kernels are compiled once for both)."""
    if not gather:
        return lp, word_id.clamp(min=0)
    n, time, scope = word_id.shape
    seen = word_id.clamp(min=0).to(lp.device).reshape(n, 1, time * scope).expand(n, time, time * scope)
    return lp.gather(2, seen), torch.arange(time * scope).reshape(1, time, scope).repeat(n, 1, 1)


# The per-slot tables the dynamic programs read (one sample's, or [N, ...] for a batch): ε's log-probability,
# each slot's candidate words (log-probability, id, characters), where the repeats read a word's
# log-probability (`rep_lp[s, columns[t, k]] − norm[s]`) and each slot's normaliser.
SlotTables = namedtuple("SlotTables", "blank_lp word_lp word_id word_len columns rep_lp norm")
# How a dynamic program keeps its states: `beam` per cell, repeats merged (Γ) or not (Γ′), ε's id.
Rule = namedtuple("Rule", "beam merge blank")


def slot_tables(lp: torch.Tensor, norm: torch.Tensor, blank: int, word_lp: torch.Tensor, word_id: torch.Tensor,
                word_len: torch.Tensor | None = None) -> SlotTables:
    """The kernels' tables from [N, T, V] scores and each slot's candidates, as NumPy arrays on the CPU."""
    rep_lp, columns = repeat_table(lp, word_id, gather=lp.device.type != "cpu")
    word_len = torch.zeros(word_id.shape[:2] + (0,), dtype=torch.int64) if word_len is None else word_len
    tables = (lp[:, :, blank].cpu() - norm, word_lp.cpu() - norm[..., None], word_id, word_len, columns, rep_lp, norm)
    return SlotTables(*(x.cpu().numpy() for x in tables))


@numba.njit(cache=True)
def sample_tables(tables, i):
    """Sample i's tables of a batch's."""
    return SlotTables(tables.blank_lp[i], tables.word_lp[i], tables.word_id[i], tables.word_len[i], tables.columns[i],
                      tables.rep_lp[i], tables.norm[i])


@numba.njit(cache=True, inline="always")
def cell_states(valid, cells, beam, blank):
    """The cells' tables of length control and char-control: each cell's `beam` states (score, last token, that
    token's column; only the empty prefix alive), a second set for the next slot, and per slot the back pointers
    `backtrace` reads (source cell, parent state, token, column)."""
    score = np.full((cells, beam), np.float32(-np.inf), dtype=np.float32)
    score[0, 0] = 0.0
    last = np.full((cells, beam), blank, dtype=np.int64)
    column = np.full((cells, beam), -1, dtype=np.int64)  # where `last` sits among rep_lp's columns
    sources = np.zeros((valid, cells, beam), dtype=np.int64)  # the cell each state came from
    parents = np.zeros((valid, cells, beam), dtype=np.int64)
    tokens = np.full((valid, cells, beam), blank, dtype=np.int64)
    picked = np.full((valid, cells, beam), -1, dtype=np.int64)  # the state's column (ε: -1), for the path's score
    return score, last, column, score.copy(), last.copy(), column.copy(), sources, parents, tokens, picked


@numba.njit(cache=True)
def backtrace(tables, cell, tokens, picked, sources, parents):
    """The path ending in state 0 of `cell` after the last slot, and its log-probability: per slot, the
    state's token, its column (ε: -1), the cell and state it came from [T, cells, beam]."""
    valid = tokens.shape[0]
    path = np.empty(valid, dtype=np.int64)
    total = 0.0
    b = 0
    for s in range(valid - 1, -1, -1):
        path[s] = tokens[s, cell, b]
        where = picked[s, cell, b]
        total += tables.blank_lp[s] if where < 0 else tables.rep_lp[s, where] - tables.norm[s]
        cell, b = sources[s, cell, b], parents[s, cell, b]
    return path, total
