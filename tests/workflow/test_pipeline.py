"""A micro end-to-end run of the whole workflow on fixture data the test writes (about a minute)."""

import json
import shutil
import subprocess

import pandas as pd
import torch

from tests.helpers import BIN, ROOT, write
from tests.workflow.conftest import SECRET, SHARED_TIMING, hostile, snakemake


def test_micro_pipeline_end_to_end_then_nothing_to_do(micro, micro_run, env):
    workdir, config = micro
    code, out = micro_run
    assert code == 0, out[-3000:]
    results = workdir / "results/micro"
    table = (results / "tables/table2-full.md").read_text()
    assert "NAUS length control" in (results / "report.rst").read_text()  # the HTML report's first page
    for row in ("Lead-4 (ours)", "Search teacher (ours)", "NAUS truncate (ours)", "NAUS length control (ours)"):
        assert row in table
    seeded = pd.read_csv(results / "tables/table2-full.csv").set_index("System").loc["NAUS length control (ours)"]
    assert seeded["Seeds"] == 1 and pd.isna(seeded["ΔR sd"])  # one seed: no spread (a second's: test_report.py)
    control = json.loads((results / "metrics/decode/test/L4/length-control-4.json").read_text())
    assert control["n"] == 6 and control["avg_words"] == 4.0
    search = [json.loads(x) for x in (workdir / "build/micro/search/pool/L4.jsonl").read_text().splitlines()]
    assert [r["index"] for r in search] == list(range(32)) and all(len(r["summary"].split()) == 4 for r in search)
    for figure in ("loss-L4", "lengths-L4", "source-length-L4", "training-size", "beam-size", "char-budget"):
        assert (results / f"figures/{figure}.png").is_file(), figure
    for name in ("table2-full", "table3-full"):  # p-values from the outputs in build/, Tables 1 and 2 both
        header, *rows = (results / f"tables/{name}.csv").read_text().splitlines()
        assert "p vs teacher" in header and any("NAUS length control (ours)" in row for row in rows), name
    assert (results / "browse.html").stat().st_size > 1000 and (results / "tables/case-study.md").is_file()
    assert "`browse.html`_" in (results / "report.rst").read_text()
    transfer = (results / "tables/table6.md").read_text()
    assert "4 → 50%, length control" in transfer and "4 → 50%, truncate" in transfer  # to a length: test_report
    duc = (results / "tables/table3-full.md").read_text()
    for row in ("Lead, 75 bytes (ours)", "Search teacher, L=4 (ours)", "NAUS length control (ours)",
                "NAUS char control, 75 bytes (ours)"):
        assert row in duc
    assert "NAUS char control, 20 chars (ours)" in table and "NACC, 50 chars †" not in table  # NACC's is an L=8 row
    for path, budget in (("decode/test/L4/char-control-c20.txt", 20), ("duc2004/decode/duc/L4/char-control-c75.txt", 75)):
        lines = (workdir / "build/micro" / path).read_text().splitlines()
        assert lines and all(len(line.encode()) <= budget for line in lines), path
    vocab = set((workdir / "build/micro/train/L4/vocab.txt").read_text().split())
    words = (workdir / "build/micro/decode/test/L4/char-control-c20.txt").read_text().split()
    assert set(words) <= vocab  # whole words, none cut to fit
    teacher = (workdir / "build/micro/duc2004/search/duc/L4.txt").read_text().splitlines()
    assert len(teacher) == 5 and not any("#" in line for line in teacher)
    architectures = (results / "tables/table4.md").read_text()
    # an encoder-decoder, one on frozen states, the profile's own: each way the rules train and decode a student (the
    # others', naus-minilm's 167 MB included: tests/unit/test_architectures.py, test_pretrained.py, test_report.py)
    for row in ("AR encoder-decoder, beam search", "NAUS, copy head on frozen all-MiniLM-L6-v2 states (CTC), length "
                "control", "Encoder-only NAUS (CTC), length control"):
        assert row in architectures
    timing = json.loads((workdir / "build/micro/decode/test/ar-L4/beam-4.timing.json").read_text())
    assert timing["batch1_samples"] == 2 and timing["batch1_seconds_per_sample"] > 0
    assert (workdir / "build/micro/decode/test/L4/length-control-4.timing.json").is_file()
    prints = json.loads((results / "fingerprints.json").read_text())  # what made them, and nothing stale
    assert prints["stale"] == [] and len(prints["search"]["test/L4"]["sha256"]) == 64
    assert prints["made_by"]["commit"] and len(prints["inputs"]) == 10  # pool, test, headlines, DUC2004: sha256 each
    assert prints["students"]["L4"]["settings"]["train"]["max_steps"] == 6 and len(prints["decodings"]) > 15
    code, out = snakemake(workdir, config, env, "-n", *SHARED_TIMING)
    assert code == 0 and "Nothing to be done" in out, out[-2000:]


