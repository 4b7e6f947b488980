"""The naus-minilm student starts as all-MiniLM-L6-v2: its encoder computes what MiniLM computes."""

import json

import pytest
import torch

from naus import NausError
from naus.student.registry import build_model
from naus.student.pretrained import minilm_shape, start_from_minilm
from naus.settings import ModelConfig, TrainConfig
from naus.decoding.summarizer import Summarizer
from naus.student.train import Pairs, train
from naus.student.vocab import Vocab
from naus.teacher.similarity import model_dir
from naus.student.vocab import SPECIALS

transformers = pytest.importorskip("transformers")

WORDS = list(SPECIALS) + ["the", "police", "arrested", "unbelievably", "#", "quake"]


@pytest.fixture(scope="module")
def students():
    """Ours started from MiniLM, and MiniLM itself (the package's weights read by transformers)."""
    config = ModelConfig(len(WORDS), dropout=0.0, max_len=64, arch="naus-minilm", **minilm_shape(64))
    ours = build_model(config)
    start_from_minilm(ours, WORDS)
    return ours.eval(), transformers.AutoModel.from_pretrained(str(model_dir())).eval()


def test_the_encoder_states_are_minilms_for_words_of_one_piece(students):
    ours, minilm = students
    words = ["the", "police", "arrested", "quake"]
    pieces = transformers.AutoTokenizer.from_pretrained(str(model_dir()))(" ".join(words), add_special_tokens=False)
    assert len(pieces["input_ids"]) == len(words)  # one WordPiece each, so the two inputs are the same
    with torch.no_grad():
        expected = minilm(input_ids=torch.tensor([pieces["input_ids"]])).last_hidden_state
        x, padding = ours.embed_source(torch.tensor([[WORDS.index(w) for w in words]]), torch.tensor([len(words)]))
        states = ours.layers(x, src_key_padding_mask=padding)
    # float32 through different attention kernels: agreement to rounding, far below the states' scale (~1)
    assert torch.allclose(states, expected, atol=1e-4)


def test_a_word_of_several_pieces_starts_as_their_mean_and_specials_as_unk(students):
    ours, minilm = students
    table = minilm.embeddings.word_embeddings.weight
    pieces = transformers.AutoTokenizer.from_pretrained(str(model_dir()))("unbelievably", add_special_tokens=False)
    assert len(pieces["input_ids"]) > 1
    assert torch.allclose(ours.embed.weight[WORDS.index("unbelievably")], table[pieces["input_ids"]].mean(0))
    unk = table[transformers.AutoTokenizer.from_pretrained(str(model_dir())).convert_tokens_to_ids("[UNK]")]
    assert all(torch.equal(ours.embed.weight[WORDS.index(s)], unk) for s in SPECIALS)


def test_more_positions_than_minilm_has_is_refused():
    with pytest.raises(NausError, match="512 positions"):
        minilm_shape(513)


def test_it_trains_from_there_and_decodes_as_naus(tmp_path):
    """A few steps from MiniLM lower the loss (the copied weights train), and the checkpoint decodes by
    length control without the package's weights (its shape and weights are in the checkpoint)."""
    sources = [f"police arrested {i} men in the city of quake {i % 3}" for i in range(12)]
    targets = [" ".join(s.split()[k] for k in (0, 1, 3, 4)) for s in sources]
    vocab = Vocab.build(sources)
    pairs = Pairs([vocab.encode(s) for s in sources], [vocab.encode(t) for t in targets])
    config = ModelConfig(len(vocab), dropout=0.0, max_len=16, arch="naus-minilm", **minilm_shape(16))
    train(pairs, None, vocab, config, TrainConfig(max_steps=12, max_tokens=256, lr=5e-4, warmup=2, smoothing=0.0,
                                                  eval_every=4, checkpoint_every=100, device="cpu"), tmp_path)
    history = json.loads((tmp_path / "history.json").read_text())["history"]
    assert history[-1]["train_loss"] < history[0]["train_loss"]
    summarizer = Summarizer.from_checkpoint(tmp_path / "best.pt", "cpu")
    assert summarizer.model.config.d_model == 384
    for out in summarizer.summarize(sources[:3], length=4, method="length-control", raw=False):
        assert len(out.summary.split()) == 4 and not set(out.summary.split()) & set(SPECIALS)


def test_a_student_of_another_shape_is_refused_in_one_line():
    config = ModelConfig(len(WORDS), d_model=64, n_heads=4, n_layers=2, d_ff=128, max_len=32, arch="naus-minilm")
    with pytest.raises(NausError, match="minilm_shape"):
        start_from_minilm(build_model(config), WORDS)
