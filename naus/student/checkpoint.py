"""Checkpoints: what a trained student is on disk, written whole or not at all, read as data only.

A checkpoint holds the weights, the vocabulary and the model settings (enough to decode), and a
training run's last.pt also the optimizer, schedule, RNG states and provenance it resumes from.
It is read with `torch.load(weights_only=True)`: tensors and plain Python values, never code.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import torch

from naus import NausError
from naus.student.folder import BEST, HISTORY, LAST
from naus.architectures import ARCHITECTURES
from naus.plumbing.files import check_file
from naus.plumbing.outputs import atomic_open
from naus.plumbing.provenance import file_record
from naus.student.ensemble import Ensemble
from naus.student.model import ARCH_MARK, marked_arch
from naus.student.registry import build_model
from naus.settings import ModelConfig
from naus.student.vocab import Vocab

FORMAT = "naus-ctc-1"
RESUME = ("optimizer", "scheduler", "state", "rng")  # what last.pt holds beyond the weights


def _canonical(value):
    """`value` with every string interned: pickle writes a string once per object, so a state read back from a
    checkpoint (its own string objects) beside the code's literals would give other bytes than the same state
    never saved. Interned, equal strings are one object: a resumed run's checkpoint is an uninterrupted one's."""
    if isinstance(value, str):
        return sys.intern(value)
    if isinstance(value, dict):
        return {_canonical(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_canonical(v) for v in value)
    return value


def save_checkpoint(path: str | Path, payload: dict) -> None:
    """Written whole or not at all (a full disk leaves the previous checkpoint in place); the same payload gives
    the same bytes, however it was made (`_canonical`)."""
    try:
        with atomic_open(path, "wb") as handle:
            torch.save(_canonical(payload), handle)
    except RuntimeError as err:  # torch's zip writer reports a failed write (ENOSPC, EIO) this way
        raise NausError(f"{path}: could not write the checkpoint ({str(err).splitlines()[0]}); the previous one "
                        "is kept") from None


def load_checkpoint(path: str | Path, map_location: str | torch.device = "cpu", needs: tuple[str, ...] = ()) -> dict:
    """A checkpoint read as data only (`weights_only`: tensors and plain Python types, never code a
    crafted pickle could run), with the entries every use needs and the `needs` of this one."""
    path = check_file(path, "checkpoint")
    folder = path.parent
    if path.name == BEST and (folder / LAST).is_file() and not (folder / HISTORY).is_file():
        raise NausError(f"{path}: its training run has not finished (a {LAST} and no {HISTORY} beside "
                        "it: stopped, or still running); finish it (naus train --resume) or give another student")
    try:
        payload = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as err:  # torch raises many types for a damaged or foreign file
        raise NausError(f"{path}: not a readable checkpoint ({type(err).__name__}: "
                        f"{str(err).strip().splitlines()[-1][:200] if str(err).strip() else 'no detail'})") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise NausError(f"{path}: not a naus checkpoint (expected format {FORMAT})")
    for key in ("vocab", "model_config", "model", *needs):
        if key not in payload:
            raise NausError(f"{path}: checkpoint has no {key!r}" + (" (a weights-only checkpoint: train without "
                                                                   "--resume to start over)" if key in RESUME else ""))
    return payload


class _ShapesOnly(torch.overrides.TorchFunctionMode):
    """Building a model on the `meta` device for its shapes, skip `torch.nn.init`: on meta tensors its
    initialisers run through PyTorch's Python references, whose first call imports torch._dynamo (about a
    second of every decode and training process)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if getattr(func, "__module__", None) == "torch.nn.init":
            return args[0] if args else kwargs.get("tensor")
        return func(*args, **(kwargs or {}))


