"""Seed ensembles (naus.student.ensemble): each slot's distribution the mean of the members', one checkpoint file."""

import pytest
import torch

from naus import NausError
from naus.decoding.summarizer import Summarizer
from naus.settings import TrainConfig
from naus.student.checkpoint import load_checkpoint, model_from_checkpoint, save_checkpoint
from naus.student.checkpoint import save_ensemble
from naus.student.ensemble import Ensemble
from naus.student.frozen import WIDTH
from naus.student.registry import build_model
from naus.student.train import Pairs, train
from naus.student.vocab import Vocab
from tests.unit.test_copy_head import SOURCES, TARGETS, tiny_config, word_states


@pytest.fixture(scope="module")
def members(tmp_path_factory):
    """Two seeds of one recipe: the copy-head students of test_copy_head, trained a little (60 steps)."""
    vocab = Vocab.build(SOURCES)
    pairs = Pairs([vocab.encode(s) for s in SOURCES], [vocab.encode(t) for t in TARGETS], word_states(SOURCES))
    paths = []
    for seed in (0, 1):
        out = tmp_path_factory.mktemp(f"seed{seed}")
        config = TrainConfig(max_steps=60, max_tokens=512, lr=3e-3, warmup=20, smoothing=0.0, eval_every=30,
                             checkpoint_every=1000, device="cpu", seed=seed)
        train(pairs, None, vocab, tiny_config(len(vocab)), config, out)
        paths.append(out / "best.pt")
    return paths


def test_its_probabilities_are_the_mean_of_the_members():
    torch.manual_seed(0)
    models = [build_model(tiny_config()).eval() for _ in range(3)]
    states, lengths = torch.randn(2, 5, WIDTH), torch.tensor([5, 3])
    words = torch.tensor([[3, 4, 3, 5, 4], [6, 6, 7, 0, 0]])
    with torch.no_grad():
        mean = torch.stack([m(states, lengths, words, 9).exp() for m in models]).mean(0)
        ensemble = Ensemble(models)(states, lengths, words, 9, normalize=False)
    assert torch.allclose(ensemble.exp(), mean, atol=1e-6)
    assert torch.equal(torch.isinf(ensemble), mean == 0)  # a word no member gives probability has none


def test_one_file_holds_the_members_and_decodes_as_their_mean(members, tmp_path):
    save_ensemble(members, tmp_path / "ensemble.pt")
    model, _ = model_from_checkpoint(load_checkpoint(tmp_path / "ensemble.pt"))
    assert isinstance(model, Ensemble) and len(model.members) == 2
    singles = [model_from_checkpoint(load_checkpoint(path))[0].eval() for path in members]
    states, lengths, words = torch.randn(1, 6, WIDTH), torch.tensor([6]), torch.tensor([[3, 4, 5, 6, 7, 8]])
    with torch.no_grad():
        mean = torch.stack([m(states, lengths, words, 9).exp() for m in singles]).mean(0)
        assert torch.allclose(model.eval()(states, lengths, words, 9).exp(), mean, atol=1e-6)
    summaries = Summarizer.from_checkpoint(tmp_path / "ensemble.pt", "cpu").summarize(
        SOURCES, length=4, raw=False, states=word_states(SOURCES))
    assert all(len(s.summary.split()) == 4 for s in summaries)


def test_an_ensemble_of_one_student_twice_decodes_as_the_student(members, tmp_path):
    save_ensemble([members[0], members[0]], tmp_path / "twice.pt")
    states = word_states(SOURCES)
    alone = Summarizer.from_checkpoint(members[0], "cpu").summarize(SOURCES, length=4, raw=False, states=states)
    twice = Summarizer.from_checkpoint(tmp_path / "twice.pt", "cpu").summarize(SOURCES, length=4, raw=False,
                                                                                 states=states)
    assert [r.summary for r in twice] == [r.summary for r in alone]
    assert [r.log_prob for r in twice] == pytest.approx([r.log_prob for r in alone], abs=1e-4)


def test_members_of_other_recipes_or_an_ensemble_of_ensembles_are_refused(members, tmp_path):
    other = load_checkpoint(members[1])
    save_checkpoint(tmp_path / "other.pt", {**other, "vocab": other["vocab"] + ["stranger"],
                                            "model_config": {**other["model_config"],
                                                             "vocab_size": len(other["vocab"]) + 1}})
    with pytest.raises(NausError, match="other.pt: its model_config is not"):
        save_ensemble([members[0], tmp_path / "other.pt"], tmp_path / "mixed.pt")
    save_ensemble(members, tmp_path / "ensemble.pt")
    with pytest.raises(NausError, match="is an ensemble itself"):
        save_ensemble([members[0], tmp_path / "ensemble.pt"], tmp_path / "nested.pt")
    with pytest.raises(NausError, match="at least one member"):
        save_ensemble([], tmp_path / "empty.pt")
    assert not (tmp_path / "mixed.pt").exists() and not (tmp_path / "nested.pt").exists()


def test_a_checkpoint_whose_members_are_damaged_is_refused_in_one_line(members, tmp_path):
    save_ensemble(members, tmp_path / "ensemble.pt")
    payload = load_checkpoint(tmp_path / "ensemble.pt")
    payload["model"][1] = {name: t[:1] for name, t in payload["model"][1].items()}
    save_checkpoint(tmp_path / "damaged.pt", payload)
    with pytest.raises(NausError, match=r"damaged.pt \(member 1\)"):
        model_from_checkpoint(load_checkpoint(tmp_path / "damaged.pt"), tmp_path / "damaged.pt")
    save_checkpoint(tmp_path / "none.pt", {**payload, "model": []})
    with pytest.raises(NausError, match="one or more CTC students"):
        model_from_checkpoint(load_checkpoint(tmp_path / "none.pt"), tmp_path / "none.pt")


def test_the_command_writes_one_checkpoint_and_refuses_foreign_members_in_one_line(members, tmp_path, capsys):
    from tests.helpers import naus_main

    done = naus_main(["ensemble", "--members", members[0], members[1], "--out", tmp_path / "e.pt"], capsys)
    assert done.returncode == 0 and isinstance(model_from_checkpoint(load_checkpoint(tmp_path / "e.pt"))[0], Ensemble)
    refused = naus_main(["ensemble", "--members", members[0], tmp_path / "e.pt", "--out", tmp_path / "f.pt"], capsys)
    code, err = refused.returncode, refused.stderr
    assert code == 2 and "is an ensemble itself" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "f.pt").exists()
