import itertools
import json
import math
import subprocess
from pathlib import Path

import pytest
import torch

from naus import NausError
from naus.cli import PORTABLE_KERNELS
from naus.decoding import greedy_batch, reduce_path
from naus.plumbing.files import sha256sum
from naus.settings import ModelConfig, TrainConfig
from naus.student.checkpoint import load_checkpoint, model_from_checkpoint, save_checkpoint
from naus.student.model import NAUS, ctc_loss
from naus.student.train import Pairs, collate, train
from naus.student.vocab import Vocab
from tests.helpers import SENTENCE, naus_main, write


def brute_force_ctc(lp, target):
    """−log Σ over all paths w with Γ(w) = target of Π_s p(w_s)."""
    total = -math.inf
    for path in itertools.product(range(lp.shape[1]), repeat=lp.shape[0]):
        if reduce_path(list(path)) == target:
            total = torch.logaddexp(torch.tensor(total), lp[range(lp.shape[0]), list(path)].sum()).item()
    return -total


@pytest.mark.parametrize("target", [[1], [2, 1], [1, 1], [2, 3, 2], [3, 3, 1]])
def test_ctc_loss_equals_brute_force_sum_over_alignments(target):
    gen = torch.Generator().manual_seed(len(target) * 7 + target[0])
    lp = torch.randn(1, 5, 4, generator=gen, dtype=torch.float64).log_softmax(-1)
    loss, used, skipped = ctc_loss(lp, torch.tensor([5]), [target], blank=0, smoothing=0.0)
    assert (used, skipped) == (1, 0)
    assert float(loss) * len(target) == pytest.approx(brute_force_ctc(lp[0], target), rel=1e-6)


def test_label_smoothing_mixes_in_the_uniform_term():
    lp = torch.randn(2, 4, 6, dtype=torch.float64).log_softmax(-1)
    lengths = torch.tensor([4, 3])
    plain, _, _ = ctc_loss(lp, lengths, [[1, 2], [3]], smoothing=0.0)
    smoothed, _, _ = ctc_loss(lp, lengths, [[1, 2], [3]], smoothing=0.1)
    uniform = -(lp[0].mean(-1).sum() + lp[1, :3].mean(-1).sum()) / 7
    assert float(smoothed) == pytest.approx(0.9 * float(plain) + 0.1 * float(uniform))


def test_unalignable_pair_is_skipped_and_counted():
    lp = torch.randn(3, 4, 6).log_softmax(-1)
    lengths = torch.tensor([4, 2, 4])
    # [5, 5, 5] needs 5 slots (two blanks between repeats); [1, 2, 3] does not fit 2 slots
    loss, used, skipped = ctc_loss(lp, lengths, [[1, 2], [1, 2, 3], [5, 5, 5]])
    assert (used, skipped) == (1, 2) and math.isfinite(float(loss))
    loss, used, skipped = ctc_loss(lp[1:2], lengths[1:2], [[1, 2, 3]])
    assert (used, skipped) == (0, 1) and float(loss) == 0.0


SOURCES = [f"w{i} w{i + 1} filler{i % 3} w{i + 2} extra{i % 4} w{i + 3}" for i in range(20)]
TARGETS = [" ".join(s.split()[k] for k in (0, 1, 3, 5)) for s in SOURCES]


def tiny(tmp_path):
    vocab = Vocab.build(SOURCES)
    pairs = Pairs([vocab.encode(s) for s in SOURCES], [vocab.encode(t) for t in TARGETS])
    model_config = ModelConfig(len(vocab), d_model=64, n_heads=4, n_layers=2, d_ff=128, dropout=0.0, max_len=32)
    return vocab, pairs, model_config


