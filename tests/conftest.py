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