def model_from_checkpoint(payload: dict, path: str | Path = "checkpoint") -> tuple[torch.nn.Module, Vocab]:
    """The student a checkpoint holds, refused in one line when its settings are not this version's or its
    weights are not of the architecture its settings name."""
    if not isinstance(payload["vocab"], list) or not all(isinstance(token, str) for token in payload["vocab"]):
        raise NausError(f"{path}: its vocab is {type(payload['vocab']).__name__}, not a list of words")
    vocab = Vocab(payload["vocab"])
    settings = payload["model_config"]
    known = {spec.name for spec in dataclasses.fields(ModelConfig)}
    if not isinstance(settings, dict):
        raise NausError(f"{path}: model_config is not a mapping of settings")
    if set(settings) - known:
        raise NausError(f"{path}: model_config has settings this naus does not know: {sorted(set(settings) - known)} "
                        "(made by another version?)")
    try:
        config = ModelConfig(**settings)
    except (TypeError, NausError) as err:
        raise NausError(f"{path}: model_config: {err}") from None
    if config.vocab_size != len(vocab):
        raise NausError(f"{path}: model has {config.vocab_size} output words but the vocabulary has {len(vocab)}")
    weights = payload["model"]
    if isinstance(weights, list):  # a seed ensemble (naus.student.ensemble): its members' weights, one vocabulary
        if not weights or not getattr(ARCHITECTURES.get(config.arch), "ctc", False):
            raise NausError(f"{path}: an ensemble holds one or more CTC students' weights")
        return Ensemble([_student(config, member, f"{path} (member {i})") for i, member in enumerate(weights)]), vocab
    return _student(config, weights, path), vocab


def _student(config: ModelConfig, weights, path: str | Path) -> torch.nn.Module:
    """The student of `config` with `weights`, refused in one line when they are not of its architecture."""
    try:  # shapes only: a model_config the weights do not match allocates nothing
        with torch.device("meta"), _ShapesOnly():
            shapes = {name: tuple(t.shape) for name, t in build_model(config).state_dict().items()}
    except ValueError as err:
        raise NausError(f"{path}: {err}") from None
    mark = weights.get(ARCH_MARK) if isinstance(weights, dict) else None
    if not isinstance(mark, torch.Tensor) or mark.dtype != torch.uint8 or mark.dim() != 1:
        raise NausError(f"{path}: its weights name no architecture (made by an older naus?): train it again")
    if marked_arch(mark) != config.arch:
        raise NausError(f"{path}: weights of a {marked_arch(mark)!r} student, but its model_config says "
                        f"{config.arch!r}")
    found = {name: tuple(t.shape) for name, t in weights.items() if isinstance(t, torch.Tensor)}
    differ = next((name for name in sorted(set(shapes) | set(found)) if shapes.get(name) != found.get(name)), None)
    if differ:
        raise NausError(f"{path}: weights do not match the model configuration ({differ}: the configuration's "
                        f"{shapes.get(differ)}, the weights' {found.get(differ)})")
    model = build_model(config)
    try:
        model.load_state_dict(weights)
    except RuntimeError as err:
        raise NausError(f"{path}: weights do not match the model configuration ({str(err).splitlines()[0]})") from None
    return model


def save_ensemble(members: list[str | Path], out: str | Path) -> None:
    """One checkpoint of `members` (students' best.pt): refused unless they are CTC students of one architecture,
    one vocabulary and one model_config, as the seeds of one recipe are."""
    if not members:
        raise NausError("an ensemble needs at least one member")
    payloads = [load_checkpoint(path) for path in members]
    first = payloads[0]
    arch = first["model_config"].get("arch") if isinstance(first["model_config"], dict) else None
    if arch not in ARCHITECTURES or not ARCHITECTURES[arch].ctc:
        raise NausError(f"{members[0]}: an ensemble is of CTC students, not of {arch!r}")
    for path, payload in zip(members[1:], payloads[1:]):
        for key in ("model_config", "vocab"):
            if payload[key] != first[key]:
                raise NausError(f"{path}: its {key} is not {members[0]}'s: an ensemble's members are seeds of one "
                                "recipe")
        if isinstance(payload["model"], list):
            raise NausError(f"{path}: is an ensemble itself; give its members")
    save_checkpoint(out, {"format": FORMAT, "vocab": first["vocab"], "model_config": first["model_config"],
                          "model": [payload["model"] for payload in payloads],
                          "made_from": {"members": [file_record(path) for path in members]}})
