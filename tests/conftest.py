"""Fixtures every test directory uses: the subprocess environment and the shared real data."""

import os
from pathlib import Path

import pytest

from tests.helpers import BIN


@pytest.fixture
def env() -> dict[str, str]:
    """The environment for subprocesses: the venv's bin first, so `naus`, `snakemake` and `lmplz` resolve."""
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


@pytest.fixture
def shared_data() -> Path:
    value = os.environ.get("NAUS_DATA")
    if not value:
        pytest.skip("NAUS_DATA is unset: the real Gigaword/DUC2004 data is not available")
    path = Path(value)
    if not (path / "gigaword").is_dir():
        pytest.skip(f"NAUS_DATA={value} has no gigaword/ directory")
    return path


# The modules whose tests share the micro workflow run (tests/workflow/conftest.py: a session fixture, so one run
# per process); the workflow conftest refuses a test that uses it from another module.
MICRO_RUN_MODULES = ("tests/workflow/test_dvc.py", "tests/workflow/test_pipeline.py")


def pytest_xdist_make_scheduler(config, log):
    """pytest-xdist's scheduler for `make test`: the tests that share the micro run on one worker, first (the
    suite's longest step), every other test wherever a worker is free."""
    from xdist.scheduler import LoadScopeScheduling

    class MicroRunTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return "micro run" if nodeid.split("::")[0] in MICRO_RUN_MODULES else nodeid

    return MicroRunTogether(config, log)
