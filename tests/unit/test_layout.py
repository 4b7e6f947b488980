import re
import subprocess

import pytest

from naus.pipeline import layout
from tests.helpers import ROOT, write


@pytest.mark.parametrize("name, student", [
    ("L10", layout.StudentName("naus", 10, 1.0, 0)),
    ("L10-f0.25", layout.StudentName("naus", 10, 0.25, 0)),
    ("ar-L8-s2", layout.StudentName("ar", 8, 1.0, 2)),
    ("nar-ctc-L10-f0.5-s11", layout.StudentName("nar-ctc", 10, 0.5, 11)),
    ("L10-g2-s3", layout.StudentName("naus", 10, 1.0, 3, generation=2)),
    ("L8-ens", layout.StudentName("naus", 8, 1.0, 0, ensemble=True)),
    ("L8-g12-ens", layout.StudentName("naus", 8, 1.0, 0, generation=12, ensemble=True)),
])
def test_a_students_name_says_what_it_is_and_back(name, student):
    """Seed 0 and the first generation have no suffix, so a one-seed profile keeps the names its results were
    made under."""
    assert layout.parse_model(name) == student
    seed = layout.ENSEMBLE if student.ensemble else student.seed
    assert layout.model(student.length, student.arch, student.fraction, seed, student.generation) == name
    assert re.fullmatch(layout.MODEL_PATTERN, name)


def test_a_name_that_is_no_student_is_refused():
    for name in ("L10-s", "L10-s1-f0.5", "xl-L10", "10", "L10-g1", "L10-g0", "L10-ens-s1", "L10-s1-g2"):
        with pytest.raises(ValueError, match="not a student's name"):
            layout.parse_model(name)


def test_targets_as_options_and_labels():
    assert [layout.target_option(t) for t in ("10", "r0.5", "c75")] == ["--length 10", "--ratio 0.5", "--chars 75"]
    assert [layout.target_label(t) for t in ("10", "r0.5", layout.chars_target(50))] == ["10", "50%", "50 chars"]


def test_later_generations_and_the_ensemble_are_rows_of_tables_2_and_3(tmp_path):
    """train.generations and decode.ensemble add rows by every method: generation 2's seeds, then its seeds as
    one model; the first generation's rows and Table 3 stay as they were."""
    from naus.pipeline import tables
    from tests.helpers import ROOT, resolved_config

    (tmp_path / "seeds.yaml").write_text("train: {seeds: [0, 1]}\n")
    (tmp_path / "more.yaml").write_text("train: {seeds: [0, 1], generations: 2}\ndecode: {ensemble: true}\n")
    base = tables.spec(resolved_config(ROOT / "config/demo.yaml", tmp_path / "seeds.yaml"))
    more = tables.spec(resolved_config(ROOT / "config/demo.yaml", tmp_path / "more.yaml"))
    first = more.table("table2").groups[0]
    assert first.key == 8
    rows = {row.label: row for row in first.rows}
    assert rows["NAUS length control, generation 2 (ours)"].stems == (
        "decode/test/L8-g2/length-control-8", "decode/test/L8-g2-s1/length-control-8")
    assert rows["NAUS truncate, generation 2, 2 seeds as one model (ours)"].stems == ("decode/test/L8-g2-ens/truncate-8",)
    assert set(base.stems()) < set(more.stems()) and more.table("table4") == base.table("table4")

# -- hostile and careless input (the review rounds): each test names the input it spoils and what it did before --

@pytest.mark.parametrize("profile", ["demo.yaml /some/dir", "demo /tmp", "../config/demo", "demo.yaml", "lease-partial"])
def test_make_refuses_a_profile_that_is_not_a_profiles_name_and_removes_nothing(tmp_path, profile):
    """`make clean PROFILE='demo.yaml /some/dir'` passed the check (`$(wildcard)` found config/demo.yaml) and would
    have run `rm -rf build/demo.yaml /some/dir`."""
    keep = write(tmp_path / "keep" / "file.txt", "kept\n")
    result = subprocess.run(["make", "-n", "clean", f"PROFILE={profile}"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode != 0 and "rm " not in result.stdout
    assert "no profile" in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    result = subprocess.run(["make", "clean", f"PROFILE={profile}"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode != 0 and keep.read_text() == "kept\n"
