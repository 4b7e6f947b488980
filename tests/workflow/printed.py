"""The commands the README and `make demo` print, as a newcomer runs them: in a fresh shell (the system's PATH
alone, `.venv` activated only after the README's line that activates it), the long ones dry, the README's model
(the demo's) read as the micro profile's. Shared by the two tests that run them (one over the micro run's build,
one with none)."""

import os
import re
import shutil
import subprocess

from tests.helpers import ROOT

ACTIVATE = "source .venv/bin/activate"
SMALL_PAPER = ("small-paper.yaml", "search:\n  shards: 3\n")  # written into the checkout that runs it
# (printed, as run here): what would take hours runs dry; the README's model is the demo's, here the micro one's
AS_RUN = (
    (r"^make test$", "make -n test"),  # the suite inside the suite
    (r"^(.*)make demo PROFILE=(.*)$", r"\1make -n demo PROFILE=\2"),  # a real profile's whole pipeline
    # a cluster's days, planned; at three shards a search (`SMALL_PAPER`), not 512: Snakemake takes 16 s to plan those,
    # and the number of shards changes no rule (tests/workflow/test_cluster.py plans the paper at three too)
    (r"^(.*snakemake .*config/paper\.yaml)$", rf"\1 {SMALL_PAPER[0]} -n"),
    # SLURM's plan over the demo's jobs: over gigaword-sample's, Snakemake takes 15 s to check the profile's job
    # groups (`make dryrun PROFILE=gigaword-sample` plans that profile)
    (r"(workflow/profiles/slurm --configfile config/)gigaword-sample(\.yaml -n)$", r"\1demo\2"),
    (r"build/demo/train/L8", "build/micro/train/L4"),
    (r"(estimate-L|search/pool/L)(10|8)\b", r"\g<1>4"),  # the micro run's one length
    (r"build/demo/", "build/micro/"),
    (r"results/demo", "results/micro"),
    (r"~/naus-data", "build/naus-data"),  # what the README fetches stays in the checkout
    # your own corpus: its student is the one shipped (the micro run has no text profile), its new text the news
    (r"results/own/model/L8\.pt", "naus/models/gigaword.pt"),
    (r"~/my-text/new\.txt", "tests/data/news.txt"),
)
# The README's fetch runs against a full mirror of the public raw files where $NAUS_MIRROR names one (never the
# manifest's addresses: the suite contacts no server); without one it shows its help.
_MIRROR = os.environ.get("NAUS_MIRROR") or "/nonexistent"
FETCH = (r"^(naus data fetch \S+ --to \S+) --duc \S+$",
         rf"\1 --mirror file://{_MIRROR}" if os.path.isdir(_MIRROR) else "naus data fetch --help")
DRY = re.compile(r"make -n |make dryrun | -n$")  # what reads no build
MISSING_PAPER_DATA = "Missing input files for rule data_gigaword"  # the 3.8M-pair release is not here
NO_CONDA = "Is conda installed and accessible?"  # Snakemake's line when `--sdm conda` finds no conda
# A timing that pins numba to AVX2 (benchmarks/pipeline_time.py: NUMBA_AVX2) stands for an AVX2 machine: its fresh
# shells are that machine's too, and run the kernels the set-up compiled rather than compiling this CPU's.
FRESH = {"HOME": os.environ.get("HOME", "/root"), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
         **{name: value for name, value in os.environ.items() if name.startswith("NUMBA_CPU_")}}


def printed() -> list[tuple[str, bool]]:
    """(command as run here, whether the README activated .venv before it): its shell lines and Python blocks in
    order, then the commands `make demo`'s closing lines name."""
    commands = []
    for language, block in re.findall(r"```(bash|python)\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S):
        if language == "python":
            commands.append(f"python - <<'EOF'\n{block}EOF")
        else:
            commands += [re.sub(r"\s+#.*$", "", line) for line in block.splitlines() if line.strip()]
    dry = subprocess.run(["make", "-n", "demo"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    hints = re.findall(r'^echo "[^"]*: (\.venv/bin/[^"]*)"$', dry, flags=re.M)
    assert hints, dry
    found, activated = [], False
    for command in commands + hints:
        activated = activated or command == ACTIVATE
        if command != ACTIVATE:
            found.append((as_run(command), activated and command not in hints))
    return found


def as_run(command: str) -> str:
    for pattern, replacement in (*AS_RUN, FETCH):
        command = re.sub(pattern, replacement, command)
    return command.replace("/path/to/data", os.environ.get("NAUS_DATA", "/path/to/data"))


def run(command: str, activated: bool, checkout) -> subprocess.CompletedProcess:
    """One printed command in a fresh shell in `checkout`: it must not fail, print a traceback or miss a tool."""
    result = subprocess.run(["bash", "-c", f"{ACTIVATE} && {command}" if activated else command], cwd=checkout,
                            env=FRESH, capture_output=True, text=True, timeout=300)
    out = result.stdout + result.stderr
    if "--sdm conda" in command and NO_CONDA in out and shutil.which("conda") is None:
        return result  # a cluster's command: it plans every job, then asks for conda, which this machine lacks
    assert "Traceback" not in out and "command not found" not in out, (command, out[-3000:])
    assert result.returncode == 0 or MISSING_PAPER_DATA in out, (command, out[-3000:])
    return result
