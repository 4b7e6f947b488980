"""The students and how each one decodes: the one list the command line, the rules, the
summarizer, the report and the tests read (plain Python, importable without torch)."""

from __future__ import annotations

from dataclasses import dataclass

CTC_METHODS = ("length-control", "truncate", "beam", "greedy", "char-control")
CHAR_METHOD = "char-control"  # the one method whose budget is characters (`--chars`), not words


@dataclass(frozen=True)
class Architecture:
    name: str  # the `--arch` value (a student's name, naus.layout.model, starts with it)
    label: str  # its name in Table 4
    ctc: bool  # trained with CTC: one output slot per source token (slot i reads token i), and ε
    methods: tuple[str, ...]  # the decoding methods it supports, the default first
    table4: tuple[tuple[str, str], ...]  # (method, row label) of each of its rows in Table 4
    pretrained: bool = False  # its shape and first weights are all-MiniLM-L6-v2's (naus.pretrained)


ARCHITECTURES = {a.name: a for a in (
    Architecture("naus", "Encoder-only NAUS (CTC)", True, CTC_METHODS,
                 (("truncate", "truncate"), ("length-control", "length control"))),
    Architecture("ar", "AR encoder-decoder", False, ("beam", "greedy"),
                 (("greedy", "greedy"), ("beam", "beam search"))),
    Architecture("nar", "NAR encoder-decoder", False, ("greedy",), (("greedy", "vanilla (L slots)"),)),
    Architecture("nar-ctc", "NAR encoder-decoder + CTC", True, CTC_METHODS,
                 (("truncate", "truncate"), ("length-control", "length control"))),
    Architecture("naus-minilm", "NAUS, encoder from all-MiniLM-L6-v2 (CTC)", True, CTC_METHODS,
                 (("truncate", "truncate"), ("length-control", "length control")), pretrained=True),
)}
# Table 4's students beside NAUS (NAUS's own rows come from the student trained for Table 2).
TABLE4_ARCHS = tuple(name for name in ARCHITECTURES if name != "naus")