def test_a_gpu_runs_archive_finishes_to_the_same_tables(micro, micro_run, env):
    """`scripts/lease/gpu-node.sh finish` on the archive its `run` packs (here of the micro build): every member
    checked, the histories and decodings brought in, ROUGE and the tables made again by the pipeline, the same."""
    import tarfile

    from scripts.lease.archive import run_paths

    workdir, config = micro
    tables = workdir / "results/micro/tables"
    before = {path.name: path.read_text() for path in tables.glob("*.csv")}
    build = workdir / "build/micro"
    history = build / "train/L4/history.json"
    record = json.loads(history.read_text())  # a GPU node's history whose settings hold a template and directives
    record["settings"]["train"]["lr"] = hostile(workdir)
    history.write_text(json.dumps(record))
    packed = [file for glob in run_paths("micro")["outputs"] for path in workdir.glob(glob)  # the files `run` packs
              for file in ([path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file()))]
    missing = build / "decode/test/L4/truncate-4.txt"
    for name, members in (("gpu-run.tar.gz", packed), ("partial.tar.gz", [p for p in packed if p != missing])):
        with tarfile.open(workdir / name, "w:gz") as tar:
            for path in members:
                tar.add(path, arcname=str(path.relative_to(workdir)))
    missing.unlink()  # made on the GPU node: this machine has only what its archives bring, and no score of it
    (workdir / "results/micro/metrics/decode/test/L4/truncate-4.json").unlink()
    metrics = workdir / "results/micro/metrics/decode/test/L4/length-control-4.json"
    metrics.unlink()  # scored again from the imported decoding, and the tables made again from it

    def finish(archive: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(ROOT / "scripts/lease/gpu-node.sh"), "finish", archive], cwd=workdir, capture_output=True,
                              text=True, env={**env, "PATH": f"{BIN}:/usr/bin:/bin", "PROFILE": "micro",
                                              "CONFIG": str(config)})

    partial = finish("partial.tar.gz")  # an error naming what is missing, not a report skipped silently
    assert partial.returncode == 1 and "truncate-4.txt" in partial.stderr, partial.stderr[-3000:]
    result = finish("gpu-run.tar.gz")
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    assert metrics.is_file() and (build / "train/L4/best.pt").is_file()  # an import only adds
    assert {path.name: path.read_text() for path in tables.glob("*.csv")} == before
    assert "STALE" in (tables / "table2.md").read_text()  # the history's settings are not the configuration's

    # Snakemake's HTML report: every table and figure linked from the landing page is one it was declared; the
    # profile's note and the imported history's settings (quoted as STALE) are text: nothing runs, no file is shown
    code, out = snakemake(workdir, config, env, "--report", str(workdir / "report.html"))
    html = (workdir / "report.html").read_text()
    assert code == 0 and "System Message" not in html and "Unknown target name" not in html, out[-2000:]
    assert not (workdir / "X").exists() and not (ROOT / "X").exists() and SECRET not in html and "<script>alert" not in html


def test_download_rule_fetches_verifies_and_unpacks_the_release(micro, env):
    """The paper profile's download path, on a file:// archive of the fixture (nothing leaves the machine)."""
    import zipfile

    from naus.plumbing.files import sha256sum

    workdir, config = micro
    data = workdir / "data dir"
    archive = workdir / "release.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for name in ("pool/article.txt", "pool/title.txt", "test/input.txt", "test/ref.txt"):
            zf.write(data / name, f"sumdata/{name}")
    text = config.read_text().replace("profile: micro", "profile: micro-download")
    text = text.replace("pool_article: pool/", "pool_article: sumdata/pool/").replace("pool_title: pool/", "pool_title: sumdata/pool/")
    text = text.replace("test_article: test/", "test_article: sumdata/test/").replace("test_title: test/", "test_title: sumdata/test/")
    text = text.replace("dev_size: 8,", f"dev_size: 8, download: {{url: '{archive.as_uri()}', sha256: '{sha256sum(archive)}'}},")
    download_config = write(workdir / "download.yaml", text)
    code, out = snakemake(workdir, download_config, env, "build/micro-download/data/stats.json")
    assert code == 0, out[-3000:]
    assert "download_gigaword" in out
    stats = json.loads((workdir / "build/micro-download/data/stats.json").read_text())
    assert stats["pool_pairs"] == 32 and stats["test_pairs"] == 6
    bad = write(workdir / "bad.yaml", text.replace("profile: micro-download", "profile: micro-bad").replace(sha256sum(archive), "0" * 64))
    code, out = snakemake(workdir, bad, env, "build/micro-bad/data/stats.json")
    assert code != 0, out[-2000:]
    assert "checksum mismatch" in (workdir / "logs/micro-bad/download.log").read_text(), out[-2000:]


def test_a_changed_training_setting_reruns_the_student_cleanly(micro, micro_run, env, tmp_path):
    """Changing train.lr and running again failed on every rerun: the old run's last.pt was refused until deleted by
    hand. The step starts over instead (its last.pt set aside), and the rerun asks nothing of the user."""
    workdir, config = micro
    assert micro_run[0] == 0, micro_run[1][-3000:]
    copy = tmp_path / "work"
    for folder in ("build/micro", "logs/micro", ".snakemake"):  # the run's state, times kept: up to date as it was
        shutil.copytree(workdir / folder, copy / folder, symlinks=True)
    student = copy / "build/micro/train/L4"
    old_last = (student / "last.pt").read_bytes()
    changed = write(tmp_path / "changed.yaml", config.read_text().replace("lr: 1.0e-3", "lr: 2.0e-3"))
    code, out = snakemake(copy, changed, env, "build/micro/train/L4/best.pt", *SHARED_TIMING)
    assert code == 0, out[-3000:]
    assert (student / "last.stale.pt").read_bytes() == old_last and (student / "history.json").is_file()
    assert torch.load(student / "last.pt", weights_only=True)["train_config"]["lr"] == 2.0e-3
