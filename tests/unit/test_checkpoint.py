"""Checkpoints (`naus.student.checkpoint`): read as data only, refused when their marks, shapes, settings or
architecture lie, written so that a full disk keeps the previous one."""

import pytest
import torch

from naus import NausError
from naus.student.checkpoint import FORMAT, load_checkpoint, model_from_checkpoint, save_checkpoint
from naus.student.vocab import Vocab
from tests.helpers import decode_argv, run_cli, save_student


def test_a_checkpoint_whose_vocab_mark_or_shapes_lie_is_refused_before_a_model_is_built(good, tmp_path, capsys):
    payload = torch.load(good["checkpoint"], weights_only=True)
    huge = {**payload["model_config"], "n_layers": 96, "d_model": 8192, "d_ff": 65536, "n_heads": 8}
    cases = {"vocab": ({**payload, "vocab": 7}, "its vocab is int, not a list of words"),
             "mark": ({**payload, "model": {**payload["model"], "arch_mark": torch.tensor(1.5)}},
                      "its weights name no architecture"),
             "huge": ({**payload, "model_config": huge}, "weights do not match the model configuration")}
    for name, (crafted, message) in cases.items():
        save_checkpoint(tmp_path / f"{name}.pt", crafted)
        code, err = run_cli(decode_argv(good, tmp_path / f"{name}.out") [:2] + [tmp_path / f"{name}.pt"]
                            + decode_argv(good, tmp_path / f"{name}.out")[3:], capsys)
        assert code == 2 and message in err.strip().splitlines()[-1], (name, err)
        assert not (tmp_path / f"{name}.out").exists()


def test_a_crafted_checkpoint_runs_nothing(tmp_path, capsys):
    """A checkpoint is read as data only: a pickle that would run a command is refused unopened."""
    import os

    witness = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return os.system, (f"touch {witness}",)

    torch.save({"format": FORMAT, "vocab": ["<blank>"], "model_config": {}, "model": Payload()}, tmp_path / "evil.pt")
    code, err = run_cli(["decode", "--checkpoint", tmp_path / "evil.pt", "--input", "-", "--out", tmp_path / "d.txt"],
                        capsys)
    assert code == 2 and "evil.pt: not a readable checkpoint (UnpicklingError" in err.strip().splitlines()[-1]
    assert not witness.exists() and not (tmp_path / "d.txt").exists()


def test_a_full_disk_while_a_checkpoint_is_written_keeps_the_previous_one(tmp_path, monkeypatch):
    from naus import NausError
    from naus.student.checkpoint import load_checkpoint

    path = tmp_path / "last.pt"
    save_checkpoint(path, {"format": FORMAT, "vocab": ["<blank>", "<pad>", "<unk>"], "model_config": {}, "model": {}})
    before = path.read_bytes()

    def full(*args, **kwargs):
        raise RuntimeError("[enforce fail at inline_container.cc:664] . PytorchStreamWriter failed writing file")

    monkeypatch.setattr(torch, "save", full)
    with pytest.raises(NausError, match="last.pt: could not write the checkpoint .*; the previous one is kept"):
        save_checkpoint(path, {"format": FORMAT})
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["last.pt"]
    assert load_checkpoint(path)["format"] == FORMAT


def test_a_checkpoint_with_settings_of_another_version_is_refused_in_one_line(checkpoints, tmp_path):
    payload = load_checkpoint(checkpoints["naus"])
    odd = save_student(tmp_path / "odd.pt", Vocab(payload["vocab"]), {**payload["model_config"], "rotary": True}, payload["model"])
    with pytest.raises(NausError, match=r"model_config has settings this naus does not know: \['rotary'\]"):
        model_from_checkpoint(load_checkpoint(odd), odd)


def test_weights_relabelled_as_another_architecture_are_refused(checkpoints, tmp_path):
    """An AR student's weights fit a vanilla NAR student's layers name for name: only their mark tells them apart."""
    payload = load_checkpoint(checkpoints["ar"])
    relabelled = save_student(tmp_path / "nar.pt", Vocab(payload["vocab"]), {**payload["model_config"], "arch": "nar"},
                      payload["model"])
    with pytest.raises(NausError, match="weights of a 'ar' student, but its model_config says 'nar'"):
        model_from_checkpoint(load_checkpoint(relabelled), relabelled)
