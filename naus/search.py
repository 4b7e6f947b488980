"""The search teacher: pick L source words (order kept) that maximise fluency × similarity^γ.

Stage 1 is the hill climbing of Schumann et al. (ACL 2020) on cheap scores: all restarts of a
sentence advance together as arrays, each step proposes one swap (a selected position out, an
unselected one in) per restart and keeps it when the score does not drop. Every state it scores
is remembered, so stage 2 can re-rank the best K distinct ones with contextual sentence
embeddings. K = 0 is the paper's one-stage search.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from naus import NausError
from naus.lm import LanguageModel
from naus.similarity import ContextualEmbedder, StaticEmbedder, SubsetSimilarity

FLUENCIES = ("slor", "perplexity")


def fluency_score(kind: str, log_prob: np.ndarray, slor: np.ndarray, length: int) -> np.ndarray:
    """The fluency term in log space: SLOR, or ln(1/perplexity) = ln P / (L + 1) as in the paper."""
    return slor if kind == "slor" else log_prob / (length + 1)


@dataclass(frozen=True)
class SearchConfig:
    length: int | None = 10
    ratio: float | None = None
    min_length: int = 1
    steps_coef: float = 0.1
    restarts_coef: float = 0.035
    fluency: str = "slor"
    gamma: float = 0.0
    rerank_k: int = 50
    rerank_gamma: float = 48.0
    seed: int = 0

    def __post_init__(self) -> None:
        if (self.length is None) == (self.ratio is None):
            raise NausError("give exactly one of a target length and a ratio")
        if self.length is not None and self.length <= 0:
            raise NausError(f"target length must be positive, got {self.length}")
        if self.ratio is not None and not 0 < self.ratio <= 1:
            raise NausError(f"ratio must be in (0, 1], got {self.ratio}")
        if self.fluency not in FLUENCIES:
            raise NausError(f"fluency must be one of {FLUENCIES}, got {self.fluency!r}")
        if self.steps_coef <= 0 or self.restarts_coef <= 0:
            raise NausError("steps and restarts coefficients must be positive")
        if self.rerank_k < 0:
            raise NausError(f"rerank K must be zero or more, got {self.rerank_k}")

    def target_length(self, source_length: int) -> int:
        if self.length is not None:
            return self.length
        return max(self.min_length, math.floor(self.ratio * source_length))

    def budget(self, source_length: int, length: int) -> tuple[int, int]:
        """(steps, restarts) = (⌊a·S·L²⌋, ⌊b·S·L²⌋), each at least 1."""
        work = source_length * length * length
        return max(1, math.floor(self.steps_coef * work)), max(1, math.floor(self.restarts_coef * work))


@dataclass
class Candidates:
    """The best distinct states of one sentence's stage 1, best first."""

    words: list[str]
    positions: np.ndarray  # [K, L] sorted source positions
    scores: np.ndarray  # stage-1 objective
    log_probs: np.ndarray  # ln P(<s> y </s>)
    slors: np.ndarray
    static_sims: np.ndarray | None  # (cos+1)/2 with the static embedder, when used
    scorings: int

    def texts(self) -> list[str]:
        return [" ".join(self.words[p] for p in row) for row in self.positions]


class HillClimber:
    """Stage 1 for one sentence at a time; deterministic given (seed, sentence index)."""

    def __init__(
        self, lm: LanguageModel, config: SearchConfig, static: StaticEmbedder | None = None, trace: bool = False
    ):
        if config.gamma > 0 and static is None:
            raise NausError("a static similarity weight γ > 0 needs a static embedding table")
        self.lm, self.config, self.static = lm, config, static
        self.trace: list[np.ndarray] | None = [] if trace else None  # per-step scores of every restart

    def _scorer(self, words: list[str], length: int):
        table = self.lm.table(words)
        similarity = SubsetSimilarity(self.static.word_vectors(words)) if self.config.gamma > 0 else None
        fluency, gamma = self.config.fluency, self.config.gamma

        def score(positions: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, ...]:
            log_prob = table.log_prob(positions)
            slor = (log_prob - table.unigram[positions].sum(axis=1)) / length
            objective = fluency_score(fluency, log_prob, slor, length)
            sim = None
            if similarity is not None:
                sim = (similarity.cosine(masks) + 1.0) / 2.0
                objective = objective + gamma * np.log(np.maximum(sim, 1e-12))
            return objective, log_prob, slor, sim

        return score

    def search(self, index: int, words: list[str], keep: int = 1) -> Candidates:
        source_length = len(words)
        length = self.config.target_length(source_length)
        if source_length <= length:  # nothing to choose: the source is its own summary
            positions = np.arange(source_length)[None, :]
            if not words:
                zero = np.zeros(1)
                return Candidates(words, positions, zero, zero, zero, None, 0)
            masks = np.ones((1, source_length), dtype=bool)
            objective, log_prob, slor, sim = self._scorer(words, source_length)(positions, masks)
            return Candidates(words, positions, objective, log_prob, slor, sim, 0)
        score = self._scorer(words, length)
        steps, restarts = self.config.budget(source_length, length)
        if math.comb(source_length, length) <= steps * restarts:
            return self._exhaustive(words, length, score, keep)
        return self._climb(index, words, length, score, steps, restarts, keep)

    def _exhaustive(self, words, length, score, keep) -> Candidates:
        source_length = len(words)
        positions = np.array(list(itertools.combinations(range(source_length), length)), dtype=np.int64)
        masks = np.zeros((len(positions), source_length), dtype=bool)
        np.put_along_axis(masks, positions, True, axis=1)
        objective, log_prob, slor, sim = score(positions, masks)
        top = _top_k(objective, keep)
        return Candidates(
            words, positions[top], objective[top], log_prob[top], slor[top],
            None if sim is None else sim[top], len(positions),
        )

    def _climb(self, index, words, length, score, steps, restarts, keep) -> Candidates:
        source_length = len(words)
        rng = np.random.default_rng([self.config.seed, index])
        rows = np.arange(restarts)
        masks = np.zeros((restarts, source_length), dtype=bool)
        np.put_along_axis(masks, rng.random((restarts, source_length)).argsort(axis=1)[:, :length], True, axis=1)
        order = np.argsort(~masks, axis=1, kind="stable")
        current, *extra = score(order[:, :length], masks)
        seen_masks, seen = [masks.copy()], [(current, *extra)]
        for _ in range(steps):
            out = order[rows, rng.integers(0, length, restarts)]
            into = order[rows, length + rng.integers(0, source_length - length, restarts)]
            proposal = masks.copy()
            proposal[rows, out] = False
            proposal[rows, into] = True
            proposal_order = np.argsort(~proposal, axis=1, kind="stable")
            objective, *proposal_extra = score(proposal_order[:, :length], proposal)
            seen_masks.append(proposal)
            seen.append((objective, *proposal_extra))
            accept = objective >= current
            masks[accept] = proposal[accept]
            order[accept] = proposal_order[accept]
            current = np.where(accept, objective, current)
            if self.trace is not None:
                self.trace.append(current.copy())
        all_masks = np.concatenate(seen_masks)
        columns = [None if col[0] is None else np.concatenate(col) for col in zip(*seen)]
        objective = columns[0]
        keys = np.packbits(all_masks, axis=1)
        keys = np.ascontiguousarray(keys).view(np.dtype((np.void, keys.shape[1]))).ravel()
        _, first = np.unique(keys, return_index=True)
        top = first[_top_k(objective[first], keep)]
        positions = np.argsort(~all_masks[top], axis=1, kind="stable")[:, :length]
        return Candidates(
            words, positions, objective[top], columns[1][top], columns[2][top],
            None if columns[3] is None else columns[3][top], len(all_masks),
        )


