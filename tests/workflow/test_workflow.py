"""The Snakemake workflow: config validation and the demo DAG as a dry run."""

import re
import subprocess

import pytest
import yaml

from naus import NausError
from naus.pipeline import layout, schema
from naus.settings import SearchConfig
from tests.helpers import ROOT, config_schema, resolved_config, snakemake, write


def test_demo_dag_dry_run_with_the_default_profile(env):
    code, out = snakemake(["-n", "--forceall"], env)
    assert code == 0, out
    assert "data_demo" in out
    assert "Using workflow specific profile profiles/default" in out  # a plain `snakemake` finds it


def test_timing_jobs_hold_every_core_and_time_only_the_first_seed(tmp_path, env):
    """A decoding's time is measured alone (its job takes all the cores, so nothing is scheduled beside
    it), once per student row: for the first seed's student, not for every seed."""
    seeded = write(tmp_path / "seeds.yaml", "train: {seeds: [0, 1]}\n")
    code, out = snakemake(["-n", "--forceall", "--cores", "3", "--configfile", "config/demo.yaml", str(seeded)], env)
    assert code == 0, out[-3000:]
    jobs = re.findall(r"^rule (\w+):\n((?:[ \t]+.*\n?)+)", out, flags=re.M)  # a job: its rule and indented lines
    timed = [text for rule, text in jobs if rule == "time_decode"]
    decoded = [text for rule, text in jobs if rule in ("decode_student", "decode_student_on_states")]
    assert timed and all("threads: 3" in text for text in timed)
    assert all("threads: 3" not in text for text in decoded)  # the decodings themselves run side by side
    assert any("/L10-s1/" in text for text in decoded) and not any("/L10-s1/" in text for text in timed)



def test_every_decoding_job_is_given_the_library_defaults_no_profile_sets(env):
    """Stale work never shown as new: the source-order decoder's defaults (phrases, last word, adjacency) live in
    naus.settings only, so each decoding and timing job is given them as options; a changed default then changes its
    params and Snakemake decodes again (the demo's build once kept decodings of the old defaults)."""
    from naus.settings import DecodeConfig

    code, out = snakemake(["-n", "--forceall", "-p", "--configfile", "config/demo.yaml"], env)
    assert code == 0, out[-3000:]
    commands = [line for line in out.splitlines() if re.search(r"naus .*\b(decode|decode-all|time) ", line)]
    assert len(commands) >= 5, out[-3000:]
    for name in sorted(schema.COMMAND_LINE_ONLY["decode"] - {"min_length"}):
        option = f"--{name.replace('_', '-')} {getattr(DecodeConfig, name)}"
        assert all(option in command for command in commands), option

def refusal(*files) -> str:
    """What the resolution the workflow runs first (naus.pipeline.schema.resolve) says of a configuration: the
    workflow prints it in one line (the tests that run Snakemake on a bad configuration check that)."""
    with pytest.raises(NausError) as refused:
        resolved_config(*files)
    return str(refused.value)


def test_out_of_range_config_value_names_the_key(tmp_path):
    bad = write(tmp_path / "bad.yaml", "profile: demo\ndata: {source: demo, dev_size: 0, test_size: 5, max_article_words: 0, seed: 0}\n")
    assert "config key data.dev_size: 0 is less than the minimum of 1" in refusal(bad)


def test_gigaword_profile_needs_a_data_dir(env):
    env = {k: v for k, v in env.items() if k != "NAUS_DATA"}
    code, out = snakemake(["-n", "--configfile", "config/gigaword-sample.yaml"], env)
    assert code != 0
    assert "data.data_dir" in out and "NAUS_DATA" in out


def test_an_empty_data_directory_is_refused_naming_the_fetch_that_fills_it(tmp_path, env):
    """Hostile input, round nine, kind 1 (the user's data never an output): no rule writes the data directory, so
    Snakemake never deletes it (a missing file, -F, --delete-all-output); a file the profile reads that is missing
    stops the workflow in one line naming it and `naus data fetch`."""
    code, out = snakemake(["-n", "-p", "--configfile", "config/gigaword-sample.yaml"], {**env, "NAUS_DATA": str(tmp_path)})
    assert code != 0
    line = next(line for line in out.splitlines() if line.startswith("naus: error:"))
    assert f"{tmp_path}/" in line and "missing" in line
    assert f"`naus data fetch gigaword-sample --to {tmp_path}`" in line, line
    assert "data_fetch" not in out and not list(tmp_path.iterdir())