def test_tiny_model_overfits_twenty_pairs(tmp_path):
    vocab, pairs, model_config = tiny(tmp_path)
    config = TrainConfig(max_steps=150, max_tokens=512, lr=3e-3, warmup=30, smoothing=0.0,  # overfits by 100
                         checkpoint_every=1000, eval_every=100, device="cpu")
    train(pairs, pairs, vocab, model_config, config, tmp_path)
    model, vocab2 = model_from_checkpoint(load_checkpoint(tmp_path / "best.pt"))
    model.eval()
    tokens, lengths, _, _ = collate(pairs, list(range(20)), vocab.pad, torch.device("cpu"))
    with torch.no_grad():
        hyps = greedy_batch(model(tokens, lengths), lengths, vocab.blank)
    assert [vocab2.decode(h.tokens) for h in hyps] == TARGETS


def test_resume_gives_the_same_weights_as_an_uninterrupted_run(tmp_path):
    vocab, pairs, model_config = tiny(tmp_path)
    model_config.dropout = 0.1  # resuming must restore the RNG too
    common = dict(max_tokens=64, lr=1e-3, warmup=5, checkpoint_every=7, eval_every=7, device="cpu", seed=3)
    train(pairs, None, vocab, model_config, TrainConfig(max_steps=20, **common), tmp_path / "whole")
    train(pairs, None, vocab, model_config, TrainConfig(max_steps=7, **common), tmp_path / "split")
    killed = [write(tmp_path / "split" / f".{name}.k1ll3d.tmp", "half a checkpoint") for name in ("last.pt", "best.pt")]
    train(pairs, None, vocab, model_config, TrainConfig(max_steps=20, **common), tmp_path / "split", resume=True)
    assert not any(path.exists() for path in killed), "the temporaries of a killed run are removed on resume"
    whole = load_checkpoint(tmp_path / "whole" / "last.pt")["model"]
    split = load_checkpoint(tmp_path / "split" / "last.pt")["model"]
    for name in whole:
        assert torch.equal(whole[name], split[name]), name
    for name in ("last.pt", "best.pt"):  # the history's training losses too: the same bytes
        assert sha256sum(tmp_path / "whole" / name) == sha256sum(tmp_path / "split" / name), name


def test_corrupt_or_mismatched_checkpoint(tmp_path):
    with pytest.raises(NausError, match="checkpoint not found"):
        load_checkpoint(tmp_path / "missing.pt")
    with pytest.raises(NausError, match="not a readable checkpoint"):
        load_checkpoint(write(tmp_path / "junk.pt", b"\x00garbage"))
    torch.save({"something": 1}, tmp_path / "other.pt")
    with pytest.raises(NausError, match="not a naus checkpoint"):
        load_checkpoint(tmp_path / "other.pt")
    vocab, _, model_config = tiny(tmp_path)
    payload = {"format": "naus-ctc-1", "vocab": vocab.tokens[:-1], "model_config": model_config.to_dict(),
               "model": NAUS(model_config).state_dict()}
    save_checkpoint(tmp_path / "bad.pt", payload)
    with pytest.raises(NausError, match="output words but the vocabulary has"):
        model_from_checkpoint(load_checkpoint(tmp_path / "bad.pt"), tmp_path / "bad.pt")
    payload["vocab"] = vocab.tokens
    payload["model_config"] = {**model_config.to_dict(), "d_model": 32, "n_heads": 4}
    save_checkpoint(tmp_path / "bad2.pt", payload)
    with pytest.raises(NausError, match="weights do not match"):
        model_from_checkpoint(load_checkpoint(tmp_path / "bad2.pt"))


def test_vocabulary_starts_with_blank_and_respects_min_count():
    vocab = Vocab.build(["a a b", "a c"], min_count=2)
    assert vocab.tokens == ["<blank>", "<pad>", "<unk>", "a"] and vocab.blank == 0
    assert vocab.encode("a zzz") == [3, vocab.unk]


