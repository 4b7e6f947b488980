"""The README a newcomer reads once: short, every measured number in it read from a committed results file, and
every `naus` command it prints a command the command line takes."""

import re
import shlex

from tests.helpers import ROOT

README = (ROOT / "README.md").read_text()
NOT_RESULTS = {"3.11"}  # the Python version


def _results_text() -> str:
    return "\n".join(path.read_text(errors="replace") for path in sorted((ROOT / "results").rglob("*"))
                     if path.suffix in (".json", ".md", ".csv"))


def test_the_readme_is_short():
    assert len(README.splitlines()) <= 250


def test_its_first_screen_is_the_generated_claims_table():
    """Which of the paper's claims hold, opening the README: gigaword-sample's claims table as the report wrote it
    (`naus.report.claims`), within the first 40 lines, so that a new run's numbers cannot drift from it."""
    table = (ROOT / "results/gigaword-sample/tables/claims.md").read_text().split("\n\n", 1)[1].strip()
    assert table in README
    assert README[: README.index(table)].count("\n") < 40


def test_every_number_the_readme_quotes_is_in_a_committed_result():
    """A decimal (a score, a time) is read from results/, not typed: each one is found there (the prose's; a code
    block shows commands and what they print)."""
    results = _results_text()
    prose = re.sub(r"```.*?```", "", README, flags=re.S)
    quoted = set(re.findall(r"(?<![\w.])\d+\.\d+(?![\w.])", prose)) - NOT_RESULTS
    missing = sorted(number for number in quoted if number not in results)
    assert not missing, f"numbers in README.md found in no file of results/: {missing}"


def test_every_naus_command_it_prints_is_one_the_command_line_takes():
    from naus.cli import build_parser

    commands = [line.split("#")[0].strip() for block in re.findall(r"```bash\n(.*?)```", README, flags=re.S)
                for line in block.splitlines() if line.strip().startswith("naus ")]
    assert commands
    for command in commands:
        words = shlex.split(command.split("<")[0].split("|")[0])
        build_parser().parse_args(words[1:])  # argparse exits on an unknown option or a missing argument

