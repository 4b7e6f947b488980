"""Fixtures every test directory uses: the subprocess environment and the shared real data."""

import os
from collections import Counter
from pathlib import Path

import pytest

from tests.helpers import BIN

# Under pytest-xdist every worker, and the processes the tests start, share the machine's few cores: OpenMP's
# idle workers (torch's, numba's) must sleep rather than spin, or a worker spinning beside a busy one takes its
# core (the unit tests ran 2-10x slower beside the micro run). And one thread each, as `-n auto` starts a worker a
# core: two threads a worker (torch's, numba's and ONNX Runtime's default on two cores) cost the suite about 33 CPU
# seconds of contention on tiny tensors (benchmarks/suite_time.py). A test of threading asks for its threads; the
# micro run's jobs get theirs from Snakemake. Set here, before any test module loads torch.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture
def env() -> dict[str, str]:
    """The environment for subprocesses: the venv's bin first, so `naus`, `snakemake` and `lmplz` resolve."""
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


@pytest.fixture
def shared_data() -> Path:
    """The development data (`NAUS_DATA`: Rush-format Gigaword, DUC2004, the peers' releases). `NAUS_MIRROR`, where
    set, names a full mirror of the manifest's raw files (SOURCE/PATH) for the fetch tests (tests/unit/test_sources.py)."""
    value = os.environ.get("NAUS_DATA")
    if not value:
        pytest.skip("NAUS_DATA is unset: the real Gigaword/DUC2004 data is not available")
    path = Path(value)
    if not (path / "gigaword").is_dir():
        pytest.skip(f"NAUS_DATA={value} has no gigaword/ directory")
    return path


# The modules whose tests share the micro workflow run (tests/workflow/conftest.py: a session fixture, so one run
# per process); the workflow conftest refuses a test that uses it from another module.
# The order they run in: those that read the run before the pipeline test's import replaces its students.
MICRO_RUN_MODULES = ("tests/workflow/test_printed_commands.py",
                     "tests/workflow/test_pipeline.py", "tests/workflow/test_slurm.py")


def module_of(nodeid: str) -> str:
    return nodeid.split("::")[0]


def pytest_collection_modifyitems(items):
    """The order the modules are handed out in under pytest-xdist (`make test`): the micro run's first (the
    suite's longest step), then the other workflow modules (each test a Snakemake run: seconds), then the unit
    modules with the most tests first, so that the last to finish is short."""
    sizes = Counter(module_of(item.nodeid) for item in items)

    def rank(item) -> tuple[int, int]:
        """The micro run's modules in their own order (MICRO_RUN_MODULES), then the other workflow modules, then
        the unit ones, each group by its number of tests."""
        module = module_of(item.nodeid)
        if module in MICRO_RUN_MODULES:
            return 0, MICRO_RUN_MODULES.index(module)
        return (1 if module.startswith("tests/workflow/") else 2), -sizes[module]

    items.sort(key=rank)


def pytest_xdist_make_scheduler(config, log):
    """pytest-xdist's scheduler for `make test`: the modules of the micro run on one worker, every other module
    wherever a worker is free, in the order above (a module's tests together, so that a module-scoped fixture,
    often a trained student, is made once)."""
    from xdist.scheduler import LoadScopeScheduling

    class MicroRunTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return "micro run" if module_of(nodeid) in MICRO_RUN_MODULES else module_of(nodeid)

    config.option.loadscopereorder = False  # its reordering (by number of tests) would put the micro run late
    return MicroRunTogether(config, log)
