"""Word-level vocabulary, built from the training inputs only (never from references).

Id 0 is the CTC blank ε, so decoders can take `blank=0` as their default.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Iterable

from naus import NausError
from naus.plumbing.files import read_lines
from naus.plumbing.outputs import write_lines

BLANK, PAD, UNK = "<blank>", "<pad>", "<unk>"
SPECIALS = (BLANK, PAD, UNK)


class Vocab:
    def __init__(self, tokens: list[str]):
        if tuple(tokens[: len(SPECIALS)]) != SPECIALS:
            raise NausError(f"a vocabulary must start with {SPECIALS}")
        bad = next((t for t in tokens if not isinstance(t, str) or not t or len(t.split()) != 1 or t != t.strip()),
                   None)
        if bad is not None:
            raise NausError(f"a vocabulary entry must be one word without spaces, got {bad!r}")
        self.tokens = tokens
        self.index = {t: i for i, t in enumerate(tokens)}
        self.blank, self.pad, self.unk = (self.index[t] for t in SPECIALS)

    def __len__(self) -> int:
        return len(self.tokens)

    @classmethod
    def build(cls, lines: Iterable[str], min_count: int = 1, max_size: int | None = None) -> "Vocab":
        counts = Counter(w for line in lines for w in line.split())
        words = sorted((w for w, c in counts.items() if c >= min_count and w not in SPECIALS),
                       key=lambda w: (-counts[w], w))
        if max_size:
            words = words[: max_size - len(SPECIALS)]
        return cls(list(SPECIALS) + words)

    @classmethod
    def load(cls, path: str | Path) -> "Vocab":
        return cls(read_lines(path))

    def save(self, path: str | Path) -> None:
        write_lines(path, self.tokens)

    def encode(self, sentence: str) -> list[int]:
        """Word ids; `<blank>` and `<pad>` written in a text are unknown words, never the model's markers."""
        return [self.unk if w in (BLANK, PAD) else self.index.get(w, self.unk) for w in sentence.split()]

    def decode(self, ids: Iterable[int]) -> str:
        return " ".join(self.tokens[i] for i in ids)
