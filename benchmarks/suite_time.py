"""How long the README's test command (`make test`) takes on this machine, as CI runs it: in this checkout (the
one the installed `naus` points to, so the suite's subprocesses run the same code), its tree committed, numba's
compiled kernels removed first (a fresh clone compiles every decoder once), `NAUS_DATA` as the environment gives it.
The budget is for a plain 2-core AVX2 machine, which may be slower than this one.

    NAUS_DATA=../shared/data python -m benchmarks.suite_time      # -> results/benchmarks/suite_time.json
"""

from __future__ import annotations

import os
import re
import subprocess
import time

from benchmarks.pipeline_time import ROOT, git
from benchmarks.common import cpu_name
from naus.files import write_json

BUDGET_SECONDS = 480


def main() -> None:
    if git("status", "--porcelain", "--untracked-files=no", cwd=ROOT):
        raise SystemExit("commit first: the suite is timed at a commit, and this tree has changes")
    kernels = [path for path in (ROOT / "naus").rglob("__pycache__/*") if path.suffix in (".nbi", ".nbc")]
    for path in kernels:
        path.unlink()
    tick = time.perf_counter()
    done = subprocess.run(["make", "test"], cwd=ROOT, capture_output=True, text=True)
    seconds = round(time.perf_counter() - tick, 1)
    summary = (done.stdout.strip().splitlines() or [""])[-1]
    if done.returncode:
        raise SystemExit(f"make test failed ({done.returncode}): {summary}\n{done.stderr[-2000:]}")
    write_json(ROOT / "results" / "benchmarks" / "suite_time.json", {
        "commit": git("rev-parse", "HEAD", cwd=ROOT), "machine": cpu_name(), "cores": os.cpu_count(),
        "data": "NAUS_DATA set" if os.environ.get("NAUS_DATA") else "NAUS_DATA unset (the real-data tests skipped)",
        "seconds": seconds, "budget_seconds": BUDGET_SECONDS, "pytest": re.sub(r"=+", "", summary).strip(),
        "numba_kernels_removed": len(kernels),
        "note": "make test's wall time (its set-up already done) in the checkout the installed package points to, "
                "numba's compiled kernels removed first, nothing else running"})
    print(f"make test: {seconds:.0f} s on {os.cpu_count()} cores of {cpu_name()} ({summary})")


if __name__ == "__main__":
    main()
