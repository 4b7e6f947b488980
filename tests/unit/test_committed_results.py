"""The committed results of each profile are what the profile makes: no metric of a student or decoding it no
longer has, none missing."""

import pytest
import yaml

from naus import layout, schema, tables
from tests.helpers import ROOT


def made(profile: str) -> set[str]:
    config = yaml.safe_load((ROOT / f"config/{profile}.yaml").read_text())
    spec = tables.spec(schema.resolve(config, yaml.safe_load((ROOT / "workflow/schemas/config.schema.yaml").read_text())))
    return ({layout.metrics_file(stem) for stem in spec.stems("test")}
            | {layout.metrics_file(stem, tables.PROTOCOLS["duc"].folder) for stem in spec.stems("duc")})


@pytest.mark.parametrize("profile", ["demo", "gigaword-sample"])
def test_the_committed_metrics_are_those_the_profile_makes(profile):
    results = ROOT / layout.profile_dir("results", profile)
    found = {str(path.relative_to(results)) for path in (results / layout.METRICS).rglob("*.json")}
    expected = made(profile)
    assert not found - expected, f"committed, but the profile makes none: {sorted(found - expected)[:5]}"
    assert not expected - found, f"the profile makes, none committed: {sorted(expected - found)[:5]}"
