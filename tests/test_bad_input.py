"""Every `naus` subcommand on careless input: a missing file, a directory, an empty file, bytes
that are not UTF-8, and an output path that is a directory. Each ends in a one-line
`naus: error:` naming the file (exit 2, nothing written) or a correct result — never a traceback."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
import torch

from naus.cli import main
from naus.model import NAUS
from naus.settings import ModelConfig
from naus.train import FORMAT, save_checkpoint
from naus.vocab import Vocab
from tests.conftest import write

REPORT_CONFIG = ('{"profile": "p", "search": {"lengths": [10]}, "train": {"fractions": []}, '
                 '"decode": {"beam_sweep": [], "transfer": []}, "analysis": {"lengths": []}}')
BAD = {
    "missing": lambda path: path,
    "directory": lambda path: path.mkdir(parents=True) or path,
    "empty": lambda path: write(path, ""),
    "not-utf8": lambda path: write(path, b"police arrest \xff\xfe five\n"),
}


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


def commands(g: dict, out) -> dict[str, list[str]]:
    """One call per subcommand that reads a file; `{bad}` marks the argument a case spoils."""
    text, ckpt = str(g["text"]), str(g["checkpoint"])
    return {
        "data-gigaword": ["data", "gigaword", "--pool-article", "{bad}", "--pool-title", text, "--test-article", text,
                          "--test-title", text, "--out", out("corpus")],
        "train-lm": ["train-lm", "--corpus", "{bad}", "--out", out("lm.bin")],
        "search": ["search", "--input", text, "--lm", "{bad}", "--length", "3", "--rerank-k", "0",
                   "--out", out("search.jsonl")],
        "search-input": ["search", "--input", "{bad}", "--lm", "{bad}", "--length", "3", "--rerank-k", "0",
                         "--out", out("search.jsonl")],
        "merge": ["merge", "{bad}", "--out", out("merged.jsonl"), "--text", out("merged.txt")],
        "train": ["train", "--train-source", "{bad}", "--train-target", text, "--n-layers", "1", "--d-model", "16",
                  "--n-heads", "2", "--d-ff", "32", "--max-steps", "1", "--out", out("train")],
        "train-dev": ["train", "--train-source", text, "--train-target", text, "--dev-source", "{bad}",
                      "--dev-target", text, "--n-layers", "1", "--d-model", "16", "--n-heads", "2", "--d-ff", "32",
                      "--max-steps", "1", "--out", out("train")],
        "decode-checkpoint": ["decode", "--checkpoint", "{bad}", "--input", text, "--out", out("decoded.txt")],
        "decode-input": ["decode", "--checkpoint", ckpt, "--input", "{bad}", "--length", "2",
                         "--out", out("decoded.txt")],
        "summarize": ["summarize", "--checkpoint", ckpt, "--input", "{bad}", "--length", "2",
                      "--out", out("summaries.txt")],
        "evaluate": ["evaluate", "--hyp", "{bad}", "--ref", text, "--out", out("scores.json")],
        "evaluate-ref": ["evaluate", "--hyp", text, "--ref", "{bad}", "--out", out("scores.json")],
        "reorder": ["reorder", "--input", text, "--index", "{bad}", "--out", out("ordered.txt")],
        "digits": ["digits", "--input", text, "--restore-from", "{bad}", "--out", out("restored.txt")],
        "head": ["head", "--input", "{bad}", "--lines", "1", "--out", out("head.txt")],
        "lead": ["lead", "--input", "{bad}", "--length", "2", "--out", out("lead.txt")],
        "report-metrics": ["report", "--config", REPORT_CONFIG, "--metrics", "{bad}", "--build", str(g["text"].parent),
                           "--out", out("results")],
        "embed-static": ["embed-static", "--inputs", "{bad}", "--idf-corpus", text, "--out", out("static.npz")],
    }


def run_cli(argv: list[str], capsys) -> tuple[int, str]:
    """Exit code and stderr of `naus ARGV`, in this process (argparse's refusals exit 2)."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exit_:
        code = exit_.code
    return code, capsys.readouterr().err


def assert_clean_failure_or_success(code: int, err: str, out_dir, what: str) -> None:
    assert "Traceback" not in err, f"{what}: {err}"
    assert code in (0, 2), f"{what}: exit {code}"
    if code == 2:
        assert err.strip().splitlines()[-1].startswith("naus: error: "), f"{what}: {err}"
        assert not any(out_dir.iterdir()), f"{what}: wrote {list(out_dir.iterdir())}"


@pytest.mark.parametrize("kind", list(BAD))
@pytest.mark.parametrize("name", list(commands({"text": Path("t"), "checkpoint": ""}, str)))
def test_every_subcommand_fails_cleanly_on_bad_input(name, kind, good, tmp_path, capsys):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    bad = BAD[kind](tmp_path / "bad" / "input")
    argv = [bad if a == "{bad}" else a for a in commands(good, lambda name: out_dir / name)[name]]
    code, err = run_cli(argv, capsys)
    assert_clean_failure_or_success(code, err, out_dir, f"{name} on a {kind} input")
    if kind in ("missing", "directory", "not-utf8"):
        assert code == 2 and str(bad) in err.splitlines()[-1], f"{name} on a {kind} input: {err}"


@pytest.mark.parametrize("argv", [
    ["decode", "--checkpoint", "{ckpt}", "--input", "{text}", "--out", "{dir}"],
    ["decode", "--checkpoint", "{ckpt}", "--input", "{text}", "--out", "-", "--timing", "{dir}"],
    ["head", "--input", "{text}", "--lines", "1", "--out", "{dir}"],
    ["evaluate", "--hyp", "{text}", "--ref", "{text}", "--out", "{dir}"],
    ["merge", "{text}", "--out", "{dir}", "--text", "{dir}"],
])
def test_an_output_path_that_is_a_directory_is_refused_before_any_work(argv, good, tmp_path, capsys):
    directory = tmp_path / "a-directory"
    directory.mkdir()
    values = {"{ckpt}": good["checkpoint"], "{text}": good["text"], "{dir}": directory}
    code, err = run_cli([values.get(a, a) for a in argv], capsys)
    assert code == 2 and "Traceback" not in err
    assert "error:" in err.strip().splitlines()[-1] and str(directory) in err, err
    assert not any(directory.iterdir())


def test_summarize_rejects_non_utf8_on_stdin(good, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"police \xff arrest\n"), encoding="utf-8"))
    code, err = run_cli(["summarize", "--checkpoint", good["checkpoint"], "--length", "2",
                         "--out", tmp_path / "s.txt"], capsys)
    assert code == 2 and err.strip().splitlines()[-1].startswith("naus: error: standard input: line 1: not valid UTF-8")
    assert not (tmp_path / "s.txt").exists()


