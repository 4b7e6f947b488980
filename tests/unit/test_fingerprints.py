"""Fingerprints (`naus.fingerprints`): stale marks name the students they are about."""

import json

import pytest

from naus import NausError
from tests.helpers import write


def test_mark_stale_on_fingerprints_naming_no_student_is_one_line(tmp_path):
    from naus.fingerprints import refresh

    write(tmp_path / "fingerprints.json", json.dumps({"settings": {}, "search": {}, "decodings": {}, "stale": ["x"],
                                                      "students": {"not-a-student": {"settings": {"model": {}}}}}))
    with pytest.raises(NausError, match="fingerprints.json: students: 'not-a-student' is not a student's name"):
        refresh(tmp_path, {"profile": "p"})
