import pytest

from naus import layout


@pytest.mark.parametrize("name, student", [
    ("L10", layout.StudentName("naus", 10, 1.0, 0)),
    ("L10-f0.25", layout.StudentName("naus", 10, 0.25, 0)),
    ("ar-L8-s2", layout.StudentName("ar", 8, 1.0, 2)),
    ("nar-ctc-L10-f0.5-s11", layout.StudentName("nar-ctc", 10, 0.5, 11)),
])
def test_a_students_name_says_what_it_is_and_back(name, student):
    """Seed 0 has no suffix, so a one-seed profile keeps the names its results were made under."""
    assert layout.parse_model(name) == student
    assert layout.model(student.length, student.arch, student.fraction, student.seed) == name


def test_a_name_that_is_no_student_is_refused():
    for name in ("L10-s", "L10-s1-f0.5", "xl-L10", "10"):
        with pytest.raises(ValueError, match="not a student's name"):
            layout.parse_model(name)


def test_targets_as_options_and_labels():
    assert [layout.target_option(t) for t in ("10", "r0.5", "c75")] == ["--length 10", "--ratio 0.5", "--chars 75"]
    assert [layout.target_label(t) for t in ("10", "r0.5", layout.chars_target(50))] == ["10", "50%", "50 chars"]
