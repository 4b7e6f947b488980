"""The committed results of each profile are what the profile makes: no metric of a student or decoding it no
longer has, none missing."""

import pytest

from naus.pipeline import layout, tables
from tests.helpers import ROOT, resolved_config


# Each committed profile's results (their folder's name) and the configuration files that make them, in order.
PROFILES = {"demo": ["demo"], "gigaword-sample": ["gigaword-sample"],
            "gigaword-sample-pair-free": ["gigaword-sample", "overlay-pair-free"]}


def config(profile: str) -> dict:
    return resolved_config(*(ROOT / f"config/{name}.yaml" for name in PROFILES[profile]))


def made(profile: str) -> set[str]:
    spec = tables.spec(config(profile))
    return ({layout.metrics_file(stem) for stem in spec.stems("test")}
            | {layout.metrics_file(stem, tables.PROTOCOLS["duc"].folder) for stem in spec.stems("duc")})


@pytest.mark.parametrize("profile", list(PROFILES))
def test_the_committed_metrics_are_those_the_profile_makes(profile):
    results = ROOT / layout.profile_dir("results", profile)
    found = {str(path.relative_to(results)) for path in (results / layout.METRICS).rglob("*.json")}
    expected = made(profile)
    assert not found - expected, f"committed, but the profile makes none: {sorted(found - expected)[:5]}"
    assert not expected - found, f"the profile makes, none committed: {sorted(expected - found)[:5]}"


@pytest.mark.parametrize("profile", list(PROFILES))
def test_the_flat_metrics_and_headline_are_of_the_committed_metrics(profile):
    """metrics.json (every ROUGE) and headline.json (`dvc metrics show`) were written by the same report."""
    import json

    results = ROOT / layout.profile_dir("results", profile)
    folder = results / layout.METRICS
    flat = json.loads((results / layout.FLAT_METRICS).read_text())
    assert set(flat) == {str(path.relative_to(folder).with_suffix("")) for path in folder.rglob("*.json")}
    spec = tables.spec(config(profile))
    assert set(json.loads((results / layout.HEADLINE).read_text())) == {f"L{n}" for n in spec.lengths}


def test_another_protocols_committed_run_holds_what_table2_reads_of_it():
    """gigaword-sample's report.other_protocol: the metrics of exactly the rows Table 1 shows of it, and a
    provenance naming the protocol that is not the profile's."""
    import json

    spec = tables.spec(resolved_config(ROOT / "config/gigaword-sample.yaml"))
    groups = [g for g in spec.table("table2").groups if g.other and g.other.p_label == "p vs other LM"]
    assert groups and {g.other.expects for g in groups} == {(("lm_titles", "all"),)}
    folder = ROOT / groups[0].other.folder
    found = {str(path.relative_to(folder)) for path in (folder / layout.METRICS).rglob("*.json")}
    assert found == {layout.metrics_file(s) for g in groups for row in g.rows for s in row.stems}
    assert json.loads((folder / "provenance.json").read_text())["lm_titles"] == "all"


def test_the_pair_free_chains_committed_run_is_what_table1_reads_of_it():
    """gigaword-sample's report.pair_free: what config/overlay-pair-free.yaml makes over the profile, recorded as made
    without MiniLM (its fingerprints), by the commit and with the training settings of gigaword-sample's own report,
    so that Tables 1 and 2 test its seeds against this chain's."""
    import json

    spec = tables.spec(config("gigaword-sample"))
    runs = [g.other for t in spec.tables for g in t.groups if g.other and g.other.label == tables.PAIR_FREE]
    assert runs and {run.folder for run in runs} == {layout.profile_dir("results", "gigaword-sample-pair-free")}
    theirs = json.loads((ROOT / runs[0].record).read_text())
    ours = json.loads((ROOT / layout.profile_dir("results", "gigaword-sample") / layout.FINGERPRINTS).read_text())
    assert theirs["settings"]["search"]["static_vectors"] == "word-vectors"
    assert theirs["made_by"] == ours["made_by"] and theirs["settings"]["train"] == ours["settings"]["train"]
