"""A real SLURM: a one-node cluster on localhost (Debian's slurmctld, slurmd and munge; a `cpu` and a
`gpu` partition, one fake GPU) runs a search shard and a student of the micro profile through
workflow/profiles/slurm as written (over a copy of the micro run's build: its corpus, LM, MiniLM export and the
student's search output; the executor checks the jobs' states from the first second), then every daemon it
started is stopped.

Skipped, with the reason, where the packages cannot be installed, the daemons cannot run (they
need root) or a SLURM configuration is already installed: the configuration goes to /etc/slurm
(removed afterwards), since the jobstep plugin's inner srun drops SLURM_CONF. The node declares more CPUs and memory than a CI machine has (SlurmdParameters=
config_overrides), so the profile's paper-size requests are accepted; nothing enforces them."""

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from naus.pipeline import layout
from tests.helpers import ROOT, write

PACKAGES = ("munge", "slurmctld", "slurmd", "slurm-client")
CONF_DIR = Path("/etc/slurm")
STUDENT = "build/micro/train/L4/best.pt"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def slurm_conf(root: Path, host: str) -> str:
    return f"""ClusterName=naustest
SlurmctldHost={host}(127.0.0.1)
AuthType=auth/munge
AuthInfo=socket={root}/munge/socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/slurmctld.log
SlurmdLogFile={root}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
GresTypes=gpu
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
MinJobAge=600
NodeName={host} NodeAddr=127.0.0.1 CPUs=64 RealMemory=128000 Gres=gpu:1 State=UNKNOWN
PartitionName=cpu Nodes={host} Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes={host} MaxTime=INFINITE State=UP
"""


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    """A running one-node cluster; its daemons stop and its configuration goes afterwards."""
    if os.geteuid() != 0:
        pytest.skip("a SLURM test cluster needs root (slurmd and munged run as root here)")
    if any(shutil.which(tool) is None for tool in ("slurmctld", "slurmd", "munged", "sbatch")):
        install = subprocess.run([str(ROOT / "scripts/apt-install.sh"), *PACKAGES], capture_output=True, text=True)
        if install.returncode:
            pytest.skip(f"Debian's SLURM packages could not be installed: {install.stderr.strip()[-300:]}")
    if (CONF_DIR / "slurm.conf").exists():
        pytest.skip(f"{CONF_DIR}/slurm.conf exists: this machine has a SLURM configuration of its own")
    root = Path(tmp_path_factory.mktemp("slurm"))
    for folder in ("munge", "state", "spool"):
        (root / folder).mkdir(mode=0o700)
    key = root / "munge/key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    host = socket.gethostname().split(".")[0]
    conf = write(CONF_DIR / "slurm.conf", slurm_conf(root, host))
    gres = write(CONF_DIR / "gres.conf", f"NodeName={host} Name=gpu File=/dev/null\n")  # a count alone: node invalid
    munged = ["munged", "--foreground", "--force", f"--socket={root}/munge/socket", f"--key-file={key}",
              f"--log-file={root}/munged.log", f"--pid-file={root}/munged.pid", f"--seed-file={root}/munge/seed"]
    daemons = []
    try:
        daemons.append(subprocess.Popen(munged, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        time.sleep(1)
        for daemon in (["slurmctld", "-D", "-i"], ["slurmd", "-D"]):
            daemons.append(subprocess.Popen(daemon, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        deadline = time.time() + 60
        while time.time() < deadline:
            state = subprocess.run(["sinfo", "-h", "-o", "%P %T"], capture_output=True, text=True).stdout
            if state.split() == ["cpu*", "idle", "gpu", "idle"]:
                break
            time.sleep(1)
        else:
            logs = "".join(p.read_text()[-1500:] for p in root.glob("slurm*.log"))
            pytest.fail(f"the test cluster did not come up: sinfo says {state!r}\n{logs}")
        yield
    finally:
        for daemon in reversed(daemons):
            daemon.send_signal(signal.SIGTERM)
        for daemon in daemons:
            try:
                daemon.wait(timeout=20)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()
        conf.unlink()
        gres.unlink()


def jobs() -> list[dict]:
    """Every job the controller still knows (MinJobAge keeps finished ones), as scontrol's fields."""
    out = subprocess.run(["scontrol", "show", "job", "--oneliner"], capture_output=True, text=True).stdout
    return [dict(field.split("=", 1) for field in line.split() if "=" in field) for line in out.splitlines()]


def test_micro_pipeline_runs_through_the_slurm_profile(micro, micro_run, slurm, env):
    workdir, config = micro
    assert micro_run[0] == 0, micro_run[1][-3000:]
    work = workdir / "slurm"
    build = workdir / "build/micro"
    later = {build / folder for folder in (layout.STUDENTS, layout.DECODINGS, layout.TRAIN_TIMINGS, layout.SCORED["duc"])}
    shutil.copytree(build, work / "build/micro",  # times kept: Snakemake finds them up to date
                    ignore=lambda folder, names: [name for name in names if Path(folder, name) in later])
    for made_again in (work / "build/micro").glob(f"{layout.search('test', 4)}*"):  # through SLURM
        shutil.rmtree(made_again) if made_again.is_dir() else made_again.unlink()
    # Both kinds of job in one round: the test split's search shard on the CPU partition, the student on the GPU
    # one. Each status check that finds no job ended puts the next 10 s further off: checked at 2 s and 14 s, they
    # end by the second (10-13 s after the start beside the other tests), not a third at 36 s.
    shard = f"build/micro/{layout.search_part('test', 4, 0)}.jsonl"
    cmd = ["snakemake", "-s", str(ROOT / "Snakefile"), "--directory", str(work), "--configfile", str(config),
           "--workflow-profile", str(ROOT / "workflow/profiles/slurm"), "--slurm-init-seconds-before-status-checks",
           "2", "--seconds-between-status-checks", "1", "--jobs", "8", STUDENT, shard]
    result = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-4000:]
    assert (work / STUDENT).stat().st_size > 0 and (work / "build/micro/train/L4/history.json").is_file()
    submitted = [(job["Comment"].removeprefix("rule_").split("_wildcards_")[0], job)
                 for job in jobs() if job.get("Comment", "").startswith("rule_")]
    assert sorted(rule for rule, _ in submitted) == ["search_shard", "train"], submitted
    for rule, job in submitted:
        assert job["JobState"] == "COMPLETED", (rule, job["JobState"])
        if rule == "train":  # the GPU rule: the gpu partition, one GPU
            assert job["Partition"] == "gpu" and job.get("TresPerJob") == "gres:gpu:1", job
        else:
            assert job["Partition"] == "cpu" and "gpu" not in job.get("TresPerJob", ""), job
