"""Does a neural headline language model help the teacher choose? An experiment on the dev split.

The paper's teacher scores fluency with a forward and a backward LSTM language model (3.8M headlines);
ours with a 3-gram KenLM (68k headlines). Here two small LSTM LMs (forward, backward) are trained on
the profile's LM text (`data/lm.txt`, the same headlines as the KenLM), then the default teacher's
final candidates (the `rerank_exact` states encoded on their own, with their KenLM ln P, SLOR and
exact similarity) are re-scored on each dev sentence: fluency = SLOR_KenLM + a·(SLOR_fwd + SLOR_bwd)/2
(the LSTMs' SLOR with the same unigram term), the similarity weight γ_r as the teacher's, and the pick
is scored with ROUGE against the dev titles for each (a, γ_r) of a grid. a = 0, γ_r = 48 is the default
teacher's own pick (checked against it).

Writes results/benchmarks/teacher_neural_lm.json.

    python -m benchmarks.archive.teacher_neural_lm --data build/gigaword-sample/data \
        --lm build/gigaword-sample/lm/lm.bin --onnx build/gigaword-sample/similarity/minilm-int8.onnx

Findings (the JSON's numbers, as read when it was written; Markdown):

## A neural headline language model in the re-ranking (`teacher_neural_lm.json`)

`python -m benchmarks.archive.teacher_neural_lm --data build/gigaword-sample/data --lm
build/gigaword-sample/lm/lm.bin
--onnx build/gigaword-sample/similarity/minilm-int8.onnx --epochs 2 --vocab 8000 --size 128` (this 2-core AMD
EPYC): two LSTM language models (forward and backward, 128 wide, tied embeddings, the 8,000 most frequent
words) trained on the profile's LM text (67,889 headlines, the KenLM's) for two epochs each (8 min in all on
2 threads; training perplexity 221 forward, 227 backward), then the teacher's 60 finalists (the default then: 60
encoded, γ_e = 48) of
each dev sentence re-scored with fluency = SLOR of the KenLM + a · the LSTMs' mean SLOR, for a grid of a and
γ_r. Dev total ROUGE (500 pairs; a = 0, γ_r = 48 is the default teacher's own pick, and equals it):

| a (LSTM weight) | γ_r = 24 | γ_r = 48 | γ_r = 96 |
|---|---|---|---|
| 0 (KenLM alone) | 85.54 / 84.09 | **85.60 / 83.91** | 85.34 / 84.37 |
| 0.25 | 84.89 / 83.49 | 85.82 / 83.49 | 85.11 / 84.20 |
| 0.5 | 84.63 / 82.10 | 85.71 / 83.03 | 85.57 / 83.94 |
| 1 | 82.80 / 79.47 | 84.69 / 82.41 | 85.43 / 83.33 |
| 2 | 80.58 / 76.69 | 83.80 / 80.05 | 84.53 / 82.51 |
| 4 | 78.32 / 74.58 | 80.67 / 76.39 | 84.15 / 80.47 |

(L = 10 / L = 8.) A negative result: a small LSTM pair trained on the same 68k headlines as the KenLM adds
nothing beyond dev noise (+0.22 at best at L = 10, −0.42 at L = 8 at the same setting) and hurts as its
weight grows. The paper's LSTMs saw 3.8M headlines; what the sample's LM text can teach, the 3-gram already
knows. Not tried: a larger LSTM trained longer, and re-scoring before the 60 are chosen.
"""

from __future__ import annotations

import argparse
import math
import time
from collections import Counter
from pathlib import Path

import numpy as np
import torch

from naus.evaluation.evaluate import rouge
from naus.files import read_lines
from naus.outputs import write_json
from naus.settings import SearchConfig

SPECIAL = ["<pad>", "<s>", "</s>", "<unk>"]


class LSTMLM(torch.nn.Module):
    def __init__(self, vocab: int, size: int):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, size)
        self.lstm = torch.nn.LSTM(size, size, batch_first=True)
        self.out = torch.nn.Linear(size, vocab)
        self.out.weight = self.embed.weight  # tied

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.out(self.lstm(self.embed(ids))[0]).log_softmax(-1)


