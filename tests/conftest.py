import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


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


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path
