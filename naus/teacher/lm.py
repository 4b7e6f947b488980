"""KenLM n-gram fluency: training with lmplz, and per-sentence score tables for the search.

The search only ever scores subsequences of one source sentence, so every n-gram it can
meet is a window of source positions. `NgramTable` asks KenLM once for each such window and
keeps the answers in a dense array; scoring a batch of candidates is then one gather.
"""

from __future__ import annotations

import logging
import math
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from naus import NausError
from naus.plumbing.files import check_file, read_lines, sha256sum
from naus.plumbing.outputs import atomic_open, check_regular_output
from naus.settings import LMConfig

log = logging.getLogger(__name__)
LN10 = math.log(10.0)


def _tool(name: str) -> str:
    """A KenLM program from PATH, else from beside this Python (where `make setup` builds it)."""
    found = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        raise NausError(f"{name} not found on PATH: run `make setup` (builds KenLM into .venv/bin)")
    return found


def train_lm(corpus: str | Path, out: str | Path, order: int, memory: str = "20%") -> None:
    """Train an `order`-gram KenLM on `corpus` (one sentence per line) and write a binary model."""
    lmplz, build_binary = _tool("lmplz"), _tool("build_binary")
    LMConfig(order=order, memory=memory)  # its range checked as the command line and the workflow check it
    corpus, out = Path(corpus), check_regular_output(out, "a language model is renamed into place, its SHA-256 "
                                                          "written beside it")
    if not any(line for line in read_lines(corpus)):  # also refuses a missing file and bytes that are not UTF-8
        raise NausError(f"{corpus}: no words to train a language model on")
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        arpa = Path(tmp) / "lm.arpa"
        cmd = [lmplz, "-o", str(order), "-S", memory, "-T", tmp, "--discount_fallback"]
        with open(corpus, "rb") as src, open(arpa, "wb") as dst:
            result = subprocess.run(cmd, stdin=src, stdout=dst, stderr=subprocess.PIPE)
        if result.returncode != 0:
            raise NausError(f"lmplz failed on {corpus}: {result.stderr.decode(errors='replace').strip()[-500:]}")
        binary = Path(tmp) / "lm.bin"
        result = subprocess.run([build_binary, str(arpa), str(binary)], capture_output=True)
        if result.returncode != 0:
            raise NausError(f"build_binary failed: {result.stderr.decode(errors='replace').strip()[-500:]}")
        binary.replace(out)
    with atomic_open(checksum_path(out)) as handle:
        handle.write(sha256sum(out) + "\n")
    log.info("trained a %d-gram LM on %s -> %s", order, corpus, out)


def checksum_path(model: str | Path) -> Path:
    """Where `train_lm` records the model's SHA-256: KenLM binaries carry no checksum of their own,
    and a damaged one loads and answers garbage (or crashes the process)."""
    return Path(f"{model}.sha256")


def _check_integrity(path: Path, digest: str) -> None:
    """The recorded checksum when there is one (`digest` is the file's); otherwise load the model once
    in a child process, so that a file that crashes KenLM ends in one line instead of a segmentation fault."""
    record = checksum_path(path)
    if record.is_file():
        if read_lines(record)[:1] != [digest]:
            raise NausError(f"{path}: content differs from the SHA-256 recorded when it was built ({record}): "
                            f"damaged, or replaced without its record; rebuild it (or delete {record.name} if the "
                            "new file is meant)")
        return
    probe = "import kenlm, sys; kenlm.Model(sys.argv[1]).score('the news')"
    result = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True)
    if result.returncode < 0:
        raise NausError(f"{path}: loading it as a KenLM model crashed ({signal.Signals(-result.returncode).name}): "
                        "a damaged file?")