def encode(lines: list[list[str]], index: dict[str, int]) -> list[list[int]]:
    return [[1] + [index.get(w, 3) for w in words] + [2] for words in lines]


def padded(rows: list[list[int]]) -> torch.Tensor:
    out = torch.zeros(len(rows), max(map(len, rows)), dtype=torch.long)
    for i, row in enumerate(rows):
        out[i, : len(row)] = torch.tensor(row)
    return out


def train_lm(lines: list[list[str]], index: dict[str, int], size: int, epochs: int, seed: int) -> LSTMLM:
    torch.manual_seed(seed)
    model = LSTMLM(len(index), size)
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
    rows = encode(lines, index)
    rng = np.random.default_rng(seed)
    for epoch in range(epochs):
        order = rng.permutation(len(rows))
        total, tokens, tick = 0.0, 0, time.perf_counter()
        for start in range(0, len(order), 128):
            batch = padded([rows[k] for k in order[start : start + 128]])
            log_probs = model(batch[:, :-1])
            target = batch[:, 1:]
            loss = torch.nn.functional.nll_loss(log_probs.reshape(-1, log_probs.shape[-1]), target.reshape(-1),
                                                ignore_index=0, reduction="sum")
            count = int((target != 0).sum())
            optimizer.zero_grad()
            (loss / count).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            total, tokens = total + float(loss.detach()), tokens + count
        print(f"epoch {epoch + 1}: train perplexity {math.exp(total / tokens):.1f} ({time.perf_counter() - tick:.0f} s)",
              flush=True)
    return model.eval()


@torch.no_grad()
def log_prob(model: LSTMLM, texts: list[list[str]], index: dict[str, int]) -> np.ndarray:
    """ln P(<s> words </s>) of each text."""
    out = []
    for start in range(0, len(texts), 512):
        batch = padded(encode(texts[start : start + 512], index))
        scores = model(batch[:, :-1]).gather(-1, batch[:, 1:, None])[..., 0]
        out.append((scores * (batch[:, 1:] != 0)).sum(-1).double().numpy())
    return np.concatenate(out)


def default_teacher(lm_path: str, onnx: str, length: int, **changes):
    """The default teacher at `length` (with `changes` to its settings) on one thread, and its MiniLM embedder."""
    from naus.teacher.lm import LanguageModel
    from naus.teacher.search import Teacher
    from naus.teacher.similarity import ContextualEmbedder

    torch.set_num_threads(1)
    embedder = ContextualEmbedder("cpu", onnx=onnx)
    return Teacher(LanguageModel(lm_path), SearchConfig(length=length, **changes), None, embedder), embedder


def finalists(teacher, embedder, index: int, source: str):
    """The default teacher's finalists of one sentence, as its re-ranking chooses them: stage 1's states, the
    source's MiniLM context, the `rerank_exact` states the in-context estimate ranks best (None: no words)."""
    from naus.teacher.search import objective

    config = teacher.config
    cands = teacher.climber.search(index, source.split(), config.rerank_k)
    if not cands.words:
        return None
    context = embedder.source_context(cands.words)
    estimate = objective(cands.log_probs, cands.slors, cands.positions.shape[1], True, config.estimate_gamma,
                         cands.estimated_similarities(context))
    return cands, context, np.argsort(-estimate, kind="stable")[: config.rerank_exact]


def each_sentence(lm_path: str, onnx: str, articles: list[str], length: int):
    """Per dev sentence: the default teacher's summary, and its finalists (texts, KenLM ln P, SLOR, pooled
    similarity, the source's words; a lone empty text for a source without words), and the embedder."""
    from naus.teacher.search import similarity_term

    teacher, embedder = default_teacher(lm_path, onnx, length)
    for index, source in enumerate(articles):
        default = teacher.summarize([(index, source)])[0].summary
        chosen = finalists(teacher, embedder, index, source)
        if chosen is None:
            yield {"texts": [""], "log_prob": np.zeros(1), "slor": np.zeros(1), "sim": np.ones(1), "words": [],
                   "default": default}, embedder
            continue
        cands, context, chosen = chosen
        texts = [cands.text(k) for k in chosen]
        sims = similarity_term(embedder.encode_group(texts).astype(np.float64) @ context.vector)
        yield {"texts": texts, "log_prob": cands.log_probs[chosen], "slor": cands.slors[chosen], "sim": sims,
               "words": cands.words, "default": default}, embedder


