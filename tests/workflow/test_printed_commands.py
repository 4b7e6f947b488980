"""Every command the README and `make demo` print, run as printed in a fresh shell: the system's PATH alone,
`.venv` activated only after the README's line that activates it. It runs in a copy of the repository whose
demo profile is the micro run's (`build/demo` read as `build/micro`), the long commands dry."""

import os
import re
import subprocess

from tests.helpers import ROOT
from tests.workflow.conftest import SECRET

README = (ROOT / "README.md").read_text()
ACTIVATE = "source .venv/bin/activate"
# (printed, as run here): what would take hours runs dry; the README's model is the demo's, here the micro one's
AS_RUN = (
    (r"^make test$", "make -n test"),  # the suite inside the suite
    (r"^(.*)make demo PROFILE=(.*)$", r"\1make -n demo PROFILE=\2"),  # a real profile's whole pipeline
    (r"^(snakemake .*config/paper\.yaml)$", r"\1 -n"),  # a cluster's days
    (r"build/demo/train/L8", "build/micro/train/L4"),
    (r"results/demo", "results/micro"),
)
MISSING_PAPER_DATA = "Missing input files for rule data_gigaword"  # the 3.8M-pair release is not here


def printed() -> list[str]:
    """The README's shell lines and Python blocks, in order, then the commands `make demo`'s closing lines name."""
    commands = []
    for language, block in re.findall(r"```(bash|python)\n(.*?)```", README, flags=re.S):
        if language == "python":
            commands.append(f"python - <<'EOF'\n{block}EOF")
        else:
            commands += [re.sub(r"\s+#.*$", "", line) for line in block.splitlines() if line.strip()]
    dry = subprocess.run(["make", "-n", "demo"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    hints = re.findall(r'^echo "[^"]*: (\.venv/bin/[^"]*)"$', dry, flags=re.M)
    assert hints, dry
    return commands + hints


def as_run(command: str) -> str:
    for pattern, replacement in AS_RUN:
        command = re.sub(pattern, replacement, command)
    return command.replace("/path/to/data", os.environ.get("NAUS_DATA", "/path/to/data"))


def test_every_printed_command_works_in_a_fresh_shell(micro_checkout):
    shell_env = {"HOME": os.environ.get("HOME", "/root"), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    activated, ran = False, []
    for command in printed():
        if command == ACTIVATE:
            activated = True
            continue
        command = as_run(command)
        if "/path/to/data" in command:
            continue  # the real data's commands: NAUS_DATA is unset here
        script = f"{ACTIVATE} && {command}" if activated else command
        result = subprocess.run(["bash", "-c", script], cwd=micro_checkout, env=shell_env, capture_output=True,
                                text=True, timeout=300)
        out = result.stdout + result.stderr
        assert "Traceback" not in out and "command not found" not in out, (command, out[-3000:])
        assert result.returncode == 0 or MISSING_PAPER_DATA in out, (command, out[-3000:])
        ran.append((command, result.stdout))
    outputs = dict(ran)
    assert "make demo" in outputs and "dvc repro" in outputs
    assert "Running stage" not in outputs["dvc repro"], outputs["dvc repro"]  # make demo recorded its build
    report = micro_checkout / "results/micro/report.html"  # the hint's; the profile's note is hostile text
    assert report.is_file() and SECRET not in report.read_text() and not (micro_checkout / "X").exists()
    headlines = [out for command, out in ran if command.startswith("naus summarize")]
    assert headlines and all(len(out.splitlines()) == 5 for out in headlines), headlines
    assert not any(re.search(r"#|-lrb-|<unk>", out) for out in headlines), headlines


def test_a_wrong_profile_or_missing_data_is_one_line(repo_copy):
    fresh = {"HOME": os.environ.get("HOME", "/root"), "PATH": "/usr/bin:/bin"}
    for profile, expected in (("gigaword", "the profiles are demo gigaword-sample paper"),
                              ("gigaword-sample", "set config key data.data_dir or the environment variable NAUS_DATA")):
        result = subprocess.run(["make", "dryrun", f"PROFILE={profile}"], cwd=repo_copy, env=fresh,
                                capture_output=True, text=True)
        lines = [line for line in result.stderr.splitlines() + result.stdout.splitlines() if not line.startswith("make")]
        assert result.returncode != 0 and len(lines) <= 1 and expected in result.stdout + result.stderr, lines
