"""What the tests share besides fixtures: the repository's paths, a file writer, and a tiny headline
corpus for the KenLM models the tests train."""

import io
import random
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

    from naus import schema

    return schema.build(yaml.safe_load((ROOT / "workflow/schemas/config.schema.yaml").read_text()))


def resolved_config(*files: Path) -> dict:
    """A profile's configuration as the workflow resolves it (naus.schema.resolve): its files merged section by
    section first."""
    import yaml

    from naus import schema

    config = {}
    for path in files:
        for key, value in yaml.safe_load(Path(path).read_text()).items():
            config[key] = {**config.get(key, {}), **value} if isinstance(value, dict) else value
    return schema.resolve(config, yaml.safe_load((ROOT / "workflow/schemas/config.schema.yaml").read_text()))