def test_a_data_directory_without_duc2004_names_it_and_the_tables_that_wait(shared_data, tmp_path, env):
    """Kind 5 (an outsider's fetch): everything but DUC2004 in place, the workflow asks for DUC2004 by name, with
    the tables that read it and the fetch option that brings it."""
    data = tmp_path / "data"
    for path in shared_data.rglob("*"):
        if path.is_file() and not path.relative_to(shared_data).parts[0] == "duc2004":
            (data / path.relative_to(shared_data)).parent.mkdir(parents=True, exist_ok=True)
            (data / path.relative_to(shared_data)).symlink_to(path)
    code, out = snakemake(["-n", "--configfile", "config/gigaword-sample.yaml"], {**env, "NAUS_DATA": str(data)})
    assert code != 0
    line = next(line for line in out.splitlines() if line.startswith("naus: error:"))
    assert f"{data}/duc2004/" in line and "DUC2004 is NIST's" in line and "table3" in line and "--duc" in line, line


def test_deleting_every_output_lists_no_file_of_the_data_directory(shared_data, env):
    """Kind 1: `snakemake --delete-all-output -n` on gigaword-sample lists the outputs that exist (the committed
    results, here) and no file of the data directory, every one of which exists."""
    code, out = snakemake(["--delete-all-output", "-n", "--configfile", "config/gigaword-sample.yaml"],
                          {**env, "NAUS_DATA": str(shared_data)})
    assert code == 0, out[-2000:]
    assert "Would delete results/gigaword-sample/README.md" in out  # the outputs that exist: the committed results
    assert str(shared_data) not in out and str(shared_data.resolve()) not in out


def test_a_profile_set_on_the_command_line_must_be_its_configuration_files(env):
    """Kind 4 (impossible numbers never in a table): `--config profile=gigaword-sample` on the demo's configuration
    would plan the demo's runs into gigaword-sample's build and results; refused in one line."""
    code, out = snakemake(["-n", "--configfile", "config/demo.yaml", "--config", "profile=gigaword-sample"], env)
    assert code != 0
    line = next(line for line in out.splitlines() if line.startswith("naus: error:"))
    assert "config key profile: 'gigaword-sample' is not 'demo', the profile of " in line, line
    assert "config/demo.yaml" in line


def test_table_lengths_without_search_output_name_the_key(tmp_path):
    text = (ROOT / "config/demo.yaml").read_text().replace("profile: demo", "profile: check")
    bad = write(tmp_path / "bad.yaml", re.sub(r"analysis:\n  lengths: \[[^]]*\]", "analysis:\n  lengths: [8, 12]", text))
    complaint = refusal(bad)
    assert "analysis.lengths [8, 12]" in complaint and "search.lengths [8, 10]" in complaint
    duc = write(tmp_path / "duc.yaml", text + "duc:\n  length: 13\n")
    assert "duc.length 13: Table 2 needs data.duc_dir" in refusal(duc)
    transfer = write(tmp_path / "transfer.yaml", text.replace('transfer: [[8, "10"]', 'transfer: [[13, "10"], [8, "10"]'))
    assert "decode.transfer: models of lengths [13] have no search output" in refusal(transfer)


def test_heads_that_do_not_divide_the_width_are_refused(tmp_path):
    text = (ROOT / "config/demo.yaml").read_text().replace("profile: demo", "profile: check")
    bad = write(tmp_path / "heads.yaml", text.replace("n_heads: 4", "n_heads: 3"))
    assert "config section model: d_model 128 is not a multiple of n_heads 3" in refusal(bad)
    dropout = write(tmp_path / "dropout.yaml", text.replace("model:", "model:\n  dropout: 1.0", 1))
    assert "config key model.dropout: 1.0 is greater than or equal to the maximum of 1" in refusal(dropout)


def test_a_misspelt_config_key_is_refused_naming_it(tmp_path):
    text = (ROOT / "config/demo.yaml").read_text()
    bad = write(tmp_path / "typo.yaml", text.replace("\n  lr:", "\n  lrr:", 1))
    assert "config key train: Additional properties are not allowed ('lrr' was unexpected)" in refusal(bad)


