"""benchmarks.pipeline_time's AVX2 projection: each stage's job-seconds scaled by its factor, a set-up's KenLM build
and Debian packages counted as a fresh AVX2 machine did them; a summary says the machine its runs recorded."""

import pytest

from benchmarks.pipeline_time import (AVX2_SLOWER, KENLM_HERE, SETUP_THERE, TEST_ONLY_PACKAGES_HERE, avx2_projection,
                                      machine, ran_on_one_machine)

STAGES = {"search": {"seconds": 10.0}, "train": {"seconds": 10.0}, "report": {"seconds": 10.0}}  # report: unscaled


def test_the_pipeline_is_scaled_as_its_job_seconds_are():
    scaled = 10.0 * AVX2_SLOWER["search"] + 10.0 * AVX2_SLOWER["train"] + 10.0
    assert avx2_projection(60.0, STAGES)["seconds"] == round(60.0 * scaled / 30.0)
    assert "setup_seconds" not in avx2_projection(60.0, STAGES)


def test_a_set_up_gets_kenlm_as_long_as_there_and_the_debian_packages_only_where_they_were_installed_already():
    """The Debian packages as long as there, less the two the tests alone need (`make setup` installs them no more)."""
    pipeline = avx2_projection(60.0, STAGES)["seconds"]
    installed = avx2_projection(100.0, STAGES, {"seconds": 40.0, "debian_packages_installed_by_it": []})
    kenlm = 40.0 + SETUP_THERE["kenlm_build"] - KENLM_HERE
    assert installed["pipeline_seconds"] == pipeline
    assert installed["setup_seconds"] == round(kenlm + SETUP_THERE["debian_packages"] - TEST_ONLY_PACKAGES_HERE)
    assert 0 < TEST_ONLY_PACKAGES_HERE < SETUP_THERE["debian_packages"]
    assert installed["seconds"] == installed["setup_seconds"] + pipeline
    fresh = avx2_projection(100.0, STAGES, {"seconds": 40.0, "debian_packages_installed_by_it": ["cmake"]})
    assert fresh["setup_seconds"] == round(kenlm)


def test_a_summary_names_the_machine_and_pins_its_runs_recorded_and_refuses_runs_that_differ_or_recorded_none():
    """`--summary-only` once stamped old runs with the pins of the day it was run (numba's, added later)."""
    here = machine()
    assert ran_on_one_machine([{"ran_on": here}, {"ran_on": here}]) == here
    unpinned = {**here, "pinned_to_avx2": {}}
    with pytest.raises(SystemExit, match="different machines or pins"):
        ran_on_one_machine([{"ran_on": here}, {"ran_on": unpinned}])
    with pytest.raises(SystemExit, match="records no machine"):
        ran_on_one_machine([{"seconds": 1.0}, {"ran_on": here}])
