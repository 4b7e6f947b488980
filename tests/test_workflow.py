"""The Snakemake workflow: config validation and the demo DAG as a dry run."""

import subprocess

from tests.conftest import ROOT, write


def snakemake(args, env, cwd=ROOT):
    """Run snakemake; returns (exit code, stdout and stderr together: Snakemake logs to either)."""
    result = subprocess.run(["snakemake", *args], capture_output=True, text=True, env=env, cwd=cwd)
    return result.returncode, result.stdout + result.stderr


def test_demo_dag_dry_run(env):
    code, out = snakemake(["-n", "--forceall"], env)
    assert code == 0, out
    assert "data_demo" in out


def test_out_of_range_config_value_names_the_key(tmp_path, env):
    bad = write(tmp_path / "bad.yaml", "profile: demo\ndata: {source: demo, dev_size: 0, test_size: 5, max_article_words: 0, seed: 0}\n")
    code, out = snakemake(["-n", "--configfile", str(bad)], env)
    assert code != 0
    assert "dev_size" in out and "minimum" in out


def test_gigaword_profile_needs_a_data_dir(env):
    env = {k: v for k, v in env.items() if k != "NAUS_DATA"}
    code, out = snakemake(["-n", "--configfile", "config/gigaword-sample.yaml"], env)
    assert code != 0
    assert "data.data_dir" in out and "NAUS_DATA" in out


def test_table_lengths_without_search_output_name_the_key(tmp_path, env):
    text = (ROOT / "config/demo.yaml").read_text().replace("profile: demo", "profile: check")
    bad = write(tmp_path / "bad.yaml", text.replace("analysis:\n  lengths: [8, 10]", "analysis:\n  lengths: [8, 12]"))
    code, out = snakemake(["-n", "--configfile", str(bad)], env)
    assert code != 0 and "analysis.lengths [8, 12]" in out and "search.lengths [8, 10]" in out
    duc = write(tmp_path / "duc.yaml", text + "duc:\n  length: 13\n")
    code, out = snakemake(["-n", "--configfile", str(duc)], env)
    assert code != 0 and "duc.length 13: Table 3 needs data.duc_dir" in out


def test_a_misspelt_config_key_stops_the_workflow_naming_it(tmp_path, env):
    text = (ROOT / "config/demo.yaml").read_text()
    bad = write(tmp_path / "typo.yaml", text.replace("\n  lr:", "\n  lrr:", 1))
    code, out = snakemake(["-n", "--configfile", str(bad)], env)
    assert code != 0 and "'lrr' was unexpected" in out and "['train']" in out, out[-2000:]
