"""What the tests share besides fixtures: the repository's paths, a file writer, and a tiny headline
corpus for the KenLM models the tests train."""

import io
import random
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent

HEADLINES = [
    "police arrest five protesters",
    "government closes schools as war escalates",
    "stocks close lower in tokyo",
    "president meets prime minister in paris",
    "police arrest protesters at nuclear plant",
    "japan and us agree on trade deal",
    "stocks rise on strong earnings",
    "prime minister says talks will go on",
]


def headline_corpus(lines: int = 400, seed: int = 0) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(HEADLINES) + "\n" for _ in range(lines))


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def command(cmd: list, cwd: Path, env: dict) -> tuple[int, str]:
    """A process's exit status and its output (stdout, then stderr)."""
    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    return result.returncode, result.stdout + result.stderr


def snakemake(args: list, env: dict, cwd: Path = ROOT, timeout: float = 600) -> tuple[int, str]:
    """`snakemake ARGS` as the venv's command runs it, in `cwd` with only `env`: its exit status and its output
    (stdout and stderr in one: Snakemake logs to either). The command's own code, `snakemake.cli.main`, in a process
    forked from this one, which imported it once: a new Snakemake process spends about 0.9 of its 1.4 s importing
    it (and every executor plugin it finds), dozens of times a suite."""
    import os
    import signal
    import tempfile
    import time

    import snakemake.cli

    with tempfile.TemporaryFile() as out:
        sys.stdout.flush()
        sys.stderr.flush()
        child = os.fork()
        if child == 0:  # nothing here may return into pytest: the child ends at os._exit, whatever happens
            code = 1
            try:
                os.chdir(cwd)
                os.environ.clear()
                os.environ.update(env)
                os.dup2(out.fileno(), 1)
                os.dup2(out.fileno(), 2)
                sys.stdout, sys.stderr = (open(fd, "w", closefd=False) for fd in (1, 2))  # noqa: SIM115
                sys.argv = ["snakemake", *map(str, args)]
                snakemake.cli.main(sys.argv[1:])
                code = 0
            except SystemExit as exit_:
                code = exit_.code if isinstance(exit_.code, int) else 0 if exit_.code is None else 1
            except BaseException:
                import traceback

                traceback.print_exc()
            finally:
                try:
                    sys.stdout.flush()
                    sys.stderr.flush()
                finally:
                    os._exit(code)
        deadline = time.monotonic() + timeout
        while (reaped := os.waitpid(child, os.WNOHANG))[0] == 0:
            if time.monotonic() > deadline:
                os.kill(child, signal.SIGKILL)
                os.waitpid(child, 0)
                raise subprocess.TimeoutExpired(["snakemake", *map(str, args)], timeout)
            time.sleep(0.02)
        out.seek(0)
        return os.waitstatus_to_exitcode(reaped[1]), out.read().decode(errors="replace")


def naus_main(argv: list, capsys, stdin: str | None = None) -> subprocess.CompletedProcess:
    """`naus ARGV` run in this process (on `stdin` if given), reported as `subprocess.run` reports a process
    (argparse's refusals exit 2): for a test of what a command does rather than of its process, which would pay
    a second of imports."""
    from naus.cli import main

    argv = [str(a) for a in argv]
    saved = sys.stdin
    if stdin is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8")
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = exit_.code
    finally:
        sys.stdin = saved
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(["naus", *argv], code, out, err)


def config_schema() -> dict:
    """The workflow's configuration schema as common.smk builds it: its file and naus.settings."""
    import yaml

    from naus.pipeline import schema

    return schema.build(yaml.safe_load(schema.SCHEMA_FILE.read_text()))


def resolved_config(*files: Path) -> dict:
    """A profile's configuration as the workflow resolves it (naus.pipeline.schema.resolve): its files merged section by
    section first."""
    import yaml

    from naus.pipeline import schema

    config = {}
    for path in files:
        for key, value in yaml.safe_load(Path(path).read_text()).items():
            config[key] = {**config.get(key, {}), **value} if isinstance(value, dict) else value
    return schema.resolve(config, yaml.safe_load(schema.SCHEMA_FILE.read_text()))


def as_interrupted(out: Path, records: str) -> None:
    """A finished search's `out` as an interrupted run would have left it: `records` in its partial file, beside the
    partial's provenance (the finished output's)."""
    write(Path(f"{out}.partial"), records)
    shutil.copyfile(f"{out}.provenance.json", f"{out}.partial.provenance.json")


def released(monkeypatch, **digests: str) -> None:
    """Fixture peers' released files (`naus.data.peers.Peer.files`: source `fixture`, by name) with these
    sha256s, as the data manifest would hold them."""
    import naus.data.peers
    from naus.data.manifest import RawFile

    monkeypatch.setattr(naus.data.peers, "raw_file", lambda source, path: RawFile(source, path, None,
                                                                                        digests[path], 1))


def decode_argv(good, out, *extra) -> list[str]:
    """`naus decode` of the `good` fixture's two lines with its untrained student, into `out`."""
    return ["decode", "--checkpoint", str(good["checkpoint"]), "--input", str(good["text"]), "--length", "2",
            "--out", str(out), *map(str, extra)]


# Control and format characters raw text may hold, none of which may reach a summary or a terminal.
HOSTILE_CHARACTERS = {"NUL": "\x00", "bell": "\x07", "escape": "\x1b[2J", "DEL": "\x7f", "C1 CSI": "\x9b",
                      "carriage return": "\r", "right-to-left override": "\u202e", "left-to-right isolate": "\u2066",
                      "zero-width space": "\u200b", "zero-width joiner": "\u200d", "byte order mark": "\ufeff",
                      "soft hyphen": "\u00ad", "tag": "\U000e0041"}


def shown(text: str) -> bool:
    """Whether every character of `text` is shown as itself: no control or format character."""
    import unicodedata

    return not any(unicodedata.category(ch) in ("Cc", "Cf") for ch in text)


SENTENCE = "Police arrested five protesters in Paris on Monday after talks"


def run_cli(argv: list[str], capsys) -> tuple[int, str]:
    """Exit code and stderr of `naus ARGV`, in this process."""
    result = naus_main(argv, capsys)
    return result.returncode, result.stderr


TEXT = ["police arrest five protesters in paris", "stocks close lower"]  # what the `checkpoints` fixture's students know


def save_student(path, vocab, settings, weights):
    """A student's checkpoint of these parts, as `naus train` writes one."""
    from naus.student.checkpoint import FORMAT, save_checkpoint

    save_checkpoint(path, {"format": FORMAT, "vocab": vocab.tokens, "model_config": settings, "model": weights})
    return path
