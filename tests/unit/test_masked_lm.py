"""The encoder pretrained here by masked-language modelling (`naus.teacher.masked_lm`), the contextual pair-free
stand-in for MiniLM: it learns, an interrupted run resumes to the same file, a resumed run with other settings
refuses, and what the teacher and the students read from it agrees with its states."""

import numpy as np
import pytest
import torch

from naus import NausError
from naus.plumbing.files import sha256sum
from naus.settings import MaskedLMConfig
from naus.student.frozen import States, encoder as states_encoder
from naus.teacher import masked_lm
from naus.student.frozen import MaskedLMStates
from naus.teacher.masked_lm import MaskedLM, MaskedLMEmbedder, is_masked_lm, pretrain, vocabulary
from naus.teacher.word_vectors import build_word_vectors
from tests.helpers import run_cli

LINES = ["the cat sat on the mat", "the dog sat on the log", "a cat and a dog met on the mat",
         "the log was by the mat"] * 8
TINY = MaskedLMConfig(width=384, layers=1, heads=6, ffn=32, batch_words=40, steps=12, warmup=2, lr=3e-3)


def test_the_vocabulary_is_the_special_tokens_then_words_by_frequency():
    assert vocabulary([["b", "a", "b", "c"], ["a", "b"]], min_count=2) == ["[PAD]", "[UNK]", "[MASK]", "b", "a"]


def test_pretraining_lowers_the_loss_and_writes_an_encoder(tmp_path):
    record = pretrain(LINES, tmp_path / "mlm.npz", MaskedLMConfig(**{**TINY.__dict__, "steps": 60}))
    assert record["last_loss"] < record["first_loss"]
    assert is_masked_lm(tmp_path / "mlm.npz") and not (tmp_path / "mlm.npz.partial").exists()
    assert MaskedLM(tmp_path / "mlm.npz").config == MaskedLMConfig(**{**TINY.__dict__, "steps": 60})


def test_an_interrupted_run_resumes_to_the_same_file(tmp_path, monkeypatch):
    pretrain(LINES, tmp_path / "whole.npz", TINY)
    monkeypatch.setattr(masked_lm, "SAVE_EVERY", 5)
    calls, clip = [], torch.nn.utils.clip_grad_norm_

    def failing(*args, **kwargs):
        calls.append(1)
        if len(calls) == 8:
            raise KeyboardInterrupt
        return clip(*args, **kwargs)

    monkeypatch.setattr(torch.nn.utils, "clip_grad_norm_", failing)
    with pytest.raises(KeyboardInterrupt):
        pretrain(LINES, tmp_path / "resumed.npz", TINY)
    assert (tmp_path / "resumed.npz.partial").is_file() and not (tmp_path / "resumed.npz").exists()
    monkeypatch.setattr(torch.nn.utils, "clip_grad_norm_", clip)
    pretrain(LINES, tmp_path / "resumed.npz", TINY)
    assert sha256sum(tmp_path / "resumed.npz") == sha256sum(tmp_path / "whole.npz")


def test_a_resumed_run_with_other_settings_or_text_refuses(tmp_path, monkeypatch):
    monkeypatch.setattr(masked_lm, "SAVE_EVERY", 5)
    monkeypatch.setattr(masked_lm, "save", lambda *args: (_ for _ in ()).throw(KeyboardInterrupt))
    with pytest.raises(KeyboardInterrupt):
        pretrain(LINES, tmp_path / "mlm.npz", TINY)
    for lines, config in ((LINES, MaskedLMConfig(**{**TINY.__dict__, "lr": 1e-3})), (LINES[1:], TINY)):
        with pytest.raises(NausError, match="mlm.npz.partial: an unfinished run with other settings or text"):
            pretrain(lines, tmp_path / "mlm.npz", config)


