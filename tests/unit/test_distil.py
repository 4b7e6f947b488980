"""The distilled encoder under the students (`naus distil`): the same bytes at any thread count, its states marked
as its own, and a student that learned on them refusing any other states or encoder."""

import json

import numpy as np
import pytest
import torch

from naus import NausError
from naus.decoding.summarizer import Summarizer
from naus.settings import TrainConfig
from naus.student.distil import distil
from naus.student.frozen import KIND, identity
from naus.student.frozen import Encoder, States
from naus.student.train import Pairs, train
from naus.student.vocab import Vocab
from tests.helpers import write
from tests.unit.test_copy_head import SOURCES, TARGETS, tiny_config, word_states

NEWS = ["police arrested a man on sunday", "the government said taxes would rise next year",
        "a storm hit the coast of florida", "stocks fell sharply in early trading on wall street"]


@pytest.fixture(scope="module")
def top(tmp_path_factory):
    """Three layers distilled for one epoch on four sentences, at two threads (the file pins one)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        out = tmp_path_factory.mktemp("distil") / "encoder.safetensors"
        record = distil(NEWS, out, epochs=1)
    finally:
        torch.set_num_threads(threads)
    assert record["layers_from"] == "0,2,5" and record["sentences"] == "4"
    return out


def test_the_file_is_the_same_bytes_at_any_thread_count(top, tmp_path):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        distil(NEWS, tmp_path / "again.safetensors", epochs=1)
    finally:
        torch.set_num_threads(threads)
    assert identity(tmp_path / "again.safetensors") == identity(top)
    assert torch.get_num_threads() == threads


def test_its_states_are_three_layers_on_minilms_embeddings_and_name_their_encoder(top, tmp_path):
    encoder = Encoder(top=top)
    assert encoder.model.layers == 3 and encoder.model.w["encoder.layer.0.intermediate.dense.bias"].shape == (768,)
    assert encoder.model.w["embeddings.word_embeddings.weight"].equal(Encoder().model.w["embeddings.word_embeddings"
                                                                                         ".weight"])
    states = encoder.encode(NEWS)
    assert states.encoder == identity(top) and Encoder().encode(NEWS).encoder == ""
    states.save(tmp_path / "states.npz")
    assert States.load(tmp_path / "states.npz").encoder == identity(top)
    assert not np.array_equal(states.flat, Encoder().encode(NEWS).flat)


@pytest.mark.parametrize("damage, message", [
    ("metadata", "not a distilled encoder"), ("shape", "layer 1 is not a MiniLM layer"),
    ("nan", "layer 0 holds NaN"), ("name", "tensor 'pooler.dense.weight' is not an encoder layer's"),
    ("gap", "not numbered 0, 1"), ("garbage", "not a distilled encoder")])
def test_a_file_that_is_not_a_distilled_encoder_is_refused_in_one_line(top, tmp_path, damage, message):
    from safetensors.torch import load_file, save_file

    weights, path = load_file(top), tmp_path / "bad.safetensors"
    metadata = {"naus": json.dumps({"kind": KIND})}
    if damage == "metadata":
        metadata = {"naus": json.dumps({"kind": "something else"})}
    elif damage == "shape":
        weights["encoder.layer.1.attention.self.query.weight"] = torch.zeros(384, 10, dtype=torch.float16)
    elif damage == "nan":
        weights["encoder.layer.0.output.dense.bias"][3] = float("nan")
    elif damage == "name":
        weights["pooler.dense.weight"] = torch.zeros(2, 2, dtype=torch.float16)
    elif damage == "gap":
        weights = {k.replace("encoder.layer.2.", "encoder.layer.7."): v for k, v in weights.items()}
    if damage == "garbage":
        write(path, "not a safetensors file at all")
    else:
        save_file(weights, path, metadata=metadata)
    with pytest.raises(NausError, match=message) as caught:
        Encoder(top=path)
    assert "\n" not in str(caught.value) and str(path) in str(caught.value)


@pytest.fixture(scope="module")
def student(top, tmp_path_factory):
    """A copy-head student that learned on (stand-in) states of the distilled encoder."""
    learned = identity(top)
    vocab = Vocab.build(SOURCES)
    states = word_states(SOURCES)
    states.encoder = learned
    config = TrainConfig(max_steps=20, max_tokens=512, lr=3e-3, warmup=5, eval_every=20, checkpoint_every=1000,
                         device="cpu")
    out = tmp_path_factory.mktemp("student")
    model = tiny_config(len(vocab))
    model.states_encoder = learned
    train(Pairs([vocab.encode(s) for s in SOURCES], [vocab.encode(t) for t in TARGETS], states), None, vocab, model,
          config, out)
    return out / "best.pt"


def test_a_student_on_its_states_refuses_minilms_and_new_text_without_its_encoder(top, student, tmp_path):
    summarizer = Summarizer.from_checkpoint(student, "cpu")
    assert summarizer.model.config.states_encoder == identity(top)
    with pytest.raises(NausError, match="states of MiniLM, but the student learned on an encoder file's"):
        summarizer.summarize(SOURCES[:2], length=3, raw=False, states=word_states(SOURCES[:2]))
    with pytest.raises(NausError, match="give its file .*--encoder"):
        summarizer.summarize(NEWS[:1], length=3)
    assert len(Summarizer.from_checkpoint(student, "cpu", encoder=top).summarize(NEWS[:1], length=3)[0].summary
               .split()) == 3
    other = tmp_path / "other.safetensors"
    other.write_bytes(top.read_bytes()[:-2] + b"  ")
    with pytest.raises(NausError, match="not the encoder whose states the student learned on"):
        Summarizer.from_checkpoint(student, "cpu", encoder=other)


def test_the_bundled_student_reads_the_encoder_shipped_beside_it(top, student, monkeypatch):
    import naus.decoding.summarizer as module

    monkeypatch.setattr(module, "BUNDLED", student)
    monkeypatch.setattr(module, "BUNDLED_ENCODER", top)
    assert Summarizer.from_pretrained().encoder == top


def test_a_student_on_minilms_states_refuses_a_distilled_encoder(top):
    from naus.pipeline.bundle import BUNDLED

    with pytest.raises(NausError, match="not the encoder whose states the student learned on .* the student's MiniLM"):
        Summarizer.from_pretrained(encoder=top)
    assert BUNDLED.is_file()


def test_train_and_dev_states_of_two_encoders_are_refused(top, tmp_path):
    from naus.student.build import train_student

    source, target = write(tmp_path / "s.txt", "\n".join(SOURCES) + "\n"), write(tmp_path / "t.txt",
                                                                                  "\n".join(TARGETS) + "\n")
    minilm, distilled = word_states(SOURCES), word_states(SOURCES)
    distilled.encoder = identity(top)
    minilm.save(tmp_path / "a.npz")
    distilled.save(tmp_path / "b.npz")
    with pytest.raises(NausError, match="b.npz: states of another encoder than .*a.npz's"):
        train_student(source, target, tmp_path / "out", "naus-copy", model={"d_model": 32, "n_heads": 4},
                      config=TrainConfig(max_steps=1, device="cpu"), dev_source=source, dev_target=target,
                      train_states=tmp_path / "a.npz", dev_states=tmp_path / "b.npz")
