"""The jobs a configuration asks for (naus.pipeline.plan): every decoding the tables read, by its path, with its
settings; every student, with what it is made of; found by path, never by taking a name apart."""

import pytest

from naus.pipeline import layout, plan
from tests.helpers import ROOT, resolved_config


@pytest.mark.parametrize("profile", ["demo", "gigaword-sample", "paper"])
def test_every_decoding_the_tables_read_is_a_planned_job_whose_path_is_its_settings(profile):
    made = plan.plan(resolved_config(ROOT / f"config/{profile}.yaml"))
    read = [stem for split in ("test", "duc") for stem in made.spec.stems(split) if stem.startswith("decode/")]
    assert list(made.decodings) == read and read
    for stem, decoding in made.decodings.items():
        assert decoding.stem == stem and layout.parse_decoded(stem) == decoding
        assert made.student(decoding.model).name == decoding.model
    grouped = made.decodings_by_student()
    assert sum(map(len, grouped.values())) == len(read)
    assert all(d.split == split and d.model == model for (split, model), ds in grouped.items() for d in ds)


def test_a_later_generation_learns_from_the_ensemble_of_the_one_before_and_both_are_planned(tmp_path):
    (tmp_path / "more.yaml").write_text("train: {seeds: [0, 1, 2], generations: 3}\n")
    made = plan.plan(resolved_config(ROOT / "config/demo.yaml", tmp_path / "more.yaml"))
    third = made.students["L10-g3-s2"]
    assert (third.length, third.seed, third.generation, third.teacher) == (10, 2, 3, "L10-g2-ens")
    assert third.inputs["train_target"] == f"{layout.decoded('pool', 'L10-g2-ens', 'length-control', 10)}.txt"
    ensemble = made.students["L10-g2-ens"]  # planned though no table decodes with it: the chain reads it
    assert ensemble.ensemble and ensemble.members == ("L10-g2", "L10-g2-s1", "L10-g2-s2")
    assert ensemble.teacher == "L10-ens" and made.students["L10-ens"].members == ("L10", "L10-s1", "L10-s2")
    assert made.students["L10"].teacher is None and made.students["L10"].inputs["train_target"] == "search/pool/L10.txt"


def test_a_student_is_its_profiles_architecture_unless_its_name_says_and_an_unplanned_one_is_made_from_its_name():
    made = plan.plan(resolved_config(ROOT / "config/demo.yaml"))
    own = made.students["L10"]
    assert own.arch == made.spec.config["model"]["arch"] and own.frozen  # the demo's students learn on frozen states
    assert made.students["ar-L10"].arch == "ar" and not made.students["ar-L10"].frozen
    asked = made.student("L9-f0.5-s4")  # a study's, asked for from the command line
    assert "L9-f0.5-s4" not in made.students and (asked.length, asked.fraction, asked.seed) == (9, 0.5, 4)
    with pytest.raises(ValueError, match="not a student's name"):
        made.student("L9-x")
