"""The registry of decoding methods is the one place a method is declared: the command line, the schema,
the summarizer and the architectures read it."""

import pytest
import torch

from naus import methods
from naus.architectures import ARCHITECTURES
from naus.methods import CHARS, CTC, METHODS, WORDS, Method
from tests.helpers import ROOT, config_schema


def schema_methods() -> list[str]:
    """The methods the configuration schema's decode.methods may list."""
    return config_schema()["$defs"]["method"]["enum"]


def method_choices() -> list[str]:
    from naus.cli import build_parser

    decode = build_parser()._subparsers._group_actions[0].choices["decode"]
    return next(a.choices for a in decode._actions if a.dest == "method")


def test_the_schema_lists_every_word_method_of_the_registry():
    assert schema_methods() == methods.word_methods()


def test_the_command_line_offers_every_method():
    assert list(method_choices()) == list(METHODS)


def test_each_family_has_one_default_first_and_one_per_budget():
    for family in {a.family for a in ARCHITECTURES.values()}:
        for budget in (WORDS, CHARS):
            offered = [m for m in METHODS.values() if m.key(family) and m.budget == budget]
            assert sum(family in m.default_for for m in offered) == (1 if offered else 0)
        assert family in METHODS[methods.methods_for(family)[0]].default_for
        assert METHODS[methods.methods_for(family)[0]].budget == WORDS


def test_a_copy_head_decodes_in_the_source_order_by_default_and_as_any_ctc_student_too():
    copy, plain = ARCHITECTURES["naus-copy"], ARCHITECTURES["naus"]
    assert copy.methods[0] == "source-order" and plain.methods[0] == "length-control"
    assert set(plain.methods) < set(copy.methods)
    assert methods.default_method(copy.family, CHARS) == "source-order-chars"
    assert methods.default_method(plain.family, CHARS) == "char-control"


def first_words(batch):
    """A dummy decoder: the first L source tokens of each sample, read off the batch."""
    from naus.decoding import Hypothesis

    ids = batch.logits.argmax(-1)
    return [Hypothesis(ids[i, :t].tolist(), ids[i, :t].tolist(), 0.0) for i, t in enumerate(batch.targets)]


def test_a_method_is_its_registry_entry_and_its_function(monkeypatch):
    """A dummy method added to the registry: the command line and the configuration schema offer it, a CTC
    student decodes with it."""
    from naus.student.registry import build_model
    from naus.settings import ModelConfig
    from naus.decoding.summarizer import Summarizer
    from naus.student.vocab import Vocab

    monkeypatch.setitem(METHODS, "dummy", Method("dummy", "NAUS dummy", "dummy", WORDS,
                                                 {CTC: "tests.unit.test_methods:first_words"}))
    assert "dummy" in method_choices()
    assert "dummy" in schema_methods()
    assert "dummy" in ARCHITECTURES["naus"].methods and "dummy" not in ARCHITECTURES["ar"].methods
    vocab = Vocab.build(["a b c d e"])
    torch.manual_seed(0)
    model = build_model(ModelConfig(len(vocab), d_model=16, n_heads=2, n_layers=1, d_ff=32, max_len=16))
    summary, = Summarizer(model, vocab, torch.device("cpu")).summarize(["a b c d e"], length=2, method="dummy")
    assert summary.length == 2
    with pytest.raises(Exception, match="decodes with"):
        Summarizer(model, vocab, torch.device("cpu")).summarize(["a b"], method="nonexistent")


def test_method_names_are_written_in_the_registry_only():
    """No module of naus/ but the registry holds a method's name as a string: the others read the registry."""
    import ast

    found = []
    for path in sorted((ROOT / "naus").rglob("*.py")):
        if path.name == "methods.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and node.value in METHODS:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.value!r}")
    assert found == []


def test_a_registry_refuses_two_entries_of_one_name():
    from collections import namedtuple

    from naus.methods import registry

    Entry = namedtuple("Entry", "name")
    assert list(registry((Entry("a"), Entry("b")), "methods")) == ["a", "b"]
    with pytest.raises(ValueError, match="two methods named 'a'"):
        registry((Entry("a"), Entry("a")), "methods")
