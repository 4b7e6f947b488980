"""The printed commands that read no build (the real profiles' dry runs, `make -n`), run as printed
(tests/workflow/printed.py) in a copy of the repository; the wrong-profile and missing-data cases in one line."""

import pytest

from tests.workflow.printed import DRY, FRESH, SMALL_PAPER, printed, run


def test_every_printed_dry_command_works_in_a_fresh_shell(repo_copy):
    dry = [(command, activated) for command, activated in printed() if DRY.search(command)]
    assert len(dry) >= 4, dry
    name, text = SMALL_PAPER
    (repo_copy / name).write_text(text)
    for command, activated in dry:
        if "/path/to/data" not in command:
            run(command, activated, repo_copy)
    if any("/path/to/data" in command for command, _ in dry):
        pytest.skip("NAUS_DATA is unset: the real profiles' dry runs need the data")


def test_a_wrong_profile_or_missing_data_is_one_line(repo_copy):
    import subprocess

    for profile, expected in (("gigaword", "the profiles are demo gigaword-sample own paper"),
                              ("gigaword-sample", "set config key data.data_dir or the environment variable NAUS_DATA")):
        result = subprocess.run(["make", "dryrun", f"PROFILE={profile}"], cwd=repo_copy, env=FRESH, capture_output=True,
                                text=True)
        lines = [line for line in result.stderr.splitlines() + result.stdout.splitlines() if not line.startswith("make")]
        assert result.returncode != 0 and len(lines) <= 1 and expected in result.stdout + result.stderr, lines
