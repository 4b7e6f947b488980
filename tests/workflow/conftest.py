"""The micro profile: fixture data, a profile small enough to run the whole workflow in a test, and one
run of it that the workflow tests share (the pipeline test checks it, DVC's stages run over it, the SLURM
test starts from its build)."""

import json
import os
import random
import shutil
import subprocess

import pytest

from tests.conftest import MICRO_RUN_MODULES
from tests.helpers import BIN, HEADLINES, ROOT, write
from tests.helpers import snakemake as run_snakemake

WORDS = "police government stocks president japan minister protesters schools talks trade earnings war".split()
FILLER = "the a of on in said thursday monday as after for with".split()


def sentence(rng, length):
    return " ".join(rng.choice(WORDS if rng.random() < 0.5 else FILLER) for _ in range(length))


MICRO = """
profile: micro
data: {{source: gigaword, data_dir: {data}, pool_article: pool/article.txt, pool_title: pool/title.txt,
       test_article: test/input.txt, test_title: test/ref.txt, extra_headlines: [extra.txt], duc_dir: duc,
       dev_size: 8, seed: 0}}
lm: {{order: 2, memory: "5%"}}
search: {{lengths: [4], shards: 1, pool_limit: 0, fluency: slor, gamma: 0.0, rerank_k: 6, rerank_exact: 2,
         embedder: onnx-int8, rerank_gamma: 48.0, steps_coef: 0.02, restarts_coef: 0.02, seed: 0}}
model: {{n_layers: 1, d_model: 16, n_heads: 2, d_ff: 32, dropout: 0.0, max_len: 32}}
train: {{max_steps: 6, max_tokens: 256, lr: 1.0e-3, warmup: 2, weight_decay: 0.01, clip: 2.0, smoothing: 0.1,
        min_count: 1, eval_every: 3, checkpoint_every: 3, seeds: [0], fractions: [0.5]}}
decode: {{methods: [truncate, length-control], beam_size: 3, batch_size: 8, beam_sweep: [2],
         transfer: [[4, "r0.5"]], chars: [[4, 20]], char_sweep: [20],
         batch1_samples: 2, timing_passes: 1}}
analysis: {{lengths: [4], archs: [ar, naus-copy]}}
duc: {{length: 4}}
"""


def pytest_collection_modifyitems(items):
    """The tests over the micro run share one run only on one worker (tests/conftest.py hands their modules to
    one): a test of it elsewhere would make a second."""
    shared = [item for item in items if "micro_run" in getattr(item, "fixturenames", ())]
    strays = [item.nodeid for item in shared if item.nodeid.split("::")[0] not in MICRO_RUN_MODULES]
    if strays:
        raise pytest.UsageError(f"{strays}: a test of the micro run belongs in one of {MICRO_RUN_MODULES}")


def snakemake(workdir, config, env, *extra):
    """The venv's Snakemake with the venv not on PATH (not activated): the rules must still find its python and
    lmplz."""
    return run_snakemake(["-s", ROOT / "Snakefile", "--directory", workdir, "--configfile", config, "--cores", "2",
                          *extra], {**env, "PATH": "/usr/bin:/bin"})


SHARED_TIMING = ("--set-threads", "time_decode=1")  # the micro times mean nothing: share the cores


@pytest.fixture(scope="session")
def micro(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("micro")
    rng = random.Random(0)
    data = tmp / "data dir"  # a path with a space: every rule passes it quoted
    pool = [sentence(rng, rng.randint(6, 14)) for _ in range(40)]
    test = [sentence(rng, rng.randint(6, 14)) for _ in range(6)]
    write(data / "pool/article.txt", "".join(s + "\n" for s in pool))
    titles, unpaired = HEADLINES[:4], HEADLINES[4:]  # the LM reads no searched article's title, not even a copy
    write(data / "pool/title.txt", "".join(rng.choice(titles) + "\n" for _ in pool))
    write(data / "test/input.txt", "".join(s + "\n" for s in test))
    write(data / "test/ref.txt", "".join(rng.choice(titles) + "\n" for _ in test))
    write(data / "extra.txt", "".join(h + "\n" for h in unpaired * 40))
    duc = [sentence(rng, rng.randint(6, 14)) + f" in {1990 + i}" for i in range(5)]  # DUC2004 keeps digits
    write(data / "duc/input.txt", "".join(s + "\n" for s in duc))
    for i in range(4):
        write(data / f"duc/task1_ref{i}.txt", "".join(rng.choice(HEADLINES) + f" {1990 + k}\n" for k in range(5)))
    write(tmp / "secret.txt", SECRET)
    config = write(tmp / "micro.yaml", MICRO.format(data=data) + f"note: {json.dumps(hostile(tmp))}\n")
    return tmp, config


# Text the HTML report must show as text (tests/unit/test_markup.py: every escape): a Jinja2 template that
# would create a file named X in Snakemake's directory, and directives that would show a local file and a script.
JINJA = '{% set u = (lipsum ~ "")[18] %}{{ lipsum[u~u~"globals"~u~u]["os"].popen("touch X").read() }}'
SECRET = "SECRET-FILE-CONTENT-42"


def hostile(tmp) -> str:
    return f"{JINJA}\n\n.. include:: {tmp / 'secret.txt'}\n\n.. raw:: html\n\n   <script>alert(1)</script>\n"


@pytest.fixture(scope="session")
def micro_run(micro):
    """The whole micro workflow, run once: (its exit status, its output); the workdir is `micro`'s."""
    workdir, config = micro
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return snakemake(workdir, config, env, *SHARED_TIMING)


@pytest.fixture
def repo_copy(tmp_path):
    """A copy of the repository: its tracked files but results/ (except the earlier runs a report shows beside its
    own, results/protocols/), a git repository of its own, `.venv` linked and
    its set-up older than it (`make`'s targets find it done)."""
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    copy = tmp_path / "repo"
    for name in filter(None, tracked.decode().split("\0")):
        if name.startswith("results/") and not name.startswith("results/protocols/") or not (ROOT / name).exists():
            continue
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        if (ROOT / name).is_symlink():  # profiles -> workflow/profiles: Snakemake's default profile
            (copy / name).symlink_to(os.readlink(ROOT / name))
        else:
            shutil.copy2(ROOT / name, copy / name)
    subprocess.run(["git", "init", "-q"], cwd=copy, check=True)
    (copy / ".venv").symlink_to(BIN.parent)
    for setup in ("requirements.lock", "pyproject.toml"):
        os.utime(copy / setup, (0, 0))
    return copy


@pytest.fixture
def micro_checkout(repo_copy, micro, micro_run):
    """`repo_copy` whose demo profile is the micro one, its build, results and logs the micro run's with their
    times (Snakemake finds them up to date)."""
    workdir, config = micro
    assert micro_run[0] == 0, micro_run[1][-3000:]
    copy = repo_copy
    (copy / "config/demo.yaml").write_text(config.read_text())
    for folder in ("build/micro", "results/micro", "logs/micro"):
        shutil.copytree(workdir / folder, copy / folder, symlinks=True)
    for kernel in (ROOT / "naus").rglob("__pycache__/*.nb[ic]"):  # numba's, compiled by the run (a user's
        (copy / kernel.relative_to(ROOT)).parent.mkdir(exist_ok=True)  # checkout keeps them): `python -` imports
        shutil.copy2(kernel, copy / kernel.relative_to(ROOT))  # the copy's naus
    return copy
