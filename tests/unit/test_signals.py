"""Stops (`naus.plumbing.signals` and the command line's handling): a SIGINT or SIGTERM ends any command in one line, in
its words, at any point, and leaves what it kept."""

import os
import signal
import subprocess
import sys
import time

import pytest
import torch

from naus.settings import ModelConfig
from naus.student.checkpoint import FORMAT, save_checkpoint
from naus.student.model import NAUS
from naus.student.vocab import Vocab
from tests.helpers import ROOT, run_cli, write


def test_after_a_stop_further_stops_are_ignored_while_the_process_exits(good, tmp_path, monkeypatch, capsys):
    """The exit handlers (torch's) run after `main` returns: a second Ctrl-C there would print their traceback."""
    import naus.commands.scoring

    def stopped(args):
        raise KeyboardInterrupt("SIGINT")

    monkeypatch.setattr(naus.commands.scoring, "head", stopped)
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        code, err = run_cli(["head", "--input", good["text"], "--lines", "1", "--out", tmp_path / "y"], capsys)
        assert code == 130 and "stopped by SIGINT" in err
        assert signal.getsignal(signal.SIGINT) == signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the callback's, as Python prints it
def test_a_stop_raised_inside_a_weakref_callback_still_stops_the_command(good, tmp_path, monkeypatch, capsys):
    """Python prints and drops an exception raised in a weakref callback (a report's matplotlib or pandas objects
    collected when SIGTERM came): the command still ends as stopped, not as done."""
    import weakref

    import naus.cli
    import naus.commands.scoring

    def collected_when_stopped(args):
        class Held:
            pass

        held = Held()
        ref = weakref.ref(held, lambda _: naus.cli._interrupt(signal.SIGTERM, None))  # noqa: F841 (kept alive)
        del held  # the callback runs here; its KeyboardInterrupt is printed and dropped

    monkeypatch.setattr(naus.commands.scoring, "head", collected_when_stopped)
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        code, err = run_cli(["head", "--input", good["text"], "--lines", "1", "--out", tmp_path / "y"], capsys)
        assert code == 128 + signal.SIGTERM and "stopped by SIGTERM" in err
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


def test_a_stop_is_one_line_in_the_words_of_the_command(tmp_path):
    """SIGTERM said that search records and a checkpoint were kept, of every command."""
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    stopped = subprocess.Popen([sys.executable, "-m", "naus", "head", "--input", fifo, "--lines", "1", "--out",
                                tmp_path / "o.txt"], cwd=ROOT, stderr=subprocess.PIPE, text=True)
    with open(fifo, "w") as writer:  # the command waits for lines that do not come
        writer.write("a b\n")
        writer.flush()
        time.sleep(3)
        stopped.send_signal(signal.SIGTERM)
        _, err = stopped.communicate(timeout=60)
    assert stopped.returncode == 143 and err.strip().splitlines() == [
        "naus: error: stopped by SIGTERM; no output was written (each is written whole or not at all): run the "
        "command again"], err
    assert not (tmp_path / "o.txt").exists()


def test_a_stop_raised_where_python_cannot_raise_it_is_said_once(capsys):
    from types import SimpleNamespace

    from naus.cli import _unraisable

    _unraisable(SimpleNamespace(exc_value=KeyboardInterrupt("SIGTERM"), exc_type=KeyboardInterrupt, err_msg=None,
                                exc_traceback=None, object=None))
    assert capsys.readouterr().err == ""


def test_a_decode_inside_a_long_compiled_kernel_ends_within_two_seconds_of_sigterm(tmp_path, env):
    """Length control over 600 slots with a beam of 128 keeps its kernel busy for seconds per sentence:
    a stop ends it within 2 s (the kernel polls the flag the signal sets), in one line, writing nothing."""
    import signal
    import subprocess
    import time

    from naus.decoding.summarizer import Summarizer
    from tests.helpers import ROOT

    words = [f"w{k}" for k in range(300)]
    lines = [" ".join(words[(k * 7 + j) % 300] for j in range(600)) for k in range(8)]
    source = write(tmp_path / "long.txt", "".join(line + "\n" for line in lines))
    vocab = Vocab.build(lines)
    config = ModelConfig(len(vocab), d_model=16, n_heads=2, n_layers=1, d_ff=32, dropout=0.0, max_len=640)
    torch.manual_seed(0)
    save_checkpoint(tmp_path / "best.pt", {"format": FORMAT, "vocab": vocab.tokens, "model_config": config.to_dict(),
                                           "model": NAUS(config).state_dict()})
    Summarizer.from_checkpoint(tmp_path / "best.pt").summarize(lines[:1], length=2)  # the kernel compiled and cached
    out = tmp_path / "out.txt"
    running = subprocess.Popen(["naus", "--threads", "1", "decode", "--checkpoint", tmp_path / "best.pt", "--input", source,
                                "--length", "300", "--beam-size", "128", "--out", out],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    while "decoding 8 sentences" not in (line := running.stderr.readline()) and line:
        pass
    time.sleep(1)  # inside the kernel's call over eight sentences of seconds each
    assert running.poll() is None, line + running.communicate()[1][-2000:]
    stopped = time.monotonic()
    running.send_signal(signal.SIGTERM)
    _, err = running.communicate(timeout=60)
    assert time.monotonic() - stopped < 2, f"ended {time.monotonic() - stopped:.1f} s after SIGTERM"
    assert running.returncode == 143 and err.strip().splitlines()[-1].startswith("naus: error: stopped by SIGTERM")
    assert "Traceback" not in err and not out.exists()