def _top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k best scores, best first; ties broken by lower index (stable)."""
    k = min(max(k, 1), len(scores))
    return np.argsort(-scores, kind="stable")[:k]


@dataclass
class Summary:
    index: int
    summary: str
    score: float
    f_lm: float  # 1 / perplexity of the summary
    slor: float
    f_sim: float | None  # (cos + 1) / 2 of the embedder that chose it
    scorings: int

    def record(self) -> dict:
        out = {k: getattr(self, k) for k in ("index", "summary", "score", "f_lm", "slor", "f_sim", "scorings")}
        for key in ("score", "f_lm", "slor", "f_sim"):
            if out[key] is not None:
                out[key] = round(float(out[key]), 6)
        return out


class Teacher:
    """Both stages over batches of sentences; the contextual encodes of a batch go in one call."""

    def __init__(
        self,
        lm: LanguageModel,
        config: SearchConfig,
        static: StaticEmbedder | None = None,
        contextual: ContextualEmbedder | None = None,
    ):
        if config.rerank_k > 0 and contextual is None:
            raise NausError("re-ranking (K > 0) needs the contextual embedder")
        self.config, self.contextual = config, contextual
        self.climber = HillClimber(lm, config, static)

    def summarize(self, items: list[tuple[int, str]]) -> list[Summary]:
        """Summaries for (sentence index, source sentence) pairs."""
        keep = max(self.config.rerank_k, 1)
        found = [self.climber.search(index, source.split(), keep) for index, source in items]
        if self.config.rerank_k == 0 or self.contextual is None:
            return [self._pick(index, cands, 0, None, None) for (index, _), cands in zip(items, found)]
        texts = [source for _, source in items]
        for cands in found:
            texts.extend(cands.texts())
        vectors = self.contextual.encode(texts)
        sources, offset, results = vectors[: len(items)], len(items), []
        for k, ((index, _), cands) in enumerate(zip(items, found)):
            count = len(cands.positions)
            sim = (vectors[offset : offset + count] @ sources[k] + 1.0) / 2.0
            offset += count
            fluency = fluency_score(self.config.fluency, cands.log_probs, cands.slors, cands.positions.shape[1])
            final = fluency + self.config.rerank_gamma * np.log(np.maximum(sim, 1e-12))
            best = int(_top_k(final, 1)[0])
            results.append(self._pick(index, cands, best, final[best], sim[best]))
        return results

    @staticmethod
    def _pick(index: int, cands: Candidates, best: int, score, sim) -> Summary:
        length = cands.positions.shape[1]
        if score is None:
            score = cands.scores[best]
            sim = None if cands.static_sims is None else cands.static_sims[best]
        return Summary(
            index=index,
            summary=cands.texts()[best] if cands.words else "",
            score=float(score),
            f_lm=math.exp(cands.log_probs[best] / (length + 1)),
            slor=float(cands.slors[best]),
            f_sim=None if sim is None else float(sim),
            scorings=cands.scorings,
        )


def shard_range(total: int, shard: int, shards: int) -> range:
    """The contiguous block of sentence indices that shard `shard` (0-based) of `shards` owns."""
    if not 0 <= shard < shards:
        raise NausError(f"shard must be i/n with 0 <= i < n, got {shard}/{shards}")
    return range(total * shard // shards, total * (shard + 1) // shards)
