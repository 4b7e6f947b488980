"""Speed and quality benchmarks: `python -m benchmarks.NAME` from the repository root; results in results/benchmarks/."""
