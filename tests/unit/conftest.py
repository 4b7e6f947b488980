"""Fixtures the unit tests share: a tiny student's checkpoints and inputs."""

import pytest
import torch

from naus.settings import ModelConfig
from naus.student.checkpoint import FORMAT, save_checkpoint
from naus.student.model import NAUS, ARStudent
from naus.student.vocab import Vocab
from tests.helpers import TEXT, save_student, write


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    """Valid inputs for every argument, so that each case spoils exactly one."""
    root = tmp_path_factory.mktemp("good")
    text = write(root / "text.txt", "police arrest five protesters in paris\nstocks close lower\n")
    vocab = Vocab.build(["police arrest five protesters in paris", "stocks close lower"])
    config = ModelConfig(len(vocab), d_model=16, n_heads=2, n_layers=1, d_ff=32, dropout=0.0, max_len=32)
    torch.manual_seed(0)
    checkpoint = root / "best.pt"
    save_checkpoint(checkpoint, {"format": FORMAT, "vocab": vocab.tokens, "model_config": config.to_dict(),
                                 "model": NAUS(config).state_dict()})
    return {"text": text, "checkpoint": checkpoint, "index": write(root / "index.txt", "1\n0\n")}


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """A NAUS and an AR student, untrained (what they say does not matter here, only that they load)."""
    root = tmp_path_factory.mktemp("bounds")
    vocab = Vocab.build(TEXT)
    paths = {}
    for arch, model in (("naus", NAUS), ("ar", ARStudent)):
        config = ModelConfig(len(vocab), d_model=16, n_heads=2, n_layers=1, d_ff=32, dropout=0.0, max_len=32, arch=arch)
        torch.manual_seed(0)
        paths[arch] = save_student(root / f"{arch}.pt", vocab, config.to_dict(), model(config).state_dict())
    return paths