class LanguageModel:
    """A KenLM model; all log-probabilities returned are natural logs."""

    def __init__(self, path: str | Path):
        import kenlm

        path = check_file(path, "language model", "run the lm step first")
        self.path, self.sha256 = path, sha256sum(path)  # read once: checked here, recorded by the search's provenance
        _check_integrity(path, self.sha256)
        config = kenlm.Config()  # an ARPA file (`naus compile`'s) loads without KenLM's bar and advice on stderr
        config.show_progress, config.arpa_complain = False, kenlm.ARPALoadComplain.NONE
        try:
            self.model = kenlm.Model(str(path), config)
        except (OSError, RuntimeError, ValueError) as err:  # ValueError: bytes that are not UTF-8
            raise NausError(f"{path}: not a KenLM model ({type(err).__name__})") from None
        self.order = self.model.order
        self._unigram_cache: dict[str, float] = {}

    def log_prob(self, words: list[str]) -> float:
        """ln P(<s> words </s>): the reference for the tables."""
        return self.model.score(" ".join(words), bos=True, eos=True) * LN10

    def unigram(self, word: str) -> float:
        """ln P(word) without context (the <unk> probability for unseen words)."""
        cached = self._unigram_cache.get(word)
        if cached is None:
            import kenlm

            null, out = kenlm.State(), kenlm.State()
            self.model.NullContextWrite(null)
            cached = self._unigram_cache[word] = self.model.BaseScore(null, word, out) * LN10
        return cached

    def table(self, words: list[str]) -> "NgramTable":
        return NgramTable(self, words)


class NgramTable:
    """ln P of every n-gram window over the positions of one source sentence.

    Index 0 stands for <s>, 1..S for the source words and S+1 for </s>. A window is a tuple
    of n indices; windows that reach back before the sentence start are padded with 0.
    """

    def __init__(self, lm: LanguageModel, words: list[str]):
        import kenlm

        model, n, size = lm.model, lm.order, len(words) + 2
        self.n, self.size = n, size
        self.eos = len(words) + 1
        self.strides = size ** np.arange(n - 1, -1, -1)
        step = [int(stride) for stride in self.strides]
        # the search's largest allocation, written only where the windows land (its other pages never touched)
        self.flat = np.zeros(size**n, dtype=np.float64)
        scratch = kenlm.State()
        starts, runs, scores = [], [], []  # windows' runs of last words not yet written: flat offset, length, ln P's

        def write() -> None:
            """The runs gathered so far into the table at once (a few MB at a time, whatever the table's size)."""
            values = np.array(scores, dtype=np.float64) * LN10
            if not (values <= 0).all():  # NaN too: a damaged model that loaded
                raise NausError(f"{lm.path}: not a valid KenLM model (a log-probability of {values.max():.4g} "
                                f"over the words of {' '.join(words[:8])!r}...); a damaged file?")
            lengths = np.array(runs, dtype=np.int64)
            first = np.repeat(np.array(starts, dtype=np.int64) - (np.cumsum(lengths) - lengths), lengths)
            self.flat[first + np.arange(len(values))] = values
            for pending in (starts, runs, scores):
                pending.clear()

        def extend(offset: int, depth: int, state, last: int, remaining: int) -> None:
            if remaining == 0:  # every word after `last`, then </s>: one contiguous run of the last axis
                scores.extend(model.BaseScore(state, words[z], scratch) for z in range(last + 1, len(words)))
                scores.append(model.BaseScore(state, "</s>", scratch))
                starts.append(offset + last + 2)
                runs.append(len(words) - last)
                if len(scores) >= 1 << 16:
                    write()
                return
            for z in range(last + 1, len(words)):
                nxt = kenlm.State()
                model.BaseScore(state, words[z], nxt)
                extend(offset + (z + 1) * step[depth], depth + 1, nxt, z, remaining - 1)

        for zeros in range(n - 1, -1, -1):
            start = kenlm.State()
            if zeros:
                model.BeginSentenceWrite(start)
            else:
                model.NullContextWrite(start)
            extend(0, zeros, start, -1, n - 1 - zeros)
        write()
        self.unigram = np.array([lm.unigram(w) for w in words])

    def log_prob(self, positions: np.ndarray) -> np.ndarray:
        """ln P(<s> y </s>) for candidates given as sorted 0-based positions, shape [N, L]."""
        count = positions.shape[0]
        padded = np.concatenate(
            [np.zeros((count, self.n - 1), dtype=np.int64), positions + 1, np.full((count, 1), self.eos)], axis=1
        )
        windows = positions.shape[1] + 1
        flat = sum(padded[:, k : k + windows] * self.strides[k] for k in range(self.n))
        return self.flat[flat].sum(axis=1)