def dev_options(description: str, out: str) -> argparse.ArgumentParser:
    """The options of an experiment on the default teacher's dev finalists."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--data", required=True, help="the profile's data directory (dev/, lm.txt)")
    parser.add_argument("--lm", required=True, help="the profile's KenLM model")
    parser.add_argument("--onnx", required=True, help="the int8 MiniLM the pipeline exports")
    parser.add_argument("--lengths", type=int, nargs="+", default=[10, 8])
    parser.add_argument("--sentences", type=int, default=500)
    parser.add_argument("--out", default=out)
    return parser


def main() -> None:
    parser = dev_options(__doc__.splitlines()[0], "results/benchmarks/teacher_neural_lm.json")
    parser.add_argument("--size", type=int, default=256, help="embedding and LSTM width")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--vocab", type=int, default=20000, help="the most frequent words of the LM text")
    args = parser.parse_args()

    data = Path(args.data)
    torch.set_num_threads(2)
    headlines = [line.split() for line in read_lines(data / "lm.txt")]
    counts = Counter(w for words in headlines for w in words)
    index = {w: i for i, w in enumerate(SPECIAL + [w for w, _ in counts.most_common(args.vocab)])}
    report = {"data": f"{data}: LM text {len(headlines)} headlines, dev split's first {args.sentences} pairs",
              "lstm": {"size": args.size, "epochs": args.epochs, "vocab": len(index)}}
    tick = time.perf_counter()
    models = {"forward": train_lm(headlines, index, args.size, args.epochs, 0),
              "backward": train_lm([w[::-1] for w in headlines], index, args.size, args.epochs, 1)}
    report["lstm"]["training_seconds"] = round(time.perf_counter() - tick, 1)
    articles = read_lines(data / "dev" / "article.txt")[: args.sentences]
    titles = read_lines(data / "dev" / "title.txt")[: args.sentences]
    from naus.teacher.lm import LanguageModel

    kenlm = LanguageModel(args.lm)
    report["lengths"] = {}
    for length in args.lengths:
        found = [sentence for sentence, _ in each_sentence(args.lm, args.onnx, articles, length)]
        for sentence in found:
            words = [t.split() for t in sentence["texts"]]
            unigrams = np.array([sum(kenlm.unigram(w) for w in ws) for ws in words])
            lstm = (log_prob(models["forward"], words, index) + log_prob(models["backward"], [w[::-1] for w in words],
                                                                          index)) / 2
            sentence["lstm_slor"] = (lstm - unigrams) / max(length, 1)
        rows = []
        for weight in (0.0, 0.25, 0.5, 1.0, 2.0, 4.0):
            for gamma in (24.0, 48.0, 96.0):
                picks = []
                for s in found:
                    score = s["slor"] + weight * s["lstm_slor"] + gamma * np.log(np.maximum(s["sim"], 1e-12))
                    picks.append(s["texts"][int(np.argmax(score))])
                scores = rouge(picks, [titles])
                rows.append({"lstm_weight": weight, "rerank_gamma": gamma,
                             "dev_total": round(scores["rouge1"] + scores["rouge2"] + scores["rougeL"], 2),
                             "dev_rouge": {k: scores[k] for k in ("rouge1", "rouge2", "rougeL")}})
                print(length, rows[-1], flush=True)
        default = rouge([s["default"] for s in found], [titles])
        report["lengths"][str(length)] = {"default_teacher_total": round(default["rouge1"] + default["rouge2"]
                                                                          + default["rougeL"], 2), "grid": rows}
        write_json(args.out, report)


if __name__ == "__main__":
    main()
