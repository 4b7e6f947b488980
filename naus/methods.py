"""The decoding methods, each declared once: its name, the students it applies to, the budget it takes
and its function. The command line's choices, the summarizer, the configuration schema (checked
equal by a test), the workflow's targets and the report's rows all read this table. Plain Python:
a decoder is named "module:function" and imported when it is first used, so `naus --help` and the
workflow never import torch.

A decoder is called with a `naus.decoding.Batch` and returns one `Hypothesis` per sample.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

WORDS, CHARS = "words", "characters"  # what a method's budget counts: --length/--ratio, or --chars
# Student families: CTC students (one output slot per source token), those of them whose copy head scores source
# positions (they decode as any CTC student too), and the two encoder-decoders.
CTC, COPY, AR, NAR = "ctc", "copy", "ar", "nar"


@dataclass(frozen=True)
class Method:
    name: str  # the `--method` value and a part of its decodings' file names
    label: str  # its rows' name in Tables 1 and 2, the case study and the browser
    short: str  # its name beside a student's (Table 7, the figures' legends)
    budget: str  # WORDS or CHARS
    decoders: dict[str, str]  # student family -> "module:function"
    table4: dict[str, str] = field(default_factory=dict)  # student family -> the label of its Table 3 row
    default_for: tuple[str, ...] = ()  # the families that decode with it when no method is given

    def key(self, family: str) -> str | None:
        """The family this method decodes `family`'s students as (a copy head's as CTC), or None."""
        return family if family in self.decoders else CTC if family == COPY and CTC in self.decoders else None

    @property
    def reads_positions(self) -> bool:
        """Whether its decoder reads a copy head's scores of source positions, not of word types."""
        return COPY in self.decoders

    def decoder(self, family: str):
        module, function = self.decoders[self.key(family)].split(":")
        return getattr(importlib.import_module(module), function)


def registry(entries: tuple, kind: str) -> dict:
    """{name: entry}: a name given twice is an error at import, not the last entry silently kept."""
    named: dict = {}
    for entry in entries:
        if entry.name in named:
            raise ValueError(f"two {kind} named {entry.name!r}")
        named[entry.name] = entry
    return named


METHODS = registry((
    Method("truncate", "NAUS truncate", "truncate", WORDS, {CTC: "naus.decoding.greedy:decode_truncated"},
           table4={CTC: "truncate"}),
    Method("length-control", "NAUS length control", "length control", WORDS,
           {CTC: "naus.decoding.length_control:decode"}, table4={CTC: "length control"}, default_for=(CTC,)),
    Method("source-order", "NAUS length control in source order", "source order", WORDS,
           {COPY: "naus.decoding.source_order:decode"}, default_for=(COPY,)),
    Method("greedy", "NAUS greedy", "greedy", WORDS, {CTC: "naus.decoding.greedy:decode",
                                                      AR: "naus.decoding.encoder_decoder:generate_greedy",
                                                      NAR: "naus.decoding.encoder_decoder:fill_slots"},
           table4={AR: "greedy", NAR: "vanilla (L slots)"}, default_for=(NAR,)),
    Method("beam", "CTC beam search + truncate", "CTC beam search", WORDS, {CTC: "naus.decoding.beam:decode_truncated",
                                                         AR: "naus.decoding.encoder_decoder:generate_beam"},
           table4={AR: "beam search"}, default_for=(AR,)),
    Method("char-control", "NAUS char control", "char control", CHARS, {CTC: "naus.decoding.char_control:decode"},
           default_for=(CTC,)),
    Method("source-order-chars", "NAUS char control in source order", "char control in source order", CHARS,
           {COPY: "naus.decoding.source_order:decode_chars"}, default_for=(COPY,)),
), "methods")
# The methods the analyses compare by name: truncation against length control (Tables 1 and 7, Figure 3), length
# control in source order against length control (Tables 1 and 2), the beam sweep (Figure 4) and the budget in
# characters.
TRUNCATE, LENGTH_CONTROL, SOURCE_ORDER, BEAM, CHAR_CONTROL = (
    METHODS[name] for name in ("truncate", "length-control", "source-order", "beam", "char-control"))


def source_order_settings() -> str:
    """What the source-order decoders keep by default, in words (`naus.settings.DecodeConfig`: phrases, last_word,
    adjacency), for the report's captions and claims."""
    from naus.settings import DecodeConfig

    said = ["phrases whole (naus.text.phrases)" if DecodeConfig.phrases == "whole" else "each word alone"]
    if DecodeConfig.last_word == "content":
        said.append("no function word last")
    if DecodeConfig.adjacency:
        nats = f"{DecodeConfig.adjacency:g} nat" + ("" if DecodeConfig.adjacency == 1 else "s")
        said.append(f"{nats} a word after its source neighbour")
    return ", ".join(said)


def methods_for(family: str) -> tuple[str, ...]:
    """The methods a student family decodes with, its default first (in words, then in characters)."""
    names = [name for name, method in METHODS.items() if method.key(family)]
    return tuple(sorted(names, key=lambda name: family not in METHODS[name].default_for))


def default_method(family: str, budget: str) -> str:
    """What a student of `family` decodes with when no method is given, for a budget in `budget`."""
    return next(name for name in methods_for(family) if METHODS[name].budget == budget
                and family in METHODS[name].default_for)


def word_methods() -> list[str]:
    """The methods a configuration's decode.methods may list (a word budget: Table 1's rows)."""
    return [name for name, method in METHODS.items() if method.budget == WORDS]


def default_help() -> str:
    """The `--method` help: each family's default."""
    words = {family: default_method(family, WORDS) for family in (CTC, COPY, AR, NAR)}
    chars = {family: default_method(family, CHARS) for family in (CTC, COPY)}
    return (f"default: {words[COPY]} for copy-head models (naus-copy), {words[CTC]} for other CTC models, "
            f"{words[AR]} for ar, {words[NAR]} for nar; with --chars {chars[COPY]} for copy-head models, "
            f"{chars[CTC]} for other CTC models")
