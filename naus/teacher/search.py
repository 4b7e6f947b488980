"""The search teacher: pick L source words (order kept) that maximise fluency × similarity^γ.

Stage 1 is the hill climbing of Schumann et al. (ACL 2020) on cheap scores: each step proposes
one swap (a selected position out, an unselected one in) per restart and keeps it when the score
does not drop. The walk is compiled with numba (a step is ~10 tiny array operations otherwise,
3x slower) and equals the array version in `tests/reference.py` (tested). Every state it scores is
remembered, so stage 2 can re-rank the best K distinct ones with contextual sentence
embeddings. K = 0 is the paper's one-stage search.

Stage 2 runs MiniLM once over the source; that pass also estimates every state's similarity
from the source words' in-context states (`SourceContext`), and only the `rerank_exact` states
that this estimate ranks best (with its own weight, `estimate_gamma`) are encoded on their own for
the exact choice (0: all K). A `LearnedEstimate` (fitted by `fit_estimate`) corrects the estimate first,
so that far fewer states need encoding.
"""

from __future__ import annotations

import itertools
import logging
import math
from dataclasses import dataclass

import numba
import numpy as np

from naus import NausError
from naus.teacher.lm import LanguageModel
from naus.plumbing.progress import Progress
from naus.settings import FIT_STATES, SearchConfig, check_learned_estimate
from naus.teacher.shards import ResumableOutput
from naus.plumbing.signals import stoppable, stopped
from naus.teacher.similarity import ContextualEmbedder, LearnedEstimate, SourceContext, StaticEmbedder, SubsetSimilarity
from naus.text import clean

log = logging.getLogger(__name__)


@numba.vectorize(["float64(float64, float64, int64, boolean, float64, float64)"], cache=True)
def objective(log_prob, slor, length, slor_fluency, gamma, similarity):
    """The teacher's objective, fluency × similarity^γ in log space, for every stage of the search (the
    compiled climb element by element, the arrays of candidates at once): fluency is SLOR, or the paper's
    ln(1/perplexity) = ln P / (L + 1); similarity is (cos + 1) / 2 of summary and source (unused at γ = 0)."""
    fluency = slor if slor_fluency else log_prob / (length + 1)
    return fluency + gamma * math.log(max(similarity, 1e-12)) if gamma > 0 else fluency


@numba.vectorize(["float64(float64)"], cache=True)
def similarity_term(cosine):
    """The similarity term from the cosine of summary and source embeddings: in [0, 1]."""
    return (cosine + 1.0) / 2.0


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

    def estimated_similarities(self, context: SourceContext) -> np.ndarray:
        """Each state's similarity with the source estimated from the source's in-context word states
        (no forward pass of its own): what chooses the states encoded on their own."""
        masks = np.zeros((len(self.positions), len(self.words)), dtype=bool)
        np.put_along_axis(masks, self.positions, True, axis=1)
        return similarity_term(context.similarity().cosine(masks))


