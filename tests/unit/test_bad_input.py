"""Every `naus` subcommand on careless input: a missing file, a directory, an empty file, bytes
that are not UTF-8, and an output path that is a directory. Each ends in a one-line
`naus: error:` naming the file (exit 2, nothing written) or a correct result — never a traceback."""

from __future__ import annotations

import json
import io
import sys
from pathlib import Path

import pytest
import torch

from naus.cli import main
from naus.student.model import NAUS
from naus.settings import ModelConfig
from naus.student.checkpoint import FORMAT, save_checkpoint
from naus.student.vocab import Vocab
from tests.helpers import as_interrupted, naus_main, write

REPORT_CONFIG = ('{"profile": "p", "data": {}, "search": {"lengths": [10]}, '
                 '"train": {"fractions": [], "seeds": [0], "analysis_seeds": [0]}, '
                 '"decode": {"methods": ["length-control"], "beam_sweep": [], "transfer": []}, "analysis": {"lengths": []}}')
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
    """Exit code and stderr of `naus ARGV`, in this process."""
    result = naus_main(argv, capsys)
    return result.returncode, result.stderr


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
    from naus.teacher.shards import ResumableOutput

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


def test_a_crafted_checkpoint_runs_nothing(tmp_path, capsys):
    """A checkpoint is read as data only: a pickle that would run a command is refused unopened."""
    import os

    witness = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return os.system, (f"touch {witness}",)

    torch.save({"format": FORMAT, "vocab": ["<blank>"], "model_config": {}, "model": Payload()}, tmp_path / "evil.pt")
    code, err = run_cli(["decode", "--checkpoint", tmp_path / "evil.pt", "--input", "-", "--out", tmp_path / "d.txt"],
                        capsys)
    assert code == 2 and "evil.pt: not a readable checkpoint (UnpicklingError" in err.strip().splitlines()[-1]
    assert not witness.exists() and not (tmp_path / "d.txt").exists()