def schema_error(config: dict) -> str | None:
    """The schema's complaint about a configuration, on one line (None: valid)."""
    try:
        schema.validate(config, config_schema(), set_default=False)
    except NausError as err:
        return str(err)
    return None


@pytest.mark.parametrize("profile", ["..", ".", "a/../..", "/abs", ".hidden", "a/b", ""])
def test_a_profile_that_is_not_one_safe_path_component_is_refused_by_the_schema(profile):
    assert schema_error({"profile": profile, "data": {"source": "demo"}}) == \
        f"config key profile: {profile!r} does not match '^{layout.PROFILE_PATTERN}$'"
    assert schema_error({"profile": "gigaword-sample.v2", "data": {"source": "demo"}}) is None


@pytest.mark.parametrize("key, path", [("pool_article", "../../etc/passwd"), ("test_title", "/etc/passwd"),
                                       ("duc_dir", "duc/../../.."), ("extra_headlines", ["ok.txt", ".."])])
def test_a_data_path_outside_the_data_directory_is_refused_by_the_schema(key, path):
    data = {"source": "gigaword", "pool_article": "a", "pool_title": "b", "test_article": "c", "test_title": "d"}
    error = schema_error({"profile": "x", "data": {**data, key: path}})
    assert error is not None and error.startswith(f"config key data.{key}"), error


def test_a_climbing_profile_stops_the_workflow_before_anything_is_written(tmp_path, env):
    bad = write(tmp_path / "bad.yaml", (ROOT / "config/demo.yaml").read_text().replace("profile: demo", 'profile: ".."'))
    before = sorted(path.name for path in ROOT.iterdir())
    code, out = snakemake(["-n", "--configfile", str(bad)], env)
    assert code != 0 and "config key profile: '..' does not match" in out, out[-2000:]
    assert sorted(path.name for path in ROOT.iterdir()) == before


def test_a_default_a_bound_and_a_choice_are_written_once_in_the_settings_and_a_name_once_in_its_registry(
        monkeypatch):
    """One edit of naus.settings (or of a registry) changes the schema, the command line and the library."""
    import dataclasses

    from naus import settings
    from naus.architectures import ARCHITECTURES, Architecture
    from naus.cli import build_parser

    def field(kind, name):
        return next(f for f in dataclasses.fields(kind) if f.name == name)

    def option(command, dest):
        parser = build_parser()._subparsers._group_actions[0].choices[command]
        return next(a for a in parser._actions if a.dest == dest)

    beam, fluency = field(settings.DecodeConfig, "beam_size"), field(settings.SearchConfig, "fluency")
    monkeypatch.setattr(beam, "default", 9)
    monkeypatch.setattr(beam, "metadata", {**beam.metadata, "maximum": 12})
    monkeypatch.setattr(fluency, "metadata", {**fluency.metadata, "choices": ("slor", "perplexity", "unigram")})
    monkeypatch.setitem(ARCHITECTURES, "naus-wide", Architecture("naus-wide", "a wider NAUS", "a wider NAUS", True))
    built = config_schema()["properties"]
    assert built["decode"]["properties"]["beam_size"] == {**built["decode"]["properties"]["beam_size"], "default": 9,
                                                          "maximum": 12}
    assert built["search"]["properties"]["fluency"]["enum"] == ["slor", "perplexity", "unigram"]
    assert "naus-wide" in config_schema()["$defs"]["arch"]["enum"]
    assert option("decode", "beam_size").default == 9 and option("search", "fluency").choices == ("slor", "perplexity",
                                                                                                   "unigram")
    with pytest.raises(SystemExit):
        build_parser().parse_args(["decode", "--checkpoint", "c", "--input", "i", "--out", "o", "--beam-size", "13"])
    with pytest.raises(ValueError, match="beam_size must be between 1 and 12, got 13"):
        settings.DecodeConfig(beam_size=13)
    config = {"profile": "x", "data": {"source": "demo"}, "decode": {"beam_size": 13}}
    assert schema_error(config) == "config key decode.beam_size: 13 is greater than the maximum of 12"
    filled = {"profile": "x", "data": {"source": "demo"}}
    schema.validate(filled, config_schema(), set_default=True)
    assert filled["decode"]["beam_size"] == 9 and filled["model"]["arch"] == "naus"