class HillClimber:
    """Stage 1 for one sentence at a time; deterministic given (seed, sentence index)."""

    def __init__(self, lm: LanguageModel, config: SearchConfig, static: StaticEmbedder | None = None):
        if config.gamma > 0 and static is None:
            raise NausError("a static similarity weight γ > 0 needs a static embedding table")
        self.lm, self.config, self.static = lm, config, static

    def _scorer(self, words: list[str], length: int):
        table = self.lm.table(words)
        subsets = SubsetSimilarity(self.static.word_vectors(words)) if self.config.gamma > 0 else None
        slor_fluency, gamma = self.config.fluency == "slor", self.config.gamma

        def score(positions: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, ...]:
            log_prob = table.log_prob(positions)
            slor = (log_prob - table.unigram[positions].sum(axis=1)) / length
            sim = similarity_term(subsets.cosine(masks)) if subsets is not None else None
            scores = objective(log_prob, slor, length, slor_fluency, gamma, 1.0 if sim is None else sim)
            return scores, log_prob, slor, sim

        return score

    def searchable(self, index: int, words: list[str]) -> list[str]:
        """The source words the search reads: at most `max_source_words`, and no more than fit a
        dense n-gram table ((S + 2)^order float64 values) within `max_memory_mb`."""
        fits = int((self.config.max_memory_mb * 2**20 / 8) ** (1 / self.lm.order) + 1e-9) - 2
        limit = min(self.config.max_source_words, fits)
        if len(words) > limit:
            log.warning("sentence %d: %d words, searched on its first %d (search.max_source_words %d; a %d-gram "
                        "table within search.max_memory_mb %d)", index + 1, len(words), limit,
                        self.config.max_source_words, self.lm.order, self.config.max_memory_mb)
        return words[:limit]

    def search(self, index: int, words: list[str], keep: int = 1) -> Candidates:
        words = self.searchable(index, words)
        source_length = len(words)
        length = self.config.target_length(source_length)
        if source_length <= length:  # nothing to choose: the source is its own summary
            positions = np.arange(source_length)[None, :]
            if not words:
                zero = np.zeros(1)
                return Candidates(words, positions, zero, zero, zero, None, 0)
            masks = np.ones((1, source_length), dtype=bool)
            scores, log_prob, slor, sim = self._scorer(words, source_length)(positions, masks)
            return Candidates(words, positions, scores, log_prob, slor, sim, 0)
        steps, restarts = self.config.budget(source_length, length)
        state_bytes = 8 * (length + (source_length + 63) // 64 + 4)  # positions, bit key, four scores
        if (steps + 1) * restarts * state_bytes > self.config.max_memory_mb * 2**20:
            raise NausError(f"sentence {index + 1}: the hill-climbing budget for {source_length} words at L = {length} "
                            f"({steps} steps x {restarts} restarts) keeps more states than search.max_memory_mb "
                            f"{self.config.max_memory_mb} allows; lower the length, the budget coefficients or "
                            "search.max_source_words")
        if math.comb(source_length, length) <= steps * restarts:
            return self._exhaustive(words, length, self._scorer(words, length), keep)
        return self._climb(index, words, length, steps, restarts, keep)

    def _exhaustive(self, words, length, score, keep) -> Candidates:
        source_length = len(words)
        positions = np.array(list(itertools.combinations(range(source_length), length)), dtype=np.int64)
        masks = np.zeros((len(positions), source_length), dtype=bool)
        np.put_along_axis(masks, positions, True, axis=1)
        scores, log_prob, slor, sim = score(positions, masks)
        top = _top_k(scores, keep)
        return Candidates(
            words, positions[top], scores[top], log_prob[top], slor[top],
            None if sim is None else sim[top], len(positions),
        )

    def _climb(self, index, words, length, steps, restarts, keep) -> Candidates:
        source_length = len(words)
        rng = np.random.default_rng([self.config.seed, index])
        masks = np.zeros((restarts, source_length), dtype=bool)
        np.put_along_axis(masks, rng.random((restarts, source_length)).argsort(axis=1)[:, :length], True, axis=1)
        order = np.argsort(~masks, axis=1, kind="stable")  # selected positions first, each part ascending
        table = self.lm.table(words)
        if self.config.gamma > 0:
            sim = SubsetSimilarity(self.static.word_vectors(words))
            sim_parts = (sim.vx, sim.cx, sim.vc, sim.cc, sim.gram)
        else:
            sim_parts = (np.zeros(source_length), 0.0, np.zeros(source_length), 0.0, np.zeros((source_length,) * 2))
        with stoppable() as stop:
            positions, keys, (scores, log_prob, slor, sim) = _climb_kernel(
                rng, steps, length, (table.flat, table.strides, table.eos), table.unigram,
                self.config.fluency == "slor", self.config.gamma, sim_parts, order, stop,
            )
        top = _best_distinct(keys, scores, max(keep, 1))
        return Candidates(
            words, positions[top], scores[top], log_prob[top], slor[top],
            sim[top] if self.config.gamma > 0 else None, len(positions),
        )


@numba.njit(cache=True)
def _sum(values: np.ndarray) -> float:
    """NumPy's pairwise summation of a short row, so compiled and array scores agree to the bit."""
    n = values.shape[0]
    if n < 8:
        total = 0.0
        for i in range(n):
            total += values[i]
        return total
    p0, p1, p2, p3 = values[0], values[1], values[2], values[3]
    p4, p5, p6, p7 = values[4], values[5], values[6], values[7]
    i = 8
    while i < n - n % 8:
        p0 += values[i]
        p1 += values[i + 1]
        p2 += values[i + 2]
        p3 += values[i + 3]
        p4 += values[i + 4]
        p5 += values[i + 5]
        p6 += values[i + 6]
        p7 += values[i + 7]
        i += 8
    total = ((p0 + p1) + (p2 + p3)) + ((p4 + p5) + (p6 + p7))
    while i < n:
        total += values[i]
        i += 1
    return total


@numba.njit(cache=True)
def _score(positions, table, unigram, slor_fluency, gamma, parts, window, picked):
    """(objective, ln P, SLOR, static sim) of one state, as `HillClimber._scorer` computes them."""
    flat, strides, eos = table
    vx, cx, vc, cc, gram = parts
    n, length = strides.shape[0], positions.shape[0]
    for w in range(length + 1):  # windows over <s>…<s> y </s>: index 0 is <s>, S + 1 is </s>
        index = 0
        for k in range(n):
            at = w + k - (n - 1)
            token = 0 if at < 0 else (positions[at] + 1 if at < length else eos)
            index += token * strides[k]
        window[w] = flat[index]
    log_prob = _sum(window)
    for i in range(length):
        picked[i] = unigram[positions[i]]
    slor = (log_prob - _sum(picked)) / length
    sim = 0.0
    if gamma > 0:
        dots, squares = cx, cc
        for i in range(length):
            dots += vx[positions[i]]
            squares += 2.0 * vc[positions[i]]
            for j in range(length):
                squares += gram[positions[i], positions[j]]
        sim = similarity_term(dots / math.sqrt(max(squares, 1e-12)))
    return objective(log_prob, slor, length, slor_fluency, gamma, sim), log_prob, slor, sim


@numba.njit(cache=True)
def _climb_kernel(rng, steps, length, table, unigram, slor_fluency, gamma, parts, order, stop):
    """Every restart's walk, one swap per step: each scored state (positions, bit key, scores).

    Rows come step by step, restart by restart (the first `restarts` rows are the starting
    states); a proposal is kept when its objective does not drop. `order` holds each restart's
    selected positions, then the others, each part ascending. Random draws follow NumPy's
    stream step by step (numba's Generator reproduces it), so results equal the array version
    (`tests/reference.py`).
    """
    restarts, source_length = order.shape
    rows = (steps + 1) * restarts
    positions = np.empty((rows, length), dtype=np.int64)
    keys = np.zeros((rows, (source_length + 63) // 64), dtype=np.uint64)  # big-endian bit per position
    scores = np.empty((4, rows))  # objective, ln P, SLOR, sim
    window, picked = np.empty(length + 1), np.empty(length)
    current = np.empty(restarts)
    proposal = np.empty(source_length, dtype=np.int64)
    for row in range(rows):
        step, r = divmod(row, restarts)
        if r == 0 and stopped(stop):  # the caller raises: the rows left are never read
            break
        if step == 0:
            proposal[:] = order[r]
        else:
            if r == 0:
                outs = rng.integers(0, length, restarts)
                intos = rng.integers(0, source_length - length, restarts)
            out, into = order[r, outs[r]], order[r, length + intos[r]]
            _swap(order[r, :length], out, into, proposal[:length])
            _swap(order[r, length:], into, out, proposal[length:])
        positions[row] = proposal[:length]
        for p in proposal[:length]:
            keys[row, p // 64] |= np.uint64(1) << np.uint64(63 - p % 64)
        scores[:, row] = _score(proposal[:length], table, unigram, slor_fluency, gamma, parts, window, picked)
        if step == 0 or scores[0, row] >= current[r]:
            current[r] = scores[0, row]
            order[r] = proposal
    return positions, keys, scores


@numba.njit(cache=True)
def _swap(ascending, out, into, result):
    """`ascending` with `out` removed and `into` inserted, still ascending, written to `result`."""
    j = 0
    placed = False
    for value in ascending:
        if value == out:
            continue
        if not placed and into < value:
            result[j] = into
            j += 1
            placed = True
        result[j] = value
        j += 1
    if not placed:
        result[j] = into


def _best_distinct(keys: np.ndarray, scores: np.ndarray, keep: int) -> np.ndarray:
    """Rows of the `keep` best distinct states, best first, ties by the state's bit key; a state met again has the
    same scores, so its copies sit side by side and the first is kept. Only the rows scoring at least the m-th best
    are ranked (m = 4·keep, growing until they hold `keep` distinct states): every copy of those states is among
    them, and the climb's ~30,000 rows need not all be sorted."""
    rows, wanted = len(scores), 4 * keep
    while True:
        rows_ranked = np.arange(rows) if wanted >= rows else np.flatnonzero(
            scores >= -np.partition(-scores, wanted - 1)[wanted - 1])
        ranked = rows_ranked[np.lexsort([keys[rows_ranked, w] for w in reversed(range(keys.shape[1]))]
                                        + [-scores[rows_ranked]])]
        distinct = np.ones(len(ranked), dtype=bool)
        distinct[1:] = (keys[ranked[1:]] != keys[ranked[:-1]]).any(axis=1)
        if distinct.sum() >= keep or len(ranked) == rows:
            return ranked[distinct][:keep]
        wanted *= 4


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

    def __init__(self, lm: LanguageModel, config: SearchConfig, static: StaticEmbedder | None = None,
                 contextual: ContextualEmbedder | None = None, estimate: LearnedEstimate | None = None):
        if config.rerank_k > 0 and contextual is None:
            raise NausError("re-ranking (K > 0) needs the contextual embedder")
        if estimate is not None:
            check_learned_estimate(config.rerank_k)
        self.config, self.contextual, self.estimate = config, contextual, estimate
        self.climber = HillClimber(lm, config, static)

    def summarize(self, items: list[tuple[int, str]]) -> list[Summary]:
        """Summaries for (sentence index, source sentence) pairs (raw text as naus reads it: `naus.text.clean`)."""
        keep = max(self.config.rerank_k, 1)
        results = []
        for index, source in items:
            cands = self.climber.search(index, clean(source).split(), keep)
            if self.config.rerank_k == 0 or not cands.words:
                results.append(self._pick(index, cands, 0, None, None))
            else:
                results.append(self._rerank(index, cands))
        return results

    def _rerank(self, index: int, cands: Candidates) -> Summary:
        """fluency + γ_r·ln sim over the K states; sim exact for the `rerank_exact` best by the estimate
        (fluency + γ_e·ln estimated sim)."""
        def score(chosen: np.ndarray, sim: np.ndarray, gamma: float = self.config.rerank_gamma) -> np.ndarray:
            return objective(cands.log_probs[chosen], cands.slors[chosen], cands.positions.shape[1],
                             self.config.fluency == "slor", gamma, sim)

        context = self.contextual.source_context(cands.words)
        chosen = np.arange(len(cands.positions))
        if 0 < self.config.rerank_exact < len(chosen):
            estimated = cands.estimated_similarities(self.estimate.apply(context) if self.estimate else context)
            chosen = _top_k(score(chosen, estimated, self.config.estimate_gamma), self.config.rerank_exact)
        vectors = self.contextual.encode_group([cands.text(k) for k in chosen])
        sim = similarity_term(vectors.astype(np.float64) @ context.vector)
        final = score(chosen, sim)
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


def collect_states(teacher: Teacher, sources: list[str], states: int = FIT_STATES, seed: int = 0
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What a `LearnedEstimate` learns from, for `teacher`'s length: per sentence, the `states` / 2 states its
    in-context estimate ranks best (those it must order well) and as many others drawn at random from its K
    (those it must not promote), each encoded on its own. Returns their in-context sums (special + m·words),
    their own unit vectors and their sources' unit vectors, a row per state."""
    config, embedder = teacher.config, teacher.contextual
    check_learned_estimate(config.rerank_k)
    rng = np.random.default_rng(seed)
    sums, vectors, sources_out = [], [], []
    progress = Progress("fit-estimate", len(sources), "sentences", log)
    for index, source in enumerate(sources):
        progress.update(1)
        cands = teacher.climber.search(index, source.split(), config.rerank_k)
        if len(cands.positions) < 2:
            continue
        context = embedder.source_context(cands.words)
        estimate = objective(cands.log_probs, cands.slors, cands.positions.shape[1], config.fluency == "slor",
                             config.estimate_gamma, cands.estimated_similarities(context))
        order = np.argsort(-estimate, kind="stable")
        best, rest = order[: states // 2], order[states // 2 :]
        chosen = np.concatenate([best, rng.choice(rest, size=min(len(rest), states - len(best)), replace=False)])
        masks = np.zeros((len(chosen), len(cands.words)))
        np.put_along_axis(masks, cands.positions[chosen], 1.0, axis=1)
        sums.append(context.special + masks @ context.words)
        vectors.append(embedder.encode_group([cands.text(k) for k in chosen]).astype(np.float64))
        sources_out.append(np.broadcast_to(context.vector, (len(chosen), len(context.vector))))
    if not sums:
        raise NausError("fitting an estimate: no sentence has two or more states to learn from")
    return np.concatenate(sums), np.concatenate(vectors), np.concatenate(sources_out)


def fit_estimate(teacher: Teacher, sources: list[str], states: int = FIT_STATES, seed: int = 0
                 ) -> tuple[LearnedEstimate, int]:
    """A `LearnedEstimate` for `teacher`'s length from these sentences' states (`collect_states`); returns it
    and the number of states fitted."""
    sums, vectors, _ = collect_states(teacher, sources, states, seed)
    return LearnedEstimate.fit(sums, vectors), len(sums)


def label_shard(teacher: Teacher, sources: list[str], output: ResumableOutput, batch: int,
                what: str) -> tuple[int, float]:
    """Search the sentences `output`'s shard still lacks, appending each batch as it finishes (an
    interrupted run keeps them); returns how many were searched by this run and in how many seconds."""
    todo = output.remaining
    if output.done:
        log.info("resuming %s after %d finished sentences", output.partial, output.done)
    progress = Progress(what, len(todo), "sentences", log)
    empty = 0
    for start in range(0, len(todo), batch):
        items = [(i, sources[i]) for i in todo[start : start + batch]]
        empty += sum(1 for _, source in items if not source)
        output.append(summary.record() for summary in teacher.summarize(items))
        progress.update(len(items))
    output.finish()
    log.info("%d sentences in %.1f s (%d empty sources -> empty summaries)", len(todo), progress.elapsed, empty)
    return len(todo), progress.elapsed

