"""The printed commands that read a build (`make demo`, `naus summarize`, the Python API, DVC, the HTML report),
run as printed (tests/workflow/printed.py) in a copy of the repository whose demo profile is the micro run's."""

import re

from tests.workflow.conftest import SECRET
from tests.workflow.printed import DRY, printed, run


def test_every_printed_command_that_reads_a_build_works_in_a_fresh_shell(micro_checkout):
    outputs = {command: run(command, activated, micro_checkout).stdout
               for command, activated in printed() if not DRY.search(command)}
    assert "make demo" in outputs and "dvc repro" in outputs
    assert "Running stage" not in outputs["dvc repro"], outputs["dvc repro"]  # make demo recorded its build
    assert "L4.teacher" in outputs["dvc metrics show"] and "L4.student" in outputs["dvc metrics show"]
    report = micro_checkout / "results/micro/report.html"  # the hint's; the profile's note is hostile text
    assert report.is_file() and SECRET not in report.read_text() and not (micro_checkout / "X").exists()
    headlines = [out for command, out in outputs.items() if command.startswith("naus summarize")]
    assert len(headlines) == 2 and all(len(out.splitlines()) == 5 for out in headlines), headlines
    assert not any(re.search(r"#|-lrb-|<unk>", out) for out in headlines), headlines