def test_resuming_with_other_data_or_settings_refuses_and_leaves_the_directory_as_it_was(tmp_path):
    vocab, pairs, model_config = tiny(tmp_path)
    config = TrainConfig(max_steps=4, max_tokens=64, warmup=2, checkpoint_every=2, eval_every=2, device="cpu")
    train(pairs, None, vocab, model_config, config, tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    bigger = ModelConfig(**{**model_config.to_dict(), "d_model": 32, "n_heads": 2})
    with pytest.raises(NausError, match=r"last.pt: made with model.d_model = 64, now model.d_model = 32; "
                                        r"train with --restart \(it is set aside\), without --resume"):
        train(pairs, None, vocab, bigger, config, tmp_path, resume=True)
    with pytest.raises(NausError, match="made with pairs = '[0-9a-f]{16}', now pairs = '[0-9a-f]{16}'"):
        train(Pairs(pairs.sources[:10], pairs.targets[:10]), None, vocab, model_config, config, tmp_path, resume=True)
    other = Vocab.build(SOURCES[:10])
    with pytest.raises(NausError, match="made with model.vocab_size = 33, now model.vocab_size = 23"):
        train(pairs, None, other, ModelConfig(**{**model_config.to_dict(), "vocab_size": len(other)}), config,
              tmp_path, resume=True)
    with pytest.raises(NausError, match="made with train.lr = 0.0005, now train.lr = 0.001"):
        train(pairs, None, vocab, model_config, TrainConfig(**{**config.__dict__, "lr": 1e-3}), tmp_path, resume=True)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    longer = TrainConfig(**{**config.__dict__, "max_steps": 6, "eval_every": 3})  # a longer budget may resume
    assert train(pairs, None, vocab, model_config, longer, tmp_path, resume=True)["step"] == 6


def test_a_changed_setting_with_restart_sets_the_old_run_aside_and_trains_what_a_fresh_run_trains(tmp_path):
    vocab, pairs, model_config = tiny(tmp_path)
    config = TrainConfig(max_steps=4, max_tokens=64, warmup=2, checkpoint_every=2, eval_every=2, device="cpu")
    train(pairs, None, vocab, model_config, config, tmp_path / "run")
    old_last = (tmp_path / "run" / "last.pt").read_bytes()
    other = TrainConfig(**{**config.__dict__, "lr": 1e-3})
    train(pairs, None, vocab, model_config, other, tmp_path / "run", resume=True, restart=True)
    train(pairs, None, vocab, model_config, other, tmp_path / "fresh")
    assert (tmp_path / "run" / "last.stale.pt").read_bytes() == old_last
    for name in ("best.pt", "last.pt", "vocab.txt"):
        assert (tmp_path / "run" / name).read_bytes() == (tmp_path / "fresh" / name).read_bytes(), name
    same = train(pairs, None, vocab, model_config, TrainConfig(**{**other.__dict__, "max_steps": 6}), tmp_path / "run",
                 resume=True, restart=True)  # the same settings resume, --restart or not
    assert same["step"] == 6 and (tmp_path / "run" / "last.stale.pt").read_bytes() == old_last


def test_early_stopping_on_the_dev_loss_stops_resumes_and_can_be_extended(tmp_path, monkeypatch):
    import naus.student.train as training

    dev = [2.0, 2.5, 2.4, 2.6, 1.0, 3.0, 3.0, 3.0, 3.0]  # the dev loss at each evaluation
    losses = iter(dev)
    monkeypatch.setattr(training, "dev_loss", lambda *args: next(losses))
    vocab, pairs, model_config = tiny(tmp_path)
    config = TrainConfig(max_steps=40, max_tokens=64, warmup=2, checkpoint_every=100, eval_every=2, patience=2,
                         device="cpu")
    state = train(pairs, pairs, vocab, model_config, config, tmp_path)
    assert state["step"] == 6 and [e["dev_loss"] for e in state["history"]] == [2.0, 2.5, 2.4]
    assert load_checkpoint(tmp_path / "last.pt")["state"]["step"] == 6  # saved where it stopped
    assert train(pairs, pairs, vocab, model_config, config, tmp_path, resume=True)["step"] == 6
    patient = TrainConfig(**{**config.__dict__, "patience": 4})  # more patience resumes the run
    state = train(pairs, pairs, vocab, model_config, patient, tmp_path, resume=True)
    assert [e["dev_loss"] for e in state["history"]] == dev  # four evaluations past the best at step 10
    assert state["step"] == 18 and state["best_dev"] == 1.0


def test_a_second_training_into_one_directory_is_refused(tmp_path):
    from naus.plumbing.outputs import OutputLock

    vocab, pairs, model_config = tiny(tmp_path)
    with OutputLock(tmp_path / "run"):
        with pytest.raises(NausError, match="run: being written by process"):
            train(pairs, None, vocab, model_config, TrainConfig(max_steps=2, device="cpu"), tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_pairs_are_held_compactly_and_read_back_as_they_were():
    from naus.student.train import Ragged

    rows = [[5, 6], [], [7, 8, 9], [1]]
    ragged = Ragged(rows)
    assert list(ragged) == rows and ragged[-1] == [1] and ragged.lengths() == [2, 0, 3, 1]
    assert list(ragged[1:3]) == rows[1:3] and list(ragged[:0]) == []
    with pytest.raises(IndexError):
        ragged[4]
    pairs = Pairs([[1, 2], [3]], [[4], [5]])
    assert pairs.fingerprint() == Pairs([[1, 2], [3]], [[4], [5]]).fingerprint()
    assert pairs.fingerprint() != Pairs([[1], [2, 3]], [[4], [5]]).fingerprint()  # the same ids, other boundaries
    assert len(pairs.head(0.5)) == 1 and len(pairs.head(0.01)) == 1


def test_a_last_checkpoint_without_the_architecture_mark_is_refused_as_a_best_one_is(tmp_path):
    """One rule for checkpoints made before the architecture mark: resuming from such a last.pt is refused in
    one line naming it (as decoding such a best.pt is), and it is left as it was."""
    from naus import NausError
    from naus.student.checkpoint import save_checkpoint
    from naus.student.model import ARCH_MARK

    vocab, pairs, model_config = tiny(tmp_path)
    common = dict(max_tokens=64, lr=1e-3, warmup=5, checkpoint_every=7, eval_every=7, device="cpu", seed=3)
    train(pairs, None, vocab, model_config, TrainConfig(max_steps=7, **common), tmp_path / "old")
    payload = load_checkpoint(tmp_path / "old" / "last.pt")
    del payload["model"][ARCH_MARK]
    save_checkpoint(tmp_path / "old" / "last.pt", payload)
    before = (tmp_path / "old" / "last.pt").read_bytes()
    with pytest.raises(NausError, match=r"last\.pt: weights do not match the model .*train without --resume") as err:
        train(pairs, None, vocab, model_config, TrainConfig(max_steps=14, **common), tmp_path / "old", resume=True)
    assert "\n" not in str(err.value) and (tmp_path / "old" / "last.pt").read_bytes() == before


PINS = tuple(variable for variable, _ in PORTABLE_KERNELS)


def test_the_command_line_trains_with_the_avx2_kernels_on_any_x86_cpu(tmp_path, env):
    """`naus` pins torch, oneDNN and MKL to their AVX2 kernels, so a student is the same on an AVX2 and an AVX-512
    machine: a run equals one with AVX2 asked for explicitly, and, where the CPU has AVX-512, differs from one
    with AVX-512 asked for (which is what an unpinned run on that CPU would be)."""
    import platform
    import subprocess

    from tests.helpers import ROOT, write

    if platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip("the pin is for x86-64 CPUs")
    source = write(tmp_path / "source.txt", "".join(s + "\n" for s in SOURCES))
    target = write(tmp_path / "target.txt", "".join(t + "\n" for t in TARGETS))

    def start(name: str, **isa: str) -> tuple[str, dict, subprocess.Popen]:
        command = ["naus", "--threads", "1", "train", "--train-source", source, "--train-target", target, "--d-model", "64",
                   "--n-heads", "4", "--n-layers", "2", "--d-ff", "128", "--max-len", "32", "--max-steps", "10",
                   "--max-tokens", "128", "--warmup", "5", "--lr", "3e-3", "--out", tmp_path / name]
        return name, isa, subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                                           env={k: v for k, v in env.items() if k not in PINS} | isa)

    def weights(name: str, isa: dict, process: subprocess.Popen) -> dict:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err[-2000:]
        if "MKL_VERBOSE" in isa:  # MKL in its reproducible mode (CNR), never the CPU's own pick (CNR:OFF)
            assert "CNR:" in out and "CNR:OFF" not in out, out[-500:]
        return load_checkpoint(tmp_path / name / "best.pt")["model"]

    # the runs side by side (one thread each): each is mostly torch's start-up
    runs = [start("pinned", MKL_VERBOSE="1"),
            start("avx2", ATEN_CPU_CAPABILITY="avx2", ONEDNN_MAX_CPU_ISA="AVX2", MKL_CBWR="AVX2")]
    if "avx512f" in open("/proc/cpuinfo").read():
        # MKL_CBWR empty: MKL picks its kernels by CPU, as without the pin
        runs.append(start("avx512", ATEN_CPU_CAPABILITY="avx512", ONEDNN_MAX_CPU_ISA="AVX512_CORE", MKL_CBWR=""))
    pinned, avx2, *wide = [weights(*run) for run in runs]
    assert all(torch.equal(pinned[k], avx2[k]) for k in pinned)
    assert not any(all(torch.equal(pinned[k], other[k]) for k in pinned) for other in wide)


def test_a_short_run_warms_up_within_itself_and_learns(tmp_path):
    """Helps and defaults a newcomer trusts (issue 119): `TrainConfig(max_steps=20)`, the README's example, warms up
    for a tenth of its run (the paper's ratio), not the paper's 10,000 steps (a learning rate of 1e-6 that learned
    nothing), so its loss falls; a warm-up longer than the run is refused, naming both."""
    from naus import SettingError

    vocab, pairs, model_config = tiny(tmp_path)
    config = TrainConfig(max_steps=20, max_tokens=512, checkpoint_every=1000, eval_every=10, device="cpu")
    assert config.warmup is None and config.warmup_steps == 2
    train(pairs, pairs, vocab, model_config, config, tmp_path)
    history = json.loads((tmp_path / "history.json").read_text())["history"]
    assert history[-1]["dev_loss"] < 0.8 * history[0]["dev_loss"], history
    with pytest.raises(SettingError, match="warmup 10000 is longer than the run \\(max_steps 20\\)"):
        TrainConfig(max_steps=20, warmup=10_000)

# -- hostile and careless input (the review rounds): each test names the input it spoils and what it did before --

def _train(folder: Path, capsys) -> subprocess.CompletedProcess:
    source = write(folder / "s.txt", "police arrest five protesters\nstocks fall in tokyo\n" * 4)
    target = write(folder / "t.txt", "police arrest\nstocks fall\n" * 4)
    return naus_main(["train", "--train-source", source, "--train-target", target, "--d-model", "16", "--n-heads", "2",
                      "--d-ff", "32", "--max-steps", "2", "--out", folder / "run"], capsys)


def test_a_training_run_stopped_before_its_end_leaves_a_student_every_reader_refuses(tmp_path, capsys, monkeypatch):
    import naus.student.train as training

    assert _train(tmp_path, capsys).returncode == 0
    run = tmp_path / "run"

    def stopped(path, obj):
        raise KeyboardInterrupt("SIGTERM")

    monkeypatch.setattr(training, "write_json", stopped)  # a new run into the finished folder, stopped at its end
    assert _train(tmp_path, capsys).returncode == 143
    monkeypatch.undo()
    assert (run / "best.pt").is_file() and not (run / "history.json").exists()
    for command in (["summarize", "--checkpoint", run, "--input", write(tmp_path / "in.txt", SENTENCE + "\n")],
                    ["ensemble", "--members", run / "best.pt", "--out", tmp_path / "e.pt"]):
        result = naus_main(command, capsys)
        assert result.returncode == 2 and "its training run has not finished" in result.stderr, result.stderr
