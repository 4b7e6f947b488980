"""A tiny headline corpus and the KenLM models trained on it, shared by the tests."""

import random

HEADLINES = [
    "police arrest five protesters",
    "government closes schools as war escalates",
    "stocks close lower in tokyo",
    "president meets prime minister in paris",
    "police arrest protesters at nuclear plant",
    "japan and us agree on trade deal",
    "stocks rise on strong earnings",
    "prime minister says talks will go on",
]


def headline_corpus(lines: int = 400, seed: int = 0) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(HEADLINES) + "\n" for _ in range(lines))
