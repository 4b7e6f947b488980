"""The printed commands that read a build (`make demo`, `naus summarize`, the Python API, DVC, the HTML report),
run as printed (tests/workflow/printed.py) in a copy of the repository whose demo profile is the micro run's; then
DVC over the build they leave (its outputs persist, so `dvc repro` would run Snakemake over it, which finds
nothing to do; the pipeline test checks what it makes): each stage asks Snakemake for a target the run made, a
change of code marks the stages, and the default remote gives the artifacts back."""

import re
import shutil

import yaml

from tests.helpers import ROOT, command, snakemake
from tests.workflow.conftest import SECRET
from tests.workflow.printed import DRY, printed, run


def test_every_printed_command_that_reads_a_build_works_in_a_fresh_shell_and_dvc_tracks_the_build(micro_checkout, env):
    outputs = {command: run(command, activated, micro_checkout).stdout
               for command, activated in printed() if not DRY.search(command)}
    assert "make demo" in outputs and "dvc repro" in outputs
    assert "Running stage" not in outputs["dvc repro"], outputs["dvc repro"]  # make demo recorded its build
    assert "L4.teacher" in outputs["dvc metrics show"] and "L4.student" in outputs["dvc metrics show"]
    report = micro_checkout / "results/micro/report.html"  # the hint's; the profile's note is hostile text
    assert report.is_file() and SECRET not in report.read_text() and not (micro_checkout / "X").exists()
    headlines = {command: out for command, out in outputs.items() if "naus summarize" in command}
    lines = {command: 1 if command.startswith("tail -1") else 6 for command in headlines}  # tests/data/news.txt's
    # the three of "Using a model" and your own corpus's (its student read as the shipped one)
    assert len(headlines) == 4 and all(len(out.splitlines()) == lines[c] for c, out in headlines.items()), headlines
    assert not any(re.search(r"#|-lrb-|<unk>", out) for out in headlines.values()), headlines
    ordered, over_types = (out for command, out in headlines.items() if command.startswith("tail -1"))
    assert ordered != over_types  # the README shows what the source order changes
    # Hostile input, round nine, kind 7: "Using a model"'s examples print the lines the README shows under them
    readme = (ROOT / "README.md").read_text()
    shown = re.search(r"## Using a model.*?```bash\n.*?```\n```\n(.*?)```", readme, flags=re.S)[1]
    assert "".join(out for command, out in headlines.items() if "--checkpoint" not in command) == shown
    dvc_tracks_the_build(micro_checkout, env)


def dvc_tracks_the_build(checkout, env):
    def call(*cmd):
        return command(list(cmd), checkout, env)

    stages = yaml.safe_load((checkout / "dvc.yaml").read_text())["stages"]
    targets = [word for stage in stages.values()
               for word in stage["cmd"].replace("${SMK}", "").replace("${profile}", "micro").split()]
    code, out = snakemake(["--configfile", "config/demo.yaml", "--cores", "1", "-n", *targets], env, checkout)
    assert code == 0 and "Nothing to be done" in out, (targets, out[-2000:])
    assert (checkout / "dvc.lock").is_file() and "up to date" in call("dvc", "status")[1]

    # A change in code every stage runs (the command line) marks the stages as changed; the search
    # stage once listed only its own modules and stayed "up to date".
    cli = checkout / "naus/cli.py"
    original_code = cli.read_text()
    cli.write_text(original_code + "\n# a change\n")
    out = call("dvc", "status")[1]
    assert "search:" in out and "changed deps" in out and "naus" in out, out
    cli.write_text(original_code)
    assert "up to date" in call("dvc", "status")[1]

    # The default remote is a directory beside the checkout: push, lose the artifacts, pull them back.
    code, out = call("dvc", "push")
    assert code == 0 and (checkout.parent / "naus-dvc-remote").is_dir(), out
    checkpoint = checkout / "build/micro/train/L4/best.pt"
    original = checkpoint.read_bytes()
    shutil.rmtree(checkout / "build")
    shutil.rmtree(checkout / ".dvc/cache")
    code, out = call("dvc", "pull")
    assert code == 0 and checkpoint.read_bytes() == original, out
    assert "up to date" in call("dvc", "status")[1]