def test_every_setting_of_a_section_is_in_the_schema_and_none_is_written_there_again():
    """The schema file holds the workflow's own keys; a setting written there too is refused at build."""
    import dataclasses

    built = config_schema()["properties"]
    for section, kind in schema.SECTIONS.items():
        names = {f.name for f in dataclasses.fields(kind) if "help" in f.metadata} - schema.COMMAND_LINE_ONLY.get(section, set())
        assert names <= set(built[section]["properties"]), section
    skeleton = yaml.safe_load((ROOT / "workflow/schemas/config.schema.yaml").read_text())
    skeleton["properties"]["lm"]["properties"] = {"order": {"type": "integer"}}
    with pytest.raises(NausError, match=r"section lm writes the settings \['order'\] of naus.settings.LMConfig again"):
        schema.build(skeleton)


def test_the_profiles_student_architectures_are_the_ctc_ones():
    """Tables 1 and 2 decode by length control: model.arch offers exactly the CTC architectures."""
    from naus.architectures import ARCHITECTURES

    assert config_schema()["$defs"]["arch"]["enum"] == [name for name, a in ARCHITECTURES.items() if a.ctc]


@pytest.mark.parametrize("section, key, value, complaint", [
    ("search", "lengths", [10, 8, 10], "has non-unique elements"),
    ("train", "seeds", list(range(1000)), "is too long"),
    ("decode", "beam_size", 10**6, "is greater than the maximum of 256"),
    ("decode", "batch_size", 10**6, "is greater than the maximum of 4096"),
])
def test_a_typo_that_would_build_a_huge_job_graph_is_refused_by_the_schema(section, key, value, complaint):
    error = schema_error({"profile": "x", "data": {"source": "demo"}, section: {key: value}})
    assert error is not None and error.startswith(f"config key {section}.{key}") and complaint in error, error


def test_a_profile_that_leaves_a_key_out_gets_the_schema_default_not_the_demos(tmp_path, env):
    """The demo profile is read only when no --configfile is given: a key a profile omits takes the default."""
    text = (ROOT / "config/demo.yaml").read_text().replace("profile: demo", "profile: other")
    demo_steps = yaml.safe_load(text)["train"]["max_steps"]
    lean = write(tmp_path / "lean.yaml", re.sub(r"  max_steps: .*\n", "", text))
    code, out = snakemake(["-n", "--configfile", str(lean), "--forceall", "-p", "build/other/train/L8/best.pt"], env)
    assert code == 0, out[-2000:]
    assert "--max-steps 100000" in out and f"--max-steps {demo_steps} " not in out
    code, out = snakemake(["-n", "--forceall", "-p", "build/demo/train/L8/best.pt"], env)
    assert code == 0 and f"--max-steps {demo_steps} " in out and "--n-layers 2" in out, out[-2000:]


def test_lint_is_clean(env):
    for profile in ("demo", "gigaword-sample", "paper"):
        code, out = snakemake(["--lint", "--configfile", f"config/{profile}.yaml"], {**env, "NAUS_DATA": "/nonexistent"})
        assert code == 0 and "Congratulations, your workflow is in a good condition" in out, out[-3000:]


def test_snakefmt_finds_nothing_to_change(env):
    """The Snakemake catalog's other quality check: the rule files as snakefmt (pinned, pyproject's line length)
    writes them."""
    result = subprocess.run(["snakefmt", "--check", "Snakefile", "workflow/"], capture_output=True, text=True, env=env,
                            cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]


def test_ruff_finds_nothing(env):
    """Pyflakes' checks and the package's line length (pyproject's [tool.ruff]: 120) over the package, its tests,
    benchmarks and scripts."""
    result = subprocess.run(["ruff", "check", "naus", "tests", "benchmarks", "scripts"], capture_output=True, text=True,
                            env=env, cwd=ROOT)
    assert result.returncode == 0, result.stdout[-3000:]


