import io
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from naus.cli import main
from naus.settings import ModelConfig
from naus.student.checkpoint import save_checkpoint
from tests.helpers import ROOT, SENTENCE, run_cli, shown, write


def run(args, env):
    return subprocess.run(args, capture_output=True, text=True, env=env, cwd=ROOT)


def test_cli_reports_bad_input_on_one_line(tmp_path, env):
    a = write(tmp_path / "a.txt", "x\ny\n")
    t = write(tmp_path / "t.txt", "x\n")
    result = run(
        ["naus", "data", "gigaword", "--pool-article", a, "--pool-title", t,
         "--test-article", a, "--test-title", t, "--out", tmp_path / "out"],
        env,
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("naus: error: line counts differ") and "a.txt has 2" in lines[-1]
    assert not (tmp_path / "out").exists()


def test_cli_rejects_out_of_range_option(tmp_path, env):
    result = run(["naus", "data", "demo", "--out", tmp_path, "--dev-size", "0"], env)
    assert result.returncode == 2 and "--dev-size: must be between 1 and 10000000, got 0" in result.stderr


def test_reorder_reads_the_duc2004_index_list_and_rejects_a_non_permutation(tmp_path, env):
    lines = write(tmp_path / "out.txt", "c\na\nb\n")
    index = write(tmp_path / "index.txt", "# comment\n# another\n\n[2, 0, 1]\n")
    result = run(["naus", "reorder", "--input", lines, "--index", index, "--out", tmp_path / "ordered.txt"], env)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "ordered.txt").read_text() == "a\nb\nc\n"
    bad = write(tmp_path / "bad.txt", "[0, 0, 1]\n")
    result = run(["naus", "reorder", "--input", lines, "--index", bad, "--out", tmp_path / "x.txt"], env)
    assert result.returncode == 2 and "not distinct lines of 0..2" in result.stderr


def test_building_the_command_line_imports_neither_numba_nor_torch(env):
    """`naus --threads N` sets NUMBA_NUM_THREADS and the BLAS pools before they load; a module imported while the
    parser is built would load them first (numba then refuses its first compilation in a fresh checkout)."""
    code = "import sys; from naus.cli import build_parser; build_parser(); print(sorted({'numba', 'torch', 'numpy'} & set(sys.modules)))"
    result = run(["python", "-c", code], env)
    assert result.returncode == 0 and result.stdout.strip() == "[]", result.stdout + result.stderr


def _parsers(parser, name="naus"):
    """Every (sub)command's parser, with its name."""
    import argparse

    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub, child in action.choices.items():
                yield from _parsers(child, f"{name} {sub}")


def test_every_command_and_option_says_what_it_is_and_global_options_go_anywhere():
    from naus.cli import build_parser

    parser = build_parser()
    for name, command in _parsers(parser):
        assert command.description, f"{name}: no description"
        for action in command._actions:
            assert action.help, f"{name} {action.option_strings or action.dest}: no help"
    before = parser.parse_args(["--threads", "3", "lead", "--input", "x", "--length", "2", "--out", "-"])
    after = parser.parse_args(["lead", "--input", "x", "--length", "2", "--out", "-", "-q", "--threads", "2"])
    assert (before.quiet, before.threads, after.quiet, after.threads) == (False, 3, True, 2)


def test_out_dash_writes_standard_output_everywhere(tmp_path, env):
    source = write(tmp_path / "in.txt", "police arrested 25 men\n")
    for command in (["digits"], ["lead", "--length", "2"], ["head", "--lines", "1"]):
        result = run(["naus", *command, "--input", source, "--out", "-"], env)
        assert result.returncode == 0 and result.stdout.splitlines()[0].startswith("police"), result
    assert not (ROOT / "-").exists()