def test_the_teachers_estimate_of_the_whole_source_is_its_exact_vector(tmp_path):
    pretrain(LINES, tmp_path / "mlm.npz", TINY)
    embedder = MaskedLMEmbedder(tmp_path / "mlm.npz")
    words = "the cat sat on the log".split()
    context = embedder.source_context(words)
    (vector,) = embedder.encode_group([" ".join(words)])
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-6)
    assert vector == pytest.approx(context.vector, abs=1e-6)
    assert context.similarity().cosine(np.ones((1, len(words))))[0] == pytest.approx(1.0, abs=1e-9)


def test_students_states_are_the_encoders_word_states_and_name_it(tmp_path):
    pretrain(LINES, tmp_path / "mlm.npz", TINY)
    lines = ["the cat sat", "a dog met on the zebra"]
    states = states_encoder(top=tmp_path / "mlm.npz").encode(lines)
    assert isinstance(states_encoder(top=tmp_path / "mlm.npz"), MaskedLMStates)
    assert states.encoder == sha256sum(tmp_path / "mlm.npz") and list(states.words()) == [3, 6]
    expected = MaskedLM(tmp_path / "mlm.npz").word_states([line.split() for line in lines])
    assert states[1].astype(float) == pytest.approx(expected[1], abs=1e-2)
    states.check_lines(lines, "states")
    states.save(tmp_path / "states.npz")
    assert States.load(tmp_path / "states.npz").encoder == states.encoder


def test_a_table_of_word_vectors_is_not_taken_for_the_encoder(tmp_path):
    build_word_vectors(LINES, tmp_path / "table.npz", width=4)
    assert not is_masked_lm(tmp_path / "table.npz")
    with pytest.raises(NausError, match="table.npz: not a masked-LM encoder"):
        MaskedLM(tmp_path / "table.npz")


def test_the_command_line_pretrains_and_refuses_a_width_its_heads_do_not_divide(tmp_path, capsys):
    text = tmp_path / "text.txt"
    text.write_text("\n".join(LINES) + "\n")
    code, err = run_cli(["pretrain-mlm", "--inputs", str(text), "--out", str(tmp_path / "mlm.npz"), "--width", "20",
                         "--heads", "6"], capsys)
    assert code != 0 and "width 20 must be even and divisible by heads 6" in err and len(err.strip().splitlines()) == 1
    code, err = run_cli(["pretrain-mlm", "--inputs", str(text), "--out", str(tmp_path / "mlm.npz"), "--width", "24",
                         "--heads", "2", "--layers", "1", "--ffn", "8", "--steps", "3", "--warmup", "1"], capsys)
    assert code == 0 and MaskedLM(tmp_path / "mlm.npz").config.width == 24


def test_the_search_reranks_by_the_encoder_and_records_it(tmp_path, capsys):
    """`naus search --encoder`: today's two-stage search, the encoder's similarity in MiniLM's place (its learned
    estimate fitted alike); its output names the encoder by SHA-256, so a resumed run with another refuses."""
    import json

    from naus.teacher.lm import train_lm
    from tests.helpers import headline_corpus, write

    pretrain(LINES, tmp_path / "mlm.npz", TINY)
    train_lm(write(tmp_path / "headlines.txt", headline_corpus()), tmp_path / "lm.bin", order=3)
    text = write(tmp_path / "in.txt", "\n".join(LINES[:4]) + "\n")
    argv = ["search", "--input", str(text), "--lm", str(tmp_path / "lm.bin"), "--length", "3", "--rerank-k", "8",
            "--rerank-exact", "4", "--encoder", str(tmp_path / "mlm.npz"), "--out", str(tmp_path / "out.jsonl")]
    code, err = run_cli(argv, capsys)
    assert code == 0, err
    records = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert len(records) == 4 and all(len(r["summary"].split()) == 3 and 0 < r["f_sim"] <= 1 for r in records)
    provenance = json.loads((tmp_path / "out.jsonl.provenance.json").read_text())
    assert provenance["parameters"]["encoder_sha256"] == sha256sum(tmp_path / "mlm.npz")
    code, err = run_cli([*argv[:-2], "--onnx", str(tmp_path / "x.onnx"), "--out", str(tmp_path / "b.jsonl")], capsys)
    assert code == 2 and "the re-ranking reads one" in err and len(err.strip().splitlines()) == 1
