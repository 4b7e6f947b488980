"""One network class per architecture (`naus.architectures`): what a checkpoint's settings build."""

from __future__ import annotations

from torch import nn

from naus.settings import ModelConfig
from naus.student.copy_head import CopyAR, CopyNAR, CopyNARCTC, CopyNAUS
from naus.student.model import NAUS, ARStudent, MiniLMNAUS, NARCTCStudent, NARStudent

MODELS = {"naus": NAUS, "ar": ARStudent, "nar": NARStudent, "nar-ctc": NARCTCStudent, "naus-minilm": MiniLMNAUS,
          "naus-copy": CopyNAUS, "nar-ctc-copy": CopyNARCTC, "ar-copy": CopyAR, "nar-copy": CopyNAR}


def build_model(config: ModelConfig) -> nn.Module:
    if config.arch not in MODELS:
        raise ValueError(f"unknown architecture {config.arch!r}; expected one of {sorted(MODELS)}")
    return MODELS[config.arch](config)
