"""A profile's configuration (`naus.pipeline.schema`, workflow/schemas/config.schema.yaml): every value checked before the
DAG, each error one line naming the key or the line."""

import os
import re

import pytest
import yaml

from naus import NausError
from tests.helpers import ROOT, config_schema, run_cli, snakemake, write


def test_seeds_and_fractions_a_students_name_cannot_hold_are_refused_by_the_schema():
    from naus.pipeline import schema
    from tests.helpers import config_schema

    for train, message in (({"seeds": [-1]}, "minimum"), ({"seeds": [2**32]}, "maximum"),
                           ({"fractions": [0.00001]}, "minimum")):
        with pytest.raises(NausError, match=f"config key train.*{message}|less than the minimum|greater than the maximum"):
            schema.validate({"profile": "x", "data": {"source": "demo"}, "train": train}, config_schema(), False)


def test_a_key_given_twice_in_a_profile_is_an_error_naming_its_line():
    from naus.pipeline.schema import check_unique_keys

    with pytest.raises(NausError, match=r"p.yaml: line 3: key 'train' given twice"):
        check_unique_keys("profile: x\ntrain: {lr: 0.1}\ntrain: {max_steps: 3}\n", "p.yaml")
    with pytest.raises(NausError, match="line 3: key 'lr' given twice"):
        check_unique_keys("train:\n  lr: 0.1\n  lr: 0.2\n", "p.yaml")
    for profile in ("demo", "gigaword-sample", "paper"):
        check_unique_keys((ROOT / f"config/{profile}.yaml").read_text(), profile)


def test_a_profile_with_every_list_at_its_maximum_is_refused_before_the_dag(tmp_path):
    """Its 39,196 outputs (34,396 before ar-copy and nar-copy, 32,796 before source-order) kept Snakemake's dry run busy over 300 s and 925 MB; now one line at once."""
    import yaml

    from naus import settings
    from naus.pipeline import tables
    from tests.helpers import ROOT, resolved_config

    config = yaml.safe_load((ROOT / "config/demo.yaml").read_text())
    config["search"]["lengths"] = list(range(2, 18))
    config["train"].update(seeds=list(range(settings.MAX_SEEDS)), analysis_seeds=list(range(settings.MAX_SEEDS)),
                           fractions=[round(0.01 * (i + 1), 2) for i in range(32)])
    config["decode"].update(beam_sweep=list(range(1, 33)), char_sweep=list(range(20, 84)))
    config["analysis"] = {"lengths": list(range(2, 18))}
    resolved = resolved_config(write(tmp_path / "max.yaml", yaml.safe_dump(config)))
    with pytest.raises(NausError, match=r"asks for 39,196 outputs .* more than 5,000"):
        tables.spec(resolved)
    for profile in ("demo", "gigaword-sample", "paper"):  # the real ones are far below
        tables.spec(resolved_config(ROOT / f"config/{profile}.yaml"))


@pytest.mark.parametrize("section, value, key", [("train", {"max_steps": 100.0}, "train.max_steps"),
                                                  ("train", {"seeds": [1.0]}, "train.seeds.0"),
                                                  ("search", {"lengths": [8.0]}, "search.lengths.0")])
def test_a_float_where_the_configuration_wants_an_integer_is_refused_naming_its_key(tmp_path, section, value, key):
    """JSON Schema's integer accepts 100.0: the profile passed and a Snakemake traceback came from common.smk."""
    import yaml

    from tests.helpers import resolved_config

    config = yaml.safe_load((ROOT / "config/demo.yaml").read_text())
    config[section].update(value)
    with pytest.raises(NausError, match=rf"config key {key}: .* is not of type 'integer'"):
        resolved_config(write(tmp_path / "float.yaml", yaml.safe_dump(config)))


@pytest.mark.parametrize("kind", ["file", "fifo", "missing"])
def test_a_data_directory_that_is_none_is_one_line_before_the_dag(tmp_path, env, kind):
    """NAUS_DATA naming a file, a FIFO or nothing gave Snakemake's MissingInputException, many lines long."""
    path = tmp_path / "data"
    if kind == "file":
        write(path, "not a directory\n")
    elif kind == "fifo":
        os.mkfifo(path)
    code, out = snakemake(["-n", "--configfile", "config/gigaword-sample.yaml"], {**env, "NAUS_DATA": str(path)},
                          timeout=120)
    last = out.strip().splitlines()[-1]
    assert code != 0 and last.startswith(f"naus: error: {path}") and "Traceback" not in out
    assert "NAUS_DATA names" in last


def test_a_configuration_argument_nested_past_ours_is_one_line(capsys):
    code, err = run_cli(["report", "--config", "[" * 5000 + "]" * 5000, "--metrics", "m", "--build", "b",
                         "--out", "o"], capsys)
    assert code == 2 and "JSON nested too deeply" in err and "Traceback" not in err


@pytest.mark.parametrize("key, value", [(("train", "max_steps"), "500"), (("decode", "beam_sweep"), "[1, 2]")])
def test_a_configuration_value_that_arrives_as_text_says_so_and_how_to_pass_it(key, value):
    from naus.pipeline.schema import validate

    config = yaml.safe_load((ROOT / "config/demo.yaml").read_text())
    config.setdefault(key[0], {})[key[1]] = value
    with pytest.raises(NausError, match=rf"config key {'.'.join(key)}: '{re.escape(value)}' arrived as text, not "
                                        r"\w+ .*--configfile"):
        validate(config, config_schema(), set_default=False)
