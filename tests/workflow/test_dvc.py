"""`dvc repro` in a temporary copy of the repository: no value of the configuration reaches its shell (DVC over
the micro run's build: tests/workflow/test_printed_commands.py)."""

from tests.helpers import ROOT, command


def test_a_profile_name_holding_shell_syntax_runs_nothing_through_dvc(repo_copy, env):
    """DVC runs a stage's command in a shell: no value of the configuration is pasted into one, and Snakemake
    refuses the name before any job."""
    config = repo_copy / "config/demo.yaml"
    config.write_text(config.read_text().replace("profile: demo", 'profile: "demo$(touch INJECTED)"', 1))
    code, out = command(["dvc", "repro", "data"], repo_copy, env)
    assert code != 0 and "config key profile" in out, out[-2000:]
    assert not list(repo_copy.rglob("INJECTED")) and not (ROOT / "INJECTED").exists()
