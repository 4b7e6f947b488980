"""`dvc repro` over the Snakemake targets, in a temporary copy of the repository with the micro config."""

import shutil
import subprocess

import pytest

from tests.helpers import ROOT


def run(cmd, cwd, env):
    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    return result.returncode, result.stdout + result.stderr


@pytest.fixture
def repo_copy(tmp_path, env):
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    copy = tmp_path / "repo"
    for name in filter(None, tracked.decode().split("\0")):
        if (ROOT / name).is_file() and not name.startswith("results/"):
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, copy / name)
    run(["git", "init", "-q"], copy, env)
    return copy


def test_dvc_repro_then_clean_status_and_nothing_to_rerun(repo_copy, micro, env):
    _, config = micro
    # the orchestration is under test here, not the seeds or the sweeps: one seed, no budget sweep
    config = (config.read_text().replace("profile: micro", "profile: demo").replace("seeds: [0, 1]", "seeds: [0]")
              .replace("char_sweep: [15, 25],", ""))
    assert "seeds: [0]" in config and "char_sweep" not in config
    (repo_copy / "config/demo.yaml").write_text(config)
    code, out = run(["dvc", "repro"], repo_copy, env)
    assert code == 0, out[-3000:]
    assert (repo_copy / "results/demo/tables/table2.md").is_file()
    assert (repo_copy / "dvc.lock").is_file()
    code, out = run(["dvc", "status"], repo_copy, env)
    assert code == 0 and "up to date" in out, out
    code, out = run(["dvc", "repro"], repo_copy, env)
    assert code == 0 and "Running stage" not in out, out
    code, out = run(["dvc", "metrics", "show"], repo_copy, env)
    assert code == 0 and "rouge1" in out, out
    code, out = run(["snakemake", "-n"], repo_copy, env)
    assert code == 0 and "Nothing to be done" in out, out[-2000:]

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
    checkpoint = repo_copy / "build/demo/train/L4/best.pt"
    original = checkpoint.read_bytes()
    shutil.rmtree(repo_copy / "build")
    shutil.rmtree(repo_copy / ".dvc/cache")
    code, out = run(["dvc", "pull"], repo_copy, env)
    assert code == 0, out
    assert checkpoint.read_bytes() == original
    code, out = run(["dvc", "status"], repo_copy, env)
    assert "up to date" in out, out
