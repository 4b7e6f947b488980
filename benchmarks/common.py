"""What the benchmarks share: the rule a dev study chooses by (the machine each records is `naus.device`'s)."""

from __future__ import annotations

import statistics

from naus import NausError


def choose(recipes: dict[str, dict]) -> tuple[str, dict]:
    """The recipe with the highest mean dev total over every length (each length weighs the same), and
    per length its winner; a recipe without a dev score at some length cannot win."""
    lengths = sorted({run["length"] for runs in recipes.values() for run in runs.values()})
    means = {name: {n: statistics.mean(r["total"] for r in runs.values() if r["length"] == n)
                    for n in lengths if any(r["length"] == n for r in runs.values())}
             for name, runs in recipes.items()}
    complete = [name for name in recipes if len(means[name]) == len(lengths)]
    if not lengths or not complete:
        raise NausError(f"no recipe has dev scores at every length {lengths}: nothing to choose from")
    chosen = max(complete, key=lambda name: statistics.mean(means[name].values()))
    per_length = {n: max((name for name in recipes if n in means[name]), key=lambda name: means[name][n])
                  for n in lengths}
    return chosen, {"mean_dev_total": {name: {str(n): round(v, 2) for n, v in m.items()} for name, m in means.items()},
                    "winner_per_length": {str(n): name for n, name in per_length.items()}}
