import re
import subprocess

from tests.helpers import ROOT, write


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
