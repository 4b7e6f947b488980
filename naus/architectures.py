"""The students: the one list the command line, the rules, the summarizer, the report and the tests
read (plain Python, importable without torch). How each one decodes is `naus.methods`'."""

from __future__ import annotations

from dataclasses import dataclass

from naus.methods import CTC, METHODS, methods_for, registry


@dataclass(frozen=True)
class Architecture:
    name: str  # the `--arch` value (a student's name, naus.layout.model, starts with it)
    label: str  # its name in Table 4
    ctc: bool  # trained with CTC: one output slot per source token (slot i reads token i), and ε
    pretrained: bool = False  # its shape and first weights are all-MiniLM-L6-v2's (naus.student.pretrained)
    frozen: bool = False  # it reads frozen MiniLM states (naus.student.frozen) and copies source words: no vocabulary

    @property
    def family(self) -> str:
        """Its key in `naus.methods.Method.decoders`: every CTC student decodes alike."""
        return CTC if self.ctc else self.name

    @property
    def methods(self) -> tuple[str, ...]:
        """The decoding methods it supports, the default first."""
        return methods_for(self.family)

    @property
    def table4(self) -> tuple[tuple[str, str], ...]:
        """(method, row label) of each of its rows in Table 4."""
        return tuple((name, m.table4[self.family]) for name, m in METHODS.items() if self.family in m.table4)


ARCHITECTURES = registry((
    Architecture("naus", "Encoder-only NAUS (CTC)", True),
    Architecture("ar", "AR encoder-decoder", False),
    Architecture("nar", "NAR encoder-decoder", False),
    Architecture("nar-ctc", "NAR encoder-decoder + CTC", True),
    Architecture("naus-minilm", "NAUS, encoder from all-MiniLM-L6-v2 (CTC)", True, pretrained=True),
    Architecture("naus-copy", "NAUS, copy head on frozen all-MiniLM-L6-v2 states (CTC)", True, frozen=True),
), "architectures")
# Table 4's students beside NAUS (NAUS's own rows come from the student trained for Table 2).
TABLE4_ARCHS = tuple(name for name in ARCHITECTURES if name != "naus")
