"""The SLURM profile, as a dry run of the paper profile (no cluster needed)."""

import re

import yaml

from tests.helpers import ROOT, snakemake, write

PAPER_FILES = ["gigaword/train/train.article.txt", "gigaword/train/train.title.txt",
               "gigaword/test/input.txt", "gigaword/test/task1_ref0.txt",
               "duc2004/input.txt"] + [f"duc2004/task1_ref{i}.txt" for i in range(4)]
GPU_RULES = {"train", "decode_student", "decode", "time_decode"}  # decode: a decoding no table reads (the dev split's)


def job_blocks(output: str) -> list[tuple[str, str]]:
    """(rule name, job description) for each job of a dry run."""
    return re.findall(r"^(?:local)?rule (\w+):\n(.*?)(?=\n\n|\Z)", output, flags=re.S | re.M)


def test_slurm_dry_run_sends_gpu_rules_to_gpus_and_shards_to_one_core(tmp_path, env):
    data = tmp_path / "data"
    for name in PAPER_FILES:
        write(data / name, "")
    config = (ROOT / "config/paper.yaml").read_text().replace("  source: gigaword\n", f"  source: gigaword\n  data_dir: {data}\n")
    config = config.replace("shards: 512", "shards: 3")
    paper = write(tmp_path / "paper.yaml", config)
    code, out = snakemake(["--workflow-profile", "workflow/profiles/slurm", "-n", "--configfile", paper],
                          {**env, "NAUS_DATA": ""})
    assert code == 0, out[-3000:]
    assert "Group job evaluate" in out  # the small scoring jobs are submitted together
    blocks = job_blocks(out)
    gpu_jobs = [(rule, text) for rule, text in blocks if "gpu=1" in text]
    assert {rule for rule, _ in gpu_jobs} == GPU_RULES - {"decode"}
    for _, text in gpu_jobs:  # one GPU, asked once: the rule's gpu resource (sbatch --gpus=1), no gres beside it
        assert "slurm_partition=gpu" in text and "gres" not in text
    shards = [text for rule, text in blocks if rule == "search_shard"]
    assert len(shards) == (3 * 3 + 1) * 3  # (pool, dev, test x L 8, 10, 13; DUC2004 x L 13) x shards
    for text in shards:
        assert "--threads 1 search" in text and "slurm_partition=cpu" in text and "gpu=1" not in text


def test_every_gpu_rule_has_gpu_settings_in_the_slurm_profile():
    profile = yaml.safe_load((ROOT / "workflow/profiles/slurm/config.yaml").read_text())
    declared = set()
    for path in (ROOT / "workflow/rules").glob("*.smk"):
        for rule, body in re.findall(r"^\s*rule (\w+):\n(.*?)(?=^\s*rule |\Z)", path.read_text(), flags=re.S | re.M):
            if re.search(r"resources:\s*\n\s*gpu=1", body):
                declared.add(rule)
    assert declared == GPU_RULES
    for rule in declared:
        settings = profile["set-resources"][rule]
        assert settings["slurm_partition"] == "gpu" and "gres" not in settings, rule


CPU_RULES = {"train_on_states", "decode_student_on_states", "decode_on_states"}


def test_students_on_frozen_states_ask_a_cluster_for_a_cpu_core_not_a_gpu(shared_data, env, tmp_path):
    """Resources from the architecture (issue 119): in the SLURM dry run of gigaword-sample, whose students all learn
    on frozen MiniLM states (naus-copy, and Table 3's nar-ctc-copy, ar-copy, nar-copy), no student's training or decoding asks for a GPU: each is a
    one-core job of the CPU partition with its measured time and memory; the paper profile's students (naus and
    Table 3's encoder-decoders, whole encoders trained) go to the GPU partition. Planned at one seed: the profile's
    ten multiply its students, not its rules, and take Snakemake 15 s to plan."""
    profile = yaml.safe_load((ROOT / "workflow/profiles/slurm/config.yaml").read_text())
    one_seed = write(tmp_path / "one-seed.yaml", "train:\n  seeds: [0]\n  analysis_seeds: [0]\n")
    code, out = snakemake(["--workflow-profile", "workflow/profiles/slurm", "-n", "--configfile",
                           "config/gigaword-sample.yaml", one_seed], {**env, "NAUS_DATA": str(shared_data)})
    assert code == 0, out[-3000:]
    blocks = job_blocks(out)
    students = [(rule, text) for rule, text in blocks if rule in CPU_RULES | GPU_RULES - {"time_decode"}]
    assert {rule for rule, _ in students} == CPU_RULES and len(students) > 30
    for rule, text in students:
        wanted = profile["set-resources"][rule]
        assert "gpu=1" not in text and "slurm_partition=cpu" in text, text
        assert f"mem_mb={wanted['mem_mb']}" in text and f"runtime={wanted['runtime']}" in text, text
    trained = {re.search(r"wildcards: model=(\S+)", text)[1] for rule, text in students if rule == "train_on_states"}
    assert {name.split("-L")[0] if "-L" in name else "own" for name in trained} == {"own", "nar-ctc-copy", "ar-copy",
                                                                                          "nar-copy"}
    for rule in CPU_RULES:  # one core, not the 8 threads a GPU job's host gets
        assert rule not in profile.get("set-threads", {})
