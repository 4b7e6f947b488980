"""`dvc repro` over the Snakemake targets, in a temporary copy of the repository with the micro config and
the micro run's outputs (the pipeline test checks what they hold; here, that DVC's stages ask Snakemake for
exactly them, record them, and see a change of code)."""

import shutil
import subprocess

from tests.helpers import ROOT


def run(cmd, cwd, env):
    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    return result.returncode, result.stdout + result.stderr


def test_dvc_stages_over_the_micro_run_then_clean_status_and_nothing_to_rerun(micro_checkout, env):
    """DVC over the micro run's outputs (DVC removes a stage's outputs before it runs one, so `dvc repro`
    would make the whole run again; the pipeline test checks what it makes): each stage's command is a
    Snakemake target the run made, `dvc commit` records every stage, and then its status is clean (`dvc repro`
    after `make demo`, which commits: tests/workflow/test_printed_commands.py)."""
    import yaml

    repo_copy = micro_checkout  # the profile DVC versions (config/demo.yaml) is micro's
    stages = yaml.safe_load((repo_copy / "dvc.yaml").read_text())["stages"]
    targets = [word for stage in stages.values()
               for word in stage["cmd"].replace("${SMK}", "").replace("${profile}", "micro").split()]
    code, out = run(["snakemake", "--configfile", "config/demo.yaml", "--cores", "1", "-n", *targets], repo_copy, env)
    assert code == 0 and "Nothing to be done" in out, (targets, out[-2000:])
    code, out = run(["dvc", "commit", "--force"], repo_copy, env)
    assert code == 0 and (repo_copy / "dvc.lock").is_file(), out[-3000:]
    code, out = run(["dvc", "status"], repo_copy, env)
    assert code == 0 and "up to date" in out, out

    # A change in code every stage runs (the command line) marks the stages as changed; the search
    # stage once listed only its own modules and stayed "up to date".
    cli = repo_copy / "naus/cli.py"
    original_code = cli.read_text()
    cli.write_text(original_code + "\n# a change\n")
    code, out = run(["dvc", "status"], repo_copy, env)
    assert "search:" in out and "changed deps" in out and "naus" in out, out
    cli.write_text(original_code)
    code, out = run(["dvc", "status"], repo_copy, env)
    assert "up to date" in out, out

    # The default remote is a directory beside the checkout: push, lose the artifacts, pull them back.
    code, out = run(["dvc", "push"], repo_copy, env)
    assert code == 0, out
    assert (repo_copy.parent / "naus-dvc-remote").is_dir()
    checkpoint = repo_copy / "build/micro/train/L4/best.pt"
    original = checkpoint.read_bytes()
    shutil.rmtree(repo_copy / "build")
    shutil.rmtree(repo_copy / ".dvc/cache")
    code, out = run(["dvc", "pull"], repo_copy, env)
    assert code == 0, out
    assert checkpoint.read_bytes() == original
    code, out = run(["dvc", "status"], repo_copy, env)
    assert "up to date" in out, out


def test_a_profile_name_holding_shell_syntax_runs_nothing_through_dvc(repo_copy, env):
    """DVC runs a stage's command in a shell: no value of the configuration is pasted into one, and Snakemake
    refuses the name before any job."""
    config = repo_copy / "config/demo.yaml"
    config.write_text(config.read_text().replace("profile: demo", 'profile: "demo$(touch INJECTED)"', 1))
    code, out = run(["dvc", "repro", "data"], repo_copy, env)
    assert code != 0 and "config key profile" in out, out[-2000:]
    assert not list(repo_copy.rglob("INJECTED")) and not (ROOT / "INJECTED").exists()