def test_messages_for_impossible_settings_and_streams_are_one_line(tmp_path, env):
    """Hostile input, round nine, kind 6 (messages): an LM order KenLM's binary cannot hold, an lmplz memory share
    above the machine's, `download --out -` (a download is kept as a file), a standard output that cannot encode
    the text: each refused in one line, before any work."""
    corpus = write(tmp_path / "h.txt", "police arrest five\n")
    for args, said in (
        (["train-lm", "--corpus", corpus, "--out", tmp_path / "lm.bin", "--order", "1"],
         "--order: must be between 2 and 6, got 1"),
        (["train-lm", "--corpus", corpus, "--out", tmp_path / "lm.bin", "--memory", "999999%"],
         "memory must match"),
        (["download", "--url", corpus.as_uri(), "--sha256", "0" * 64, "--out", "-"],
         "a download is kept as a file"),
    ):
        result = run(["naus", *args], env)
        assert result.returncode == 2 and said in result.stderr, result.stderr
        assert not (tmp_path / "lm.bin").exists() and not (ROOT / "-").exists()
    news = write(tmp_path / "news.txt", "Café prices rose\n")
    result = run(["naus", "head", "--input", news, "--lines", "0", "--out", "-"], {**env, "PYTHONIOENCODING": "ascii"})
    assert result.returncode == 2 and result.stderr.strip() == (
        "naus: error: standard output cannot write '\\xe9' (ascii): set PYTHONIOENCODING=utf-8 or write to a file "
        "(--out FILE)")


def _commands(parser, name="naus"):
    """Every leaf command of the parser and its own parser."""
    import argparse

    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield name, parser
        return
    for child, sub in subs[0].choices.items():
        yield from _commands(sub, f"{name} {child}")