def test_the_fast_preset_is_the_default_and_fits_a_learned_estimate_per_length_and_the_profile_overrides_it(tmp_path, env):
    """With no preset, the fast one fills the keys the profile leaves out: the shards then read the learned estimate
    of their length; a key the profile gives wins; `thorough` encodes SearchConfig's states with no estimate;
    with `embedder: torch` the preset fits and searches with MiniLM in PyTorch (no ONNX model); an unknown preset
    is named."""
    from naus.settings import DEFAULT_PRESET, TEACHER_PRESETS

    assert DEFAULT_PRESET == "fast"
    text = (ROOT / "config/demo.yaml").read_text().replace("profile: demo", "profile: other")
    text = re.sub(r"  (rerank_k|rerank_exact|preset|fit_sentences): .*\n", "", text)
    fast = write(tmp_path / "fast.yaml", text)
    code, out = snakemake(["-n", "--forceall", "-p", "build/other/search/pool/L8.jsonl", "--configfile", str(fast)], env)
    assert code == 0, out[-2000:]
    exact = SearchConfig.rerank_exact  # the fast teacher's: SearchConfig's defaults
    assert "fit-estimate" in out and f"--rerank-exact {exact} " in out and "--sentences" not in out
    assert "--estimate build/other/similarity/estimate-L8.npz" in out
    text = text.replace("search:\n", "search:\n  preset: fast\n")
    own = write(tmp_path / "own.yaml", text.replace("  preset: fast\n", "  preset: fast\n  rerank_exact: 7\n  fit_sentences: 9\n"))
    code, out = snakemake(["-n", "--forceall", "-p", "build/other/search/pool/L8.jsonl", "--configfile", str(own)], env)
    assert code == 0 and "--rerank-exact 7 " in out and "--estimate " in out and "--sentences 9 " in out, out[-2000:]
    thorough = write(tmp_path / "thorough.yaml", text.replace("preset: fast", "preset: thorough"))
    code, out = snakemake(["-n", "--forceall", "-p", "build/other/search/pool/L8.jsonl", "--configfile", str(thorough)], env)
    assert code == 0 and f"--rerank-exact {TEACHER_PRESETS['thorough']['rerank_exact']} " in out, out[-2000:]
    assert "fit-estimate" not in out and "--estimate " not in out
    torch = write(tmp_path / "torch.yaml", text.replace("preset: fast", "preset: fast\n  embedder: torch"))
    code, out = snakemake(["-n", "--forceall", "-p", "build/other/search/pool/L8.jsonl", "--configfile", str(torch)], env)
    assert code == 0 and "fit-estimate" in out and "--estimate " in out, out[-2000:]
    assert "--onnx" not in out and "export-onnx" not in out
    typo = write(tmp_path / "typo.yaml", text.replace("preset: fast", "preset: fastest"))
    code, out = snakemake(["-n", "--configfile", str(typo)], env)
    assert code != 0 and f"config key search.preset: 'fastest' is not one of {sorted(TEACHER_PRESETS)}" in out, out[-2000:]


def test_configured_values_reach_the_shell_quoted(tmp_path, env):
    """A setting or a download URL holding `$(...)` never runs: lmplz's memory matches its pattern (refused by the
    schema, naming the key), and a URL is passed to `naus` as text, the planned command quoting it."""
    text = (ROOT / "config/demo.yaml").read_text().replace("profile: demo", "profile: other")
    hostile = write(tmp_path / "hostile.yaml", text.replace("lm: {}", "lm: {memory: \"$(touch X)20%\"}"))
    code, out = snakemake(["-n", "--forceall", "-p", "build/other/lm/lm.bin", "--configfile", str(hostile)], env)
    assert code != 0 and "naus: error: config key lm.memory: '$(touch X)20%' does not match" in out, out[-2000:]
    assert not (tmp_path / "X").exists() and not (ROOT / "X").exists()
    url = "https://example.org/a'$(touch Y)'.tgz"
    profile = yaml.safe_load((ROOT / "config/gigaword-sample.yaml").read_text())
    for key in ("duc_dir", "published_dir", "peers", "extra_headlines"):  # a download's Gigaword alone
        profile["data"].pop(key, None)
    profile.pop("duc", None)
    profile["data"]["download"] = {"url": url, "sha256": "0" * 64}
    config = write(tmp_path / "download.yaml", yaml.safe_dump(profile))
    target = f"build/gigaword-sample/download/gigaword/{profile['data']['pool_article']}"
    code, out = snakemake(["-n", "--forceall", "-p", target, "--configfile", str(config)], env)
    assert code == 0, out[-2000:]
    assert "--url 'https://example.org/a'\"'\"'$(touch Y)'\"'\"'.tgz'" in out, out[-2000:]


BOMB = "".join(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 8))


