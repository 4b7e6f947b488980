"""A smaller MiniLM under the students, distilled once per build: three of MiniLM's six layers (the first, the
middle and the last) with their feed-forward blocks cut to the 768 of 1,536 units that carry the most, trained to
give the whole model's last states to the pool's sources (no title reaches it). MiniLM's embeddings stay as they
are, so a file holds its three layers alone (7.1 MB as fp16). On gigaword-sample its states cost 0.37 of MiniLM's
CPU time; its first-generation students score as MiniLM's on dev at L = 10 (+0.06, six seeds) and 0.56 lower at
L = 8 (sixteen seeds; results/benchmarks/student_distilled_pipeline*.json): an option, not the profiles' default.

`naus distil` writes one; `naus encode-states --encoder` and `naus summarize --encoder` compute states with it, and
a student records which encoder's states it learned on (`ModelConfig.states_encoder`).
"""

from __future__ import annotations

import copy
import json
import logging
import random
import statistics
import time
from pathlib import Path

from naus import NausError
from naus.plumbing.outputs import atomic_open

log = logging.getLogger(__name__)
LAYERS_FROM = (0, 2, 5)  # which of MiniLM's layers the distilled ones start from
FFN = 768  # the distilled layers' feed-forward width (MiniLM's: 1,536)
EPOCHS = 4
LR = 1e-4


def fit(model, trained: list, batches: list, targets: list, epochs: int, lr: float) -> list[float]:
    """AdamW (no weight decay) on the `trained` tensors, drawing `model`'s states of each batch to its targets by
    mean squared error, the batches in a seeded order each epoch; each step's loss."""
    import torch

    from naus.plumbing.progress import Progress

    optimizer = torch.optim.AdamW(trained, lr=lr, weight_decay=0.0)
    order, rng, losses = list(range(len(batches))), random.Random(0), []
    meter = Progress("distillation", epochs * len(batches), "steps", log)
    for epoch in range(epochs):
        rng.shuffle(order)
        for b in order:
            loss = torch.nn.functional.mse_loss(model(batches[b]), targets[b])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            meter.update(1)
        log.info("epoch %d of %d: mean squared error %.5f", epoch + 1, epochs, statistics.mean(losses[-len(batches):]))
    return losses


def narrower(weights: dict, layer: int, ffn: int) -> dict:
    """A layer's feed-forward block cut to the `ffn` inner units that carry the most (the product of their input and
    output weights' norms), in their order."""
    inner, outer = f"encoder.layer.{layer}.intermediate.dense", f"encoder.layer.{layer}.output.dense.weight"
    carried = weights[f"{inner}.weight"].norm(dim=1) * weights[outer].norm(dim=0)
    keep = carried.topk(ffn).indices.sort().values
    return {f"{inner}.weight": weights[f"{inner}.weight"][keep], f"{inner}.bias": weights[f"{inner}.bias"][keep],
            outer: weights[outer][:, keep]}


def distil(sentences: list[str], out: str | Path, layers_from: tuple[int, ...] = LAYERS_FROM, ffn: int = FFN,
           epochs: int = EPOCHS, lr: float = LR) -> dict:
    """Train the layers on `sentences` (one seed; batches of one piece count, as states are computed) to give
    MiniLM's last states, and write them as fp16 to `out`; returns what was done. On one thread: a backward pass's
    sums split over threads differ in their last bits, and the file is to be the same bytes on any machine."""
    import torch

    if not sentences:
        raise NausError("nothing to distil on: no sentences")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _distil(sentences, out, layers_from, ffn, epochs, lr)
    finally:
        torch.set_num_threads(threads)


def _distil(sentences: list[str], out: str | Path, layers_from: tuple[int, ...], ffn: int, epochs: int,
            lr: float) -> dict:
    import torch
    from safetensors.torch import save

    from naus.student.frozen import KIND, Encoder, piece_batches

    torch.manual_seed(0)
    teacher = Encoder()
    whole = teacher.model
    if not 0 < ffn <= whole.w["encoder.layer.0.intermediate.dense.weight"].shape[0]:
        raise NausError(f"a feed-forward width of {ffn}: MiniLM's is at most "
                        f"{whole.w['encoder.layer.0.intermediate.dense.weight'].shape[0]}")
    if not layers_from or any(not 0 <= i < whole.layers for i in layers_from):
        raise NausError(f"layers {list(layers_from)}: MiniLM's are 0 to {whole.layers - 1}")
    encoded = teacher.tokenizer.encode_batch([s.split() for s in sentences], is_pretokenized=True)
    batches = [torch.tensor([encoded[i].ids for i in rows]) for rows in piece_batches(encoded)]
    with torch.no_grad():  # not inference mode: its tensors cannot enter the loss's graph
        targets = [whole(ids) for ids in batches]
    weights = {}
    for new, old in enumerate(layers_from):
        prefix = f"encoder.layer.{old}."
        weights |= {f"encoder.layer.{new}.{name[len(prefix):]}": value for name, value in whole.w.items()
                    if name.startswith(prefix)}
        weights |= narrower(weights, new, ffn)
    weights = {name: value.clone().requires_grad_() for name, value in weights.items()}
    student = copy.copy(whole)  # MiniLM's embeddings under the layers being trained
    student.w, student.layers = {**whole.w, **weights}, len(layers_from)
    tick = time.process_time()
    losses = fit(student, list(weights.values()), batches, targets, epochs, lr)
    record = {"kind": KIND, "layers_from": ",".join(map(str, layers_from)), "ffn": str(ffn), "epochs": str(epochs),
              "lr": str(lr), "sentences": str(len(sentences)),
              "last_epoch_mse": f"{statistics.mean(losses[-len(batches):]):.5f}",
              "cpu_seconds": f"{time.process_time() - tick:.1f}"}
    kept = json.dumps({k: v for k, v in record.items() if k != "cpu_seconds"}, sort_keys=True)
    blob = save({name: value.detach().half().contiguous() for name, value in weights.items()}, metadata={"naus": kept})
    with atomic_open(out, "wb") as handle:
        handle.write(blob)
    return record