def test_every_option_a_help_names_is_an_option_of_its_command():
    """Helps a newcomer trusts (issue 119): an option a command's help names (outside a quoted `naus ...` of
    another command) is one that command takes (decode-all named a --ratio, time a --timing it has not); and no
    help says its default twice."""
    from naus.cli import build_parser

    for name, parser in _commands(build_parser()):
        options = {o for a in parser._actions for o in a.option_strings}
        texts = [parser.description or ""] + [a.help or "" for a in parser._actions]
        for text in texts:
            for option in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", re.sub(r"`[^`]*`", "", text)):
                assert option in options, f"{name}: its help names {option}, which it does not take: {text!r}"
        for action in parser._actions:
            assert (action.help or "").count("default:") <= 1, f"{name} {action.option_strings}: {action.help!r}"

# -- hostile and careless input (the review rounds): each test names the input it spoils and what it did before --

@pytest.mark.parametrize("index", ["[2.7, 0.2, 1.9]", "[1e400, 0, 1]", "[true, false, 2]"])
def test_reorder_takes_integers_only(index, good, tmp_path, capsys):
    text = write(tmp_path / "three.txt", "a\nb\nc\n")
    code, err = run_cli(["reorder", "--input", text, "--index", write(tmp_path / "i.txt", index + "\n"),
                         "--out", tmp_path / "o.txt"], capsys)
    assert code == 2 and "expected one integer per line or a JSON list of integers" in err and "Traceback" not in err


@pytest.mark.parametrize("argv, message", [
    (["train", "--seed", "-1"], "--seed: must be between 0 and 4294967295, got -1"),
    (["train", "--seed", "4294967296"], "--seed: must be between 0 and 4294967295"),
    (["train", "--seed", "1e20"], "--seed: expected int"),
    (["search", "--rerank-gamma", "inf"], "--rerank-gamma: must be a finite number, got inf"),
])
def test_numbers_out_of_range_are_refused_on_the_command_line(good, capsys, argv, message):
    code, err = run_cli([argv[0], *(["--train-source", good["text"], "--train-target", good["text"], "--out",
                                     str(good["text"]) + ".d"] if argv[0] == "train" else
                                    ["--input", good["text"], "--lm", good["text"], "--length", "3", "--out", "-"]),
                         *argv[1:]], capsys)
    assert code == 2 and message in err and "Traceback" not in err


@pytest.mark.parametrize("failure", [RuntimeError("[enforce fail at alloc_cpu.cpp:118] data. DefaultCPUAllocator: can't "
                                                  "allocate memory: you tried to allocate 68719476736 bytes."),
                                     MemoryError()])
def test_running_out_of_memory_is_one_line_naming_the_remedy(good, tmp_path, monkeypatch, capsys, failure):
    """`--batch-size 4096` (the maximum) on long lines asks the allocator for more than the machine has."""
    import naus.commands.decode

    def allocate(args):
        raise failure

    monkeypatch.setattr(naus.commands.decode, "decode", allocate)
    code, err = run_cli(["decode", "--checkpoint", good["checkpoint"], "--input", good["text"], "--length", "3",
                         "--batch-size", "4096", "--out", tmp_path / "o.txt"], capsys)
    assert code == 2 and "out of memory" in err and "smaller --batch-size" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err


def test_the_command_line_writes_no_control_character_of_its_input(tmp_path, capsys):
    source = write(tmp_path / "in.txt", "Police\x07 \u202earrested five protesters in Paris\x00 on Monday\n")
    out = tmp_path / "out.txt"
    code, err = run_cli(["summarize", "--input", str(source), "--length", "4", "--out", str(out)], capsys)
    assert code == 0, err
    assert shown(out.read_text().strip()) and len(out.read_text().split()) == 4


def test_a_reader_that_closes_the_pipe_ends_the_command_quietly(tmp_path):
    """`naus summarize < big | head -1` ended with an error message from a command that did nothing wrong."""
    # five chunks of standard input, cut to 64 lines (a second of MiniLM where 1,024 took seven): those after the
    # first are written after the reader has gone
    source = write(tmp_path / "in.txt", "Police arrested five protesters in Paris on Monday\n" * (5 * 64))
    naus = "import sys, naus.decoding.summarizer as s; s.CHUNK = 64; from naus.cli import main; sys.exit(main())"
    with open(source, "rb") as stdin:
        process = subprocess.Popen([sys.executable, "-c", naus, "--quiet", "summarize", "--length", "4"], cwd=ROOT,
                                   stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        first = process.stdout.readline()
        process.stdout.close()
        err = process.stderr.read().decode()
        code = process.wait(timeout=300)
    assert first.decode().count(" ") == 3
    assert code == 141 and err == "", (code, err)  # SIGPIPE's status, as cat's


# -- one line for every stop and error ----------------------------------------------------------------------------
@pytest.mark.parametrize("command", [["decode", "--length", "4"], ["lead", "--length", "2", "--out", "-"]])
def test_a_closed_standard_output_is_one_line(tmp_path, command):
    source = write(tmp_path / "in.txt", SENTENCE + "\n")
    result = subprocess.run(f"{sys.executable} -m naus -q {' '.join(command)} --input {source} >&-", shell=True,
                            cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == "naus: error: standard output is closed: give a file (--out FILE)"


REPORT_CONFIG = ('{"profile": "p", "data": {}, "search": {"lengths": [10]}, '
                 '"train": {"fractions": [], "seeds": [0], "analysis_seeds": [0]}, '
                 '"decode": {"methods": ["length-control"], "beam_sweep": [], "transfer": []}, "analysis": {"lengths": []}}')


BAD = {
    "missing": lambda path: path,
    "directory": lambda path: path.mkdir(parents=True) or path,
    "empty": lambda path: write(path, ""),
    "not-utf8": lambda path: write(path, b"police arrest \xff\xfe five\n"),
}


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


def test_report_names_what_is_missing_from_its_config_or_a_metrics_file(tmp_path, capsys):
    code, err = run_cli(["report", "--config", '{"profile": "p"}', "--metrics", tmp_path / "m", "--build", tmp_path,
                         "--out", tmp_path / "out"], capsys)
    assert code == 2 and "--config: not a profile's resolved configuration (KeyError: 'search')" in err
    write(tmp_path / "m/baseline/test/lead-10.json",
          '{"rouge1": 20.0, "rouge2": 5.0, "rougeL": 18.0, "avg_words": 10, "n": 3, "empty": 0}')
    write(tmp_path / "m/search/test/L10.json", '{"rouge1": 25.0}')
    code, err = run_cli(["report", "--config", REPORT_CONFIG, "--metrics", tmp_path / "m", "--build", tmp_path / "b",
                         "--out", tmp_path / "out"], capsys)
    assert code == 2 and err.strip().splitlines()[-1] == f"naus: error: {tmp_path}/m/search/test/L10.json: missing key 'rouge2'"
    assert not (tmp_path / "out").exists()


# Round two: hostile and careless input. Each case names what it spoils; each ends in a one-line
# `naus: error:` (exit 2) that contains `expected`, with nothing written under out/.
@pytest.fixture(scope="module")
def hostile(good, tmp_path_factory):
    """An LM (with its checksum record), search shards, a damaged partial shard and odd checkpoints."""
    from naus.teacher.lm import train_lm
    from naus.teacher.shards import ResumableOutput
    from tests.helpers import headline_corpus

    root = tmp_path_factory.mktemp("hostile")
    lm = root / "lm.bin"
    train_lm(write(root / "headlines.txt", headline_corpus()), lm, order=2)
    damaged = root / "damaged/lm.bin"
    damaged.parent.mkdir()
    data = bytearray(lm.read_bytes())
    data[len(data) // 2 :: 97] = bytes(len(data[len(data) // 2 :: 97]))  # many bytes zeroed
    damaged.write_bytes(bytes(data))
    (root / "damaged/lm.bin.sha256").write_bytes((root / "lm.bin.sha256").read_bytes())
    parts = []
    for shard in range(2):
        with ResumableOutput(root / f"part{shard}.jsonl", 2, (shard, 2), {"p": 1}) as output:
            output.append([{"index": shard, "summary": "police arrest" if shard else "two\nlines", "score": 1.5}])
            output.finish()
        parts.append(root / f"part{shard}.jsonl")
    payload = torch.load(good["checkpoint"], weights_only=True)
    save_checkpoint(root / "no-vocab.pt", {k: v for k, v in payload.items() if k != "vocab"})
    (root / "weights-only").mkdir()
    save_checkpoint(root / "weights-only/last.pt", {**payload, "provenance": {}})
    config = ModelConfig(**{**payload["model_config"], "arch": "ar"})
    from naus.student.model import ARStudent
    save_checkpoint(root / "ar.pt", {**payload, "model_config": config.to_dict(), "model": ARStudent(config).state_dict()})
    return {**good, "lm": lm, "damaged": damaged, "parts": parts, "root": root}


TRAIN = ["train", "--n-layers", "1", "--d-model", "16", "--n-heads", "2", "--d-ff", "32", "--max-steps", "3",
         "--max-tokens", "64"]


HOSTILE = {  # name: (argv with {text}, {lm}, ... and {out}/NAME for outputs, the expected message)
    "search --out is its --input": (["search", "--input", "{out}/in.txt", "--lm", "{lm}", "--length", "2",
                                     "--rerank-k", "0", "--out", "{out}/in.txt"], "given as --out and as --input"),
    "evaluate --out is its --hyp": (["evaluate", "--hyp", "{out}/in.txt", "--ref", "{text}", "--out", "{out}/in.txt"],
                                    "given as --out and as --hyp"),
    "merge --out onto a shard": (["merge", "{part0}", "{part1}", "--out", "{part1}", "--text", "{out}/m.txt"],
                                 "given as --out and as parts"),
    "search --timing is its --out": (["search", "--input", "{text}", "--lm", "{lm}", "--length", "2", "--rerank-k", "0",
                                      "--out", "{out}/s.jsonl", "--timing", "{out}/s.jsonl"],
                                     "given as --out and as --timing"),
    "a damaged LM": (["search", "--input", "{text}", "--lm", "{damaged}", "--length", "2", "--rerank-k", "0",
                      "--out", "{out}/s.jsonl"], "content differs from the SHA-256 recorded when it was built"),
    "merge --field score": (["merge", "{part0}", "{part1}", "--field", "score", "--out", "{out}/m.jsonl", "--text", "{out}/m.txt"],
                            "'score' must be one line of text"),
    "a summary with a line break": (["merge", "{part0}", "{part1}", "--out", "{out}/m.jsonl", "--text", "{out}/m.txt"],
                                    "'summary' must be one line of text"),
    "source and target swapped": ([*TRAIN, "--train-source", "{short}", "--train-target", "{text}", "--out", "{out}/t"],
                                  "none of the 2 training pairs can be learnt"),
    "a diverging run": ([*TRAIN, "--train-source", "{text}", "--train-target", "{short}", "--lr", "1e6",
                         "--warmup", "0", "--out", "{out}/t"], "training diverged at step"),
    **{f"{option} {value}": ([*TRAIN, "--train-source", "{text}", "--train-target", "{text}", f"--{option}", value,
                              "--out", "{out}/t"], f"argument --{option}: must be {bound}, got {value}")
       for option, value, bound in (("fraction", "-1", "in (0, 1]"), ("fraction", "0", "in (0, 1]"),
                                    ("fraction", "nan", "in (0, 1]"), ("smoothing", "5", "in [0, 1)"),
                                    ("dropout", "1.5", "in [0, 1)"))},
    "heads not dividing the width": ([*TRAIN, "--train-source", "{text}", "--train-target", "{text}", "--n-heads", "3",
                                      "--out", "{out}/t"], "d_model 16 is not a multiple of n_heads 3"),
    "--resume on a last.pt without optimizer state": ([*TRAIN, "--train-source", "{text}", "--train-target", "{short}",
                                                       "--resume", "--out", "{root}/weights-only"],
                                                      "checkpoint has no 'optimizer' (a weights-only checkpoint"),
    "a checkpoint without a vocabulary": (["decode", "--checkpoint", "{root}/no-vocab.pt", "--input", "{text}",
                                           "--out", "{out}/d.txt"], "checkpoint has no 'vocab'"),
    "an AR student asked for more words than max_len": (["decode", "--checkpoint", "{root}/ar.pt", "--input", "{text}",
                                                         "--length", "40", "--out", "{out}/d.txt"],
                                                        "a summary of 40 words is longer than this ar student's max_len 32"),
    "--device cuda without CUDA": (["decode", "--checkpoint", "{ckpt}", "--input", "{text}", "--device", "cuda",
                                    "--out", "{out}/d.txt"], "--device cuda: CUDA is not available on this machine"),
    "--device foo": (["decode", "--checkpoint", "{ckpt}", "--input", "{text}", "--device", "foo",
                      "--out", "{out}/d.txt"], "--device foo: not a device"),
    "reorder with a null index": (["reorder", "--input", "{text}", "--index", "{null}", "--out", "{out}/r.txt"],
                                  "expected one integer per line or a JSON list of integers"),
}


@pytest.mark.skipif(torch.cuda.is_available(), reason="the CUDA case needs a machine without CUDA")
@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_and_careless_input_ends_in_one_line(name, hostile, tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    given = {"{out}/in.txt": write(out / "in.txt", "police arrest five protesters\n"),
             "{short}": write(tmp_path / "short.txt", "police arrest\nstocks\n"),
             "{null}": write(tmp_path / "null.txt", "[1, null]\n")}
    values = {"{text}": hostile["text"], "{lm}": hostile["lm"], "{damaged}": hostile["damaged"],
              "{ckpt}": hostile["checkpoint"], "{part0}": hostile["parts"][0], "{part1}": hostile["parts"][1]}
    argv, expected = HOSTILE[name]
    before = {p: p.read_bytes() for p in hostile["root"].rglob("*") if p.is_file()}
    argv = [str(given.get(a) or values.get(a) or a.replace("{out}", str(out)).replace("{root}", str(hostile["root"])))
            for a in argv]
    code, err = run_cli(argv, capsys)
    assert code == 2 and "Traceback" not in err, f"{name}: {err}"
    assert expected in err.strip().splitlines()[-1], f"{name}: {err}"
    assert sorted(p.name for p in out.iterdir()) == ["in.txt"] and (out / "in.txt").read_text() == "police arrest five protesters\n"
    assert {p: p.read_bytes() for p in hostile["root"].rglob("*") if p.is_file()} == before, f"{name} changed its inputs"
