"""Speed benchmarks (`python -m benchmarks.NAME` from the repository root; results in results/benchmarks/),
each against a reference in the same run; the one-off studies whose results are final are in `studies/`."""
