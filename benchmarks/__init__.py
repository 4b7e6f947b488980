"""Speed benchmarks (`python -m benchmarks.NAME` from the repository root; results in results/benchmarks/),
each against a reference in the same run; what they share is `common`. The one-off studies whose decisions are
made are kept in `archive/` (its README: study, JSON, decision), and nothing outside it imports them."""
