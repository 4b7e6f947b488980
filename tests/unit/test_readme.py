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



def test_every_score_triple_and_gain_it_states_is_one_row_of_a_generated_table():
    """Numbers from the same frame, not merely found somewhere: each R-1 / R-2 / R-L the README states is one row's
    of a gigaword-sample table, each `ΔR ± sd` one row's mean and spread; a regeneration that moves a row fails here
    until the README follows it."""
    import pandas as pd

    prose = re.sub(r"\s+", " ", re.sub(r"```.*?```", "", README, flags=re.S))
    triples, gains = set(), set()
    for path in sorted((ROOT / "results/gigaword-sample/tables").glob("*.csv")):
        frame = pd.read_csv(path)
        if {"R-1", "R-2", "R-L"} <= set(frame.columns):
            triples |= {tuple(f"{v:.2f}" for v in row) for row in frame[["R-1", "R-2", "R-L"]].dropna().values}
        if {"ΔR", "ΔR sd"} <= set(frame.columns):
            gains |= {(f"{d:+.2f}", f"{sd:.2f}") for d, sd in frame[["ΔR", "ΔR sd"]].dropna().values}
    stated = set(re.findall(r"(?<![\d.])(\d+\.\d\d) / (\d+\.\d\d) / (\d+\.\d\d)(?![\d.])", prose))
    spread = set(re.findall(r"([+-]\d+\.\d\d) ± (\d+\.\d\d)", prose))
    assert len(stated) >= 5 and len(spread) >= 5
    assert not stated - triples, f"R-1 / R-2 / R-L in README.md that no table row holds: {sorted(stated - triples)}"
    assert not spread - gains, f"ΔR ± sd in README.md that no table row holds: {sorted(spread - gains)}"
