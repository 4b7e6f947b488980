"""The search teacher: pick L source words (order kept) that maximise fluency × similarity^γ.

Stage 1 is the hill climbing of Schumann et al. (ACL 2020) on cheap scores: all restarts of a
sentence advance together as arrays, each step proposes one swap (a selected position out, an
unselected one in) per restart and keeps it when the score does not drop. Every state it scores
is remembered, so stage 2 can re-rank the best K distinct ones with contextual sentence
embeddings. K = 0 is the paper's one-stage search.

Stage 2 runs MiniLM once over the source; that pass also estimates every state's similarity
from the source words' in-context states (`SourceContext`), and only the `rerank_exact` states
that this estimate ranks best are encoded on their own for the exact choice (0: all K).
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
PAPER_BUDGET = (0.1, 0.035)  # hill-climbing steps and restarts coefficients of Schumann et al. and the paper


def fluency_score(kind: str, log_prob: np.ndarray, slor: np.ndarray, length: int) -> np.ndarray:
    """The fluency term in log space: SLOR, or ln(1/perplexity) = ln P / (L + 1) as in the paper."""
    return slor if kind == "slor" else log_prob / (length + 1)


@dataclass(frozen=True)
class SearchConfig:
    length: int | None = 10
    ratio: float | None = None
    min_length: int = 1
    # Defaults from results/benchmarks/teacher.json (dev split, L = 10 and 8): the paper's
    # hill-climbing budget, 200 states re-ranked, 20 of them encoded on their own.
    steps_coef: float = PAPER_BUDGET[0]
    restarts_coef: float = PAPER_BUDGET[1]
    fluency: str = "slor"
    gamma: float = 0.0
    rerank_k: int = 200
    rerank_exact: int = 20
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
        if self.rerank_k < 0 or self.rerank_exact < 0:
            raise NausError(f"rerank K and rerank exact must be zero or more, got {self.rerank_k}, {self.rerank_exact}")

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

    def text(self, k: int) -> str:
        return " ".join(self.words[p] for p in self.positions[k])

    def texts(self) -> list[str]:
        return [self.text(k) for k in range(len(self.positions))]


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
    """Both stages, one sentence at a time: a sentence's summary never depends on its batch."""

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
        results = []
        for index, source in items:
            cands = self.climber.search(index, source.split(), keep)
            if self.config.rerank_k == 0 or not cands.words:
                results.append(self._pick(index, cands, 0, None, None))
            else:
                results.append(self._rerank(index, cands))
        return results

    def _rerank(self, index: int, cands: Candidates) -> Summary:
        """fluency + γ_r·ln sim over the K states; sim exact for the `rerank_exact` best by the estimate."""
        gamma = self.config.rerank_gamma
        fluency = fluency_score(self.config.fluency, cands.log_probs, cands.slors, cands.positions.shape[1])
        context = self.contextual.source_context(cands.words)
        chosen = np.arange(len(cands.positions))
        if 0 < self.config.rerank_exact < len(chosen):
            masks = np.zeros((len(chosen), len(cands.words)), dtype=bool)
            np.put_along_axis(masks, cands.positions, True, axis=1)
            estimate = (context.similarity().cosine(masks) + 1.0) / 2.0
            chosen = _top_k(fluency + gamma * np.log(np.maximum(estimate, 1e-12)), self.config.rerank_exact)
        vectors = self.contextual.encode_group([cands.text(k) for k in chosen])
        sim = (vectors.astype(np.float64) @ context.vector + 1.0) / 2.0
        final = fluency[chosen] + gamma * np.log(np.maximum(sim, 1e-12))
        best = int(_top_k(final, 1)[0])
        return self._pick(index, cands, int(chosen[best]), final[best], sim[best])

    @staticmethod
    def _pick(index: int, cands: Candidates, best: int, score, sim) -> Summary:
        length = cands.positions.shape[1]
        if score is None:
            score = cands.scores[best]
            sim = None if cands.static_sims is None else cands.static_sims[best]
        return Summary(
            index=index,
            summary=cands.text(best) if cands.words else "",
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