def test_search_memory_is_bounded_on_a_long_line_with_a_high_order_lm(tmp_path, env):
    """A 1,000-word line and a 5-gram LM, under a 4 GB address-space limit: the dense n-gram table
    would need (1,002)^5 floats; the search reads the words that fit search.max_memory_mb instead
    (1 GB: the limit also holds Python, NumPy, numba compiling its kernels on a first run, the LM)."""
    import random
    import resource
    import subprocess

    from naus.teacher.lm import train_lm
    from tests.helpers import ROOT
    from tests.helpers import headline_corpus

    train_lm(write(tmp_path / "h.txt", headline_corpus()), tmp_path / "lm.bin", order=5)
    rng = random.Random(0)
    words = [rng.choice(headline_corpus(50).split()) for _ in range(1000)]
    longest = " ".join(words * 100)  # 100,000 words: a dense 5-gram table of them would need 10^25 floats
    source = write(tmp_path / "long.txt", " ".join(words) + "\npolice arrest five protesters in paris\n" + longest + "\n")

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    result = subprocess.run(["naus", "search", "--input", source, "--lm", tmp_path / "lm.bin", "--length", "6",
                             "--rerank-k", "0", "--out", tmp_path / "out.jsonl"], capture_output=True, text=True,
                            env=env, cwd=ROOT, preexec_fn=limit, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "sentence 1: 1000 words, searched on its first 40" in result.stderr
    assert "sentence 3: 100000 words, searched on its first 40" in result.stderr
    first, second, third = (json.loads(line)["summary"].split()
                            for line in (tmp_path / "out.jsonl").read_text().splitlines())
    assert len(first) == 6 and set(first) <= set(words[:40]) and len(second) == 6 and set(third) <= set(words[:40])


def test_a_shard_resumed_after_its_models_were_rebuilt_in_place_refuses(tmp_path, capsys):
    """Provenance records the LM by content: rebuilt at the same path and size, it is another teacher."""
    from naus.teacher.lm import checksum_path, train_lm
    from naus.files import sha256sum
    from tests.helpers import headline_corpus

    lm = tmp_path / "lm.bin"
    train_lm(write(tmp_path / "h.txt", headline_corpus()), lm, order=3)
    source = write(tmp_path / "source.txt", "police arrest five protesters in paris on monday\n" * 4)
    command = ["search", "--input", source, "--lm", lm, "--length", "4", "--rerank-k", "0",
               "--out", tmp_path / "out.jsonl"]
    assert naus_main(command, capsys).returncode == 0
    records = (tmp_path / "out.jsonl").read_text().splitlines(keepends=True)
    as_interrupted(tmp_path / "out.jsonl", "".join(records[:2]))
    (tmp_path / "out.jsonl").unlink()
    data = bytearray(lm.read_bytes())
    data[-1] ^= 1  # one byte: same size, other content
    lm.write_bytes(bytes(data))
    write(checksum_path(lm), sha256sum(lm) + "\n")  # as a rebuild records it
    result = naus_main(command, capsys)
    assert result.returncode == 2, result.stderr
    assert "out.jsonl.partial: made with parameters.lm_sha256 = " in result.stderr.strip().splitlines()[-1]
    assert (tmp_path / "out.jsonl.partial").read_text() == "".join(records[:2])


def test_a_damaged_partial_line_is_searched_again(tmp_path):
    from naus.teacher.shards import ResumableOutput, read_records

    with ResumableOutput(tmp_path / "part.jsonl", 4, (0, 1), {"p": 1}) as output:
        output.append({"index": i, "summary": "s"} for i in range(2))
    with open(tmp_path / "part.jsonl.partial", "ab") as handle:
        handle.write(b'{"index": 2, "summary": "\xff\xfe"}\n{"index": 3, "summary": "s"}\n')
    with ResumableOutput(tmp_path / "part.jsonl", 4, (0, 1), {"p": 1}) as output:
        assert list(output.remaining) == [2, 3]
        output.append({"index": i, "summary": "s"} for i in output.remaining)
        output.finish()
    assert [r["index"] for r in read_records(tmp_path / "part.jsonl")] == [0, 1, 2, 3]


def test_a_full_disk_while_a_checkpoint_is_written_keeps_the_previous_one(tmp_path, monkeypatch):
    from naus import NausError
    from naus.student.checkpoint import load_checkpoint

    path = tmp_path / "last.pt"
    save_checkpoint(path, {"format": FORMAT, "vocab": ["<blank>", "<pad>", "<unk>"], "model_config": {}, "model": {}})
    before = path.read_bytes()

    def full(*args, **kwargs):
        raise RuntimeError("[enforce fail at inline_container.cc:664] . PytorchStreamWriter failed writing file")

    monkeypatch.setattr(torch, "save", full)
    with pytest.raises(NausError, match="last.pt: could not write the checkpoint .*; the previous one is kept"):
        save_checkpoint(path, {"format": FORMAT})
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["last.pt"]
    assert load_checkpoint(path)["format"] == FORMAT


@pytest.mark.parametrize("name, code", [("SIGINT", 130), ("SIGTERM", 143)])
def test_a_stopped_search_ends_in_one_line_and_resumes(name, code, tmp_path, env):
    import signal
    import subprocess
    import time

    from naus.teacher.lm import train_lm
    from tests.helpers import ROOT
    from tests.helpers import headline_corpus

    train_lm(write(tmp_path / "h.txt", headline_corpus()), tmp_path / "lm.bin", order=3)
    source = write(tmp_path / "source.txt", "".join(f"police arrest {k} protesters in paris on monday after talks\n"
                                                    for k in range(400)))
    command = ["naus", "search", "--input", source, "--lm", tmp_path / "lm.bin", "--length", "4", "--rerank-k", "0",
               "--batch", "8", "--out", tmp_path / "out.jsonl"]
    # a job started in the background by a shell ignores SIGINT, and its children inherit that: the
    # command gets the default disposition back, as it would from a terminal or a scheduler
    running = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    partial = tmp_path / "out.jsonl.partial"
    while not (partial.is_file() and partial.stat().st_size) and running.poll() is None:
        time.sleep(0.01)
    running.send_signal(getattr(signal, name))
    _, err = running.communicate(timeout=120)
    assert running.returncode == code, err[-2000:]
    assert err.strip().splitlines()[-1].startswith(f"naus: error: stopped by {name}; the records searched so far are kept")
    assert "Traceback" not in err and not (tmp_path / "out.jsonl.lock").exists()
    kept = len(partial.read_text().splitlines())
    assert 0 < kept < 400
    again = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT)
    assert again.returncode == 0 and f"after {kept} finished sentences" in again.stderr
    assert [json.loads(x)["index"] for x in (tmp_path / "out.jsonl").read_text().splitlines()] == list(range(400))


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


def test_a_language_model_with_impossible_probabilities_is_refused():
    """A damaged model without its checksum record may load and answer garbage (KenLM itself never
    writes a positive log-probability): the search's table refuses it in one line."""
    import types

    from naus import NausError
    from naus.teacher.lm import NgramTable

    class Damaged:  # KenLM's interface, answering log10 P = 0.5 for every word
        def BeginSentenceWrite(self, state):
            pass

        def NullContextWrite(self, state):
            pass

        def BaseScore(self, state, word, out):
            return 0.5

    lm = types.SimpleNamespace(model=Damaged(), order=2, path="damaged.bin", unigram=lambda word: -1.0)
    with pytest.raises(NausError, match=r"damaged.bin: not a valid KenLM model \(a log-probability of 1.151 over"):
        NgramTable(lm, ["police", "arrest", "five"])