@pytest.mark.parametrize("ratio", ["0", "-0.5", "1.5", "nan"])
@pytest.mark.parametrize("command", ["decode", "search"])
def test_a_ratio_outside_0_1_is_refused_the_same_way_by_every_command(command, ratio, good, tmp_path, capsys):
    rest = (["--checkpoint", good["checkpoint"]] if command == "decode" else ["--lm", good["text"]])
    with pytest.raises(SystemExit) as exit_:
        main([command, "--input", str(good["text"]), *map(str, rest), "--ratio", ratio, "--out", str(tmp_path / "o")])
    assert exit_.value.code == 2
    assert f"argument --ratio: must be in (0, 1], got {ratio}" in capsys.readouterr().err


def test_train_lm_on_an_empty_corpus_says_so(tmp_path, capsys):
    code, err = run_cli(["train-lm", "--corpus", write(tmp_path / "empty.txt", "\n\n"), "--out", tmp_path / "lm.bin"],
                        capsys)
    assert code == 2 and err.strip().splitlines()[-1] == f"naus: error: {tmp_path / 'empty.txt'}: no words to train a language model on"


def test_merge_names_a_missing_field_and_a_record_without_index(tmp_path, capsys):
    from naus.shards import ResumableOutput

    parts = []
    for shard, record in enumerate([{"index": 0, "summary": "a"}, {"summary": "b"}]):
        output = ResumableOutput(tmp_path / f"part{shard}.jsonl", 2, (shard, 2), {"p": 1})
        output.append([{**record, "index": 1} if shard else record])
        output.finish()
        parts.append(tmp_path / f"part{shard}.jsonl")
    code, err = run_cli(["merge", *parts, "--field", "score", "--out", tmp_path / "m.jsonl",
                         "--text", tmp_path / "m.txt"], capsys)
    assert code == 2 and f"{parts[0]}: line 1: a record needs an integer 'index' and 'score'" in err
    write(parts[1], '{"summary": "b"}\n')
    code, err = run_cli(["merge", *parts, "--out", tmp_path / "m.jsonl", "--text", tmp_path / "m.txt"], capsys)
    assert code == 2 and f"{parts[1]}: line 1: a record needs an integer 'index'" in err
    assert not (tmp_path / "m.jsonl").exists()


def test_report_names_what_is_missing_from_its_config_or_a_metrics_file(tmp_path, capsys):
    code, err = run_cli(["report", "--config", '{"profile": "p"}', "--metrics", tmp_path / "m", "--build", tmp_path,
                         "--out", tmp_path / "out"], capsys)
    assert code == 2 and "--config: not a profile's resolved configuration (KeyError: 'search')" in err
    write(tmp_path / "m/search/test/L10.json", '{"rouge1": 25.0}')
    code, err = run_cli(["report", "--config", REPORT_CONFIG, "--metrics", tmp_path / "m", "--build", tmp_path / "b",
                         "--out", tmp_path / "out"], capsys)
    assert code == 2 and err.strip().splitlines()[-1] == f"naus: error: {tmp_path}/m/search/test/L10.json: missing key 'rouge2'"
    assert not (tmp_path / "out").exists()
