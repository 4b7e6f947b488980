"""`dvc repro` in a temporary copy of the repository: no value of the configuration reaches its shell (DVC over
the micro run's build: tests/workflow/test_printed_commands.py)."""

import subprocess
from pathlib import Path

import yaml

from tests.helpers import ROOT, command, write


def test_a_profile_name_holding_shell_syntax_runs_nothing_through_dvc(repo_copy, env):
    """DVC runs a stage's command in a shell: no value of the configuration is pasted into one, and Snakemake
    refuses the name before any job."""
    config = repo_copy / "config/demo.yaml"
    config.write_text(config.read_text().replace("profile: demo", 'profile: "demo$(touch INJECTED)"', 1))
    code, out = command(["dvc", "repro", "data"], repo_copy, env)
    assert code != 0 and "config key profile" in out, out[-2000:]
    assert not list(repo_copy.rglob("INJECTED")) and not (ROOT / "INJECTED").exists()


def test_a_wrongly_typed_experiment_value_deletes_no_output(repo_copy, env):
    """Hostile input, round nine, kind 1 (the user's data never an output): `dvc exp run -S` with a value of the wrong
    type stops at the schema (Snakemake's first step) with every output of the stage still in place: DVC deletes a
    stage's outputs before its command unless they persist."""
    stages = yaml.safe_load((repo_copy / "dvc.yaml").read_text())["stages"]
    declared = [next(iter(out)) if isinstance(out, dict) else out for stage in stages.values()
                for kind in ("outs", "metrics", "plots") for out in stage.get(kind, [])]
    outputs = [path.replace("${profile}", "demo") for path in declared]
    for output in outputs:  # a made build: each output a file, or a folder holding one
        write(repo_copy / output / "made.txt" if not Path(output).suffix else repo_copy / output, f"{output}\n")
    code, out = command(["dvc", "commit", "-f", "-q"], repo_copy, env)
    assert code == 0, out
    subprocess.run(["git", "add", "-A"], cwd=repo_copy, check=True, capture_output=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "built"], cwd=repo_copy,
                   check=True)
    code, out = command(["dvc", "exp", "run", "-s", "train", "-S", "config/demo.yaml:train.max_steps=abc"],
                        repo_copy, env)
    assert code != 0 and "config key train.max_steps: 'abc' is not of type 'integer'" in out, out[-2000:]
    for output in outputs:
        made = repo_copy / output / "made.txt" if not Path(output).suffix else repo_copy / output
        assert made.read_text() == f"{output}\n", output