@pytest.mark.parametrize("extra, complaint", [
    ("train: {lr: .nan}", "config key train.lr: nan is not a finite number"),
    ("search: {gamma: .inf}", "config key search.gamma: inf is not a finite number"),
    ("search: [1, 2]", "[1, 2] is not of type 'object'"),
    ("search: {preset: [fast]}", "config key search.preset: ['fast'] is not one of ['fast', 'thorough']"),
    ("data: {duc_dir: \"d</script><script>alert(1)\"}", "config key data.duc_dir: '<' and '>' are not allowed outside"),
])
def test_a_non_finite_number_and_a_preset_of_the_wrong_type_are_refused_naming_the_key(tmp_path, extra, complaint):
    """Checked before the preset is expanded."""
    bad = write(tmp_path / "bad.yaml", f"profile: other\n{extra}\n")
    assert complaint in refusal(ROOT / "config/demo.yaml", bad)


def test_an_alias_bomb_is_refused_before_planning_in_one_line(tmp_path, env):
    """Before anything walks the configuration whole: its 10^7 values are refused in about a second."""
    bad = write(tmp_path / "bad.yaml", "profile: other\na0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + BOMB)
    code, out = snakemake(["-n", "--configfile", "config/demo.yaml", str(bad)], env)
    assert code != 0 and "holds more than 100,000 values" in out and "Traceback" not in out, out[-2000:]


def test_the_gpu_node_profile_plans_the_same_jobs_with_sixteen_gpu_slots(env):
    """A GPU node runs the same Snakefile: the same jobs as a plain run, GPU-tagged ones 16 at once."""
    code, plain = snakemake(["-n", "--forceall", "--quiet", "rules"], env)
    assert code == 0, plain[-2000:]
    code, node = snakemake(["-n", "--forceall", "--quiet", "rules", "--workflow-profile", "workflow/profiles/gpu-node"], env)
    assert code == 0 and "Using workflow specific profile workflow/profiles/gpu-node" in node, node[-2000:]
    jobs = re.compile(r"^(\w+)\s+(\d+)$", re.M)
    assert dict(jobs.findall(node)) == dict(jobs.findall(plain)) and "train" in dict(jobs.findall(node))
    assert yaml.safe_load((ROOT / "workflow/profiles/gpu-node/config.yaml").read_text())["resources"] == ["gpu=16"]


def test_the_first_generation_trains_with_its_own_settings_and_the_later_ones_with_the_sections(tmp_path, env):
    """train.first_generation lists what the students that learn from the search change; the later generations
    keep the section's."""
    text = (ROOT / "config/demo.yaml").read_text().replace("profile: demo", "profile: other")
    steps = yaml.safe_load(text)["train"]["max_steps"]
    text = text.replace("  fractions:", "  generations: 2\n  first_generation: {max_steps: 7, warmup: 3, lr: 0.002}\n  fractions:")
    config = write(tmp_path / "generations.yaml", text)
    code, out = snakemake(["-n", "--configfile", str(config), "--forceall", "-p", "build/other/train/L8-g2/best.pt"],
                          env)
    assert code == 0, out[-2000:]
    first, later = (re.search(rf"naus --threads 1 train .*--out build/other/train/{name} ", out).group(0)
                    for name in ("L8", "L8-g2"))
    assert "--max-steps 7 " in first and "--lr 0.002 " in first and "--warmup 3 " in first
    assert f"--max-steps {steps} " in later and "--lr 0.001 " in later
    filled = {"profile": "x", "data": {"source": "demo"}, "train": {"first_generation": {"lr": 0.002}}}
    schema.validate(filled, config_schema(), set_default=True)
    assert filled["train"]["first_generation"] == {"lr": 0.002}  # no default of a setting fills it in
    assert schema_error({**filled, "train": {"first_generation": {"max_step": 7}}}).startswith(
        "config key train.first_generation: Additional properties are not allowed ('max_step' was unexpected)")


def test_the_target_the_readme_names_is_one_the_workflow_builds(env):
    """The README's example of one output (issue 119: it named none that exists) is a target Snakemake plans."""
    readme = (ROOT / "README.md").read_text()
    target = re.search(r"builds one output, such as\s+`([^`]+)`", readme)[1]
    code, out = snakemake(["-n", "--forceall", target, "--configfile", "config/demo.yaml"], env)
    assert code == 0 and "rule evaluate_test:" in out, out[-2000:]
