"""Fingerprints (`naus.pipeline.fingerprints`): stale marks name the students they are about."""

import json

import pytest

from naus import NausError
from tests.helpers import write


def test_mark_stale_on_fingerprints_naming_no_student_is_one_line(tmp_path):
    from naus.pipeline.fingerprints import refresh

    write(tmp_path / "fingerprints.json", json.dumps({"settings": {}, "search": {}, "decodings": {}, "stale": ["x"],
                                                      "students": {"not-a-student": {"settings": {"model": {}}}}}))
    with pytest.raises(NausError, match="fingerprints.json: students: 'not-a-student' is not a student's name"):
        refresh(tmp_path, {"profile": "p"})


def test_a_one_stage_search_is_not_stale_for_an_estimator_it_never_used_nor_for_the_table_it_records_by_sha256():
    """The pair-free chain's searches (rerank_k 0) record no learned estimate, and search.static_vectors is the table
    their provenance names by its sha256: neither marks them stale; a changed rerank_k still does."""
    from naus.pipeline.fingerprints import recorded_settings, stale

    config = {"search": {"rerank_k": 0, "estimator": "learned", "static_vectors": "word-vectors", "gamma": 12.0}}
    made = {"rerank_k": 0, "estimator": "in-context", "gamma": 12.0}
    prints = {"settings": recorded_settings(config), "search": {"pool/L10": {"settings": made}}, "students": {}}
    assert stale(prints) == []
    prints["search"]["pool/L10"]["settings"] = {**made, "rerank_k": 200}
    assert stale(prints) == ["search.estimator: 'in-context' made the results, the configuration says 'learned'",
                             "search.rerank_k: 200 made the results, the configuration says 0"]  # it re-ranked
