import json

import pandas as pd

from naus.files import sha256sum
from naus.report import ReportSpec, build_report
from tests.helpers import write


def metrics(r1, r2, rl, words=10.0):
    return json.dumps({"rouge1": r1, "rouge2": r2, "rougeL": rl, "avg_words": words, "n": 3, "empty": 0})


def search_output(build, split, length, sentences, seconds_per_sentence):
    """A merged search output and the timing files of its two shards, as `naus search` leaves them."""
    write(build / f"search/{split}/L{length}.jsonl", "".join(json.dumps({"index": i, "summary": "x"}) + "\n"
                                                             for i in range(sentences)))
    for shard, count in enumerate((sentences // 2, sentences - sentences // 2)):
        write(build / f"timing/search/{split}/L{length}/part{shard}.json",
              json.dumps({"sentences": count, "seconds": count * seconds_per_sentence}))


def test_table2_and_figures_from_fixture_metrics(tmp_path):
    m, b = tmp_path / "metrics", tmp_path / "build"
    write(m / "baseline/test/lead-10.json", metrics(20.0, 5.0, 18.0))
    write(m / "search/test/L10.json", metrics(25.0, 8.0, 22.0))
    search_output(b, "test", 10, 3, 0.2)
    for method, r1, seconds in (("truncate", 26.0, 0.002), ("length-control", 27.0, 0.004)):
        write(m / f"decode/test/L10/{method}-10.json", metrics(r1, 8.0, 23.0))
        write(b / f"decode/test/L10/{method}-10.timing.json", json.dumps({"seconds_per_sample": seconds, "device": "cpu"}))
        write(b / f"decode/test/L10/{method}-10.txt", "a b c\na b\na b c d\n")
    write(m / "published/HC_10_length_control.json", metrics(28.3, 9.95, 25.51, 9.67))
    history = [{"step": s, "train_loss": 3.0 / s, "lr": 1e-3, "dev_loss": 2.0 / s} for s in (1, 2, 3)]
    write(b / "train/L10/history.json", json.dumps({"history": history}))

    build_report(m, b, tmp_path / "out", ReportSpec("fixture", [10]))

    table = pd.read_csv(tmp_path / "out/tables/table2.csv")
    rows = table.set_index("System")
    assert rows.loc["NAUS length control (ours)", "ΔR"] == 3.0  # (27+8+23) - (25+8+22)
    assert rows.loc["NAUS truncate (ours)", "Speedup"] == "100×"  # 0.2 s / 0.002 s
    assert rows.loc["published HC_10_length_control (rescored)", "R-1"] == 28.3
    assert rows.loc["NAUS length control †", "ΔR"] == 1.83  # the paper's own teacher as base
    markdown = (tmp_path / "out/tables/table2.md").read_text()
    assert "| 10  | Lead-10 (ours)" in markdown and "–" in markdown
    assert (tmp_path / "out/tables/table2.tex").read_text().startswith("\\begin{table}")
    for name in ("loss-L10", "lengths-L10"):
        assert (tmp_path / f"out/figures/{name}.png").stat().st_size > 1000
        assert (tmp_path / f"out/figures/{name}.pdf").is_file()
    readme = (tmp_path / "out/README.md").read_text()
    assert "figures/loss-L10.png" in readme and "| L10 | 3 | 0.667 |" in readme
    landing = (tmp_path / "out/report.rst").read_text()
    assert "| NAUS length control | 27.00 / 8.00 / 23.00 | +3.00   | 28.55 / 9.97 / 25.78    | +1.83" in landing
    assert "| Search teacher      | 25.00 / 8.00 / 22.00 | +0.00 " in landing


def test_the_html_report_opens_on_the_headline_numbers(tmp_path):
    """The landing page is valid reStructuredText once Snakemake adds a link target per result."""
    from docutils.core import publish_parts

    m, b = tmp_path / "metrics", tmp_path / "build"
    write(m / "baseline/test/lead-8.json", metrics(20.0, 5.0, 18.0, 8.0))
    write(m / "search/test/L8.json", metrics(25.0, 8.0, 22.0, 8.0))
    search_output(b, "test", 8, 2, 0.4)
    write(m / "decode/test/L8/length-control-8.json", metrics(26.0, 8.0, 22.0, 8.0))
    write(b / "decode/test/L8/length-control-8.timing.json", json.dumps({"seconds_per_sample": 0.01}))
    write(b / "train/L8/history.json", json.dumps({"history": [{"step": 1, "train_loss": 3.0, "lr": 1e-3}]}))
    write(b / "data/stats.json", json.dumps({"pool_pairs": 1234, "test_pairs": 56}))

    build_report(m, b, tmp_path / "out", ReportSpec("fixture", [8]))

    landing = (tmp_path / "out/report.rst").read_text()
    assert "L = 8" in landing and "1,234 pool sentences" in landing  # no L = 10 here: the first length
    assert "| NAUS truncate       | –" in landing  # not decoded: a dash, not an error
    targets = "".join(f"\n.. _{name}: #\n" for name in ("table2.md", "loss-L8.png"))
    html = publish_parts(landing + targets, writer="html",
                         settings_overrides={"halt_level": 2, "report_level": 2})["html_body"]
    assert "27.94 / 9.24 / 25.51" in html and 'href="#"' in html


def test_table4_compares_architectures_on_the_same_search_output(tmp_path):
    m, b = tmp_path / "metrics", tmp_path / "build"
    write(m / "baseline/test/lead-8.json", metrics(20.0, 5.0, 18.0, 8.0))
    write(m / "search/test/L8.json", metrics(25.0, 8.0, 22.0, 8.0))
    search_output(b, "test", 8, 2, 0.4)
    students = {"L8/length-control": (27.0, 0.004, 0.01), "ar-L8/beam": (24.0, 0.02, 0.2), "nar-L8/greedy": (21.0, 0.001, None)}
    for stem, (r1, seconds, batch1) in students.items():
        write(m / f"decode/test/{stem}-8.json", metrics(r1, 8.0, 22.0, 8.0))
        timing = {"seconds_per_sample": seconds, "device": "cpu"} | ({"batch1_seconds_per_sample": batch1} if batch1 else {})
        write(b / f"decode/test/{stem}-8.timing.json", json.dumps(timing))

    build_report(m, b, tmp_path / "out", ReportSpec("fixture", [8], analysis=[8]))

    rows = pd.read_csv(tmp_path / "out/tables/table4.csv").set_index("System")
    assert list(rows.index) == ["Search teacher (ours)", "Encoder-only NAUS (CTC), length control",
                                "AR encoder-decoder, beam search", "NAR encoder-decoder, vanilla (L slots)"]
    assert rows.loc["AR encoder-decoder, beam search", "ΔR"] == -1.0
    assert rows.loc["AR encoder-decoder, beam search", "Speedup"] == "20×"  # 0.4 s / 0.02 s
    assert rows.loc["AR encoder-decoder, beam search", "Time b=1 (s/sample)"] == 0.2
    assert pd.isna(rows.loc["NAR encoder-decoder, vanilla (L slots)", "Time b=1 (s/sample)"])
    readme = (tmp_path / "out/README.md").read_text()
    assert "## Table 4" in readme and "AR encoder-decoder, beam search" in readme


def test_table3_reads_duc2004_recall_metrics(tmp_path):
    m, b = tmp_path / "metrics", tmp_path / "build"
    duc = m / "duc2004"
    write(m / "baseline/test/lead-10.json", metrics(20.0, 5.0, 18.0))
    write(m / "search/test/L10.json", metrics(25.0, 8.0, 22.0))
    write(duc / "baseline/duc/lead-all.json", metrics(22.67, 6.62, 19.93, 20.0))
    write(duc / "search/duc/L13.json", metrics(26.0, 8.0, 23.0, 13.0))
    search_output(b, "duc", 13, 1, 0.5)
    search_output(b, "test", 10, 1, 0.5)
    write(duc / "decode/duc/L13/length-control-13.json", metrics(26.5, 7.5, 23.0, 12.9))
    write(b / "decode/duc/L13/length-control-13.timing.json", json.dumps({"seconds_per_sample": 0.005}))
    write(duc / "published/duc/HC_13_length_control.json", metrics(27.10, 8.11, 23.48))

    build_report(m, b, tmp_path / "out", ReportSpec("fixture", [10], duc_length=13))

    rows = pd.read_csv(tmp_path / "out/tables/table3.csv").set_index("System")
    assert rows.loc["NAUS length control (ours)", "ΔR"] == 0.0  # (26.5+7.5+23) - (26+8+23)
    assert rows.loc["NAUS length control (ours)", "Speedup"] == "100×"
    assert rows.loc["published HC_13_length_control (rescored)", "ΔR"] == 1.69
    assert rows.loc["NAUS length control †", "ΔR"] == 0.4  # 57.45 - 57.05, the paper's teacher as base
    assert "## Table 3" in (tmp_path / "out/README.md").read_text()


def test_a_student_row_is_the_mean_over_its_seeds_with_its_spread(tmp_path):
    """Three seeds of the L = 10 student (seed 0's name has no suffix) give ΔR 1, 2 and 6 over the
    teacher: the row shows their mean and sd, the CSV keeps the mean with `ΔR sd` and `Seeds`, the
    bootstrap interval lies within the seeds' range, and a missing seed is left out, not zeroed."""
    m, b = tmp_path / "metrics", tmp_path / "build"
    write(m / "baseline/test/lead-10.json", metrics(20.0, 5.0, 18.0))
    write(m / "search/test/L10.json", metrics(25.0, 8.0, 22.0))
    search_output(b, "test", 10, 3, 0.2)
    for name, r1 in (("L10", 26.0), ("L10-s1", 27.0), ("L10-s2", 31.0)):
        write(m / f"decode/test/{name}/length-control-10.json", metrics(r1, 8.0, 22.0))
        write(b / f"decode/test/{name}/length-control-10.timing.json", json.dumps({"seconds_per_sample": 0.004}))
    build_report(m, b, tmp_path / "out", ReportSpec("fixture", [10], seeds=[0, 1, 2, 3]))

    row = pd.read_csv(tmp_path / "out/tables/table2.csv").set_index("System").loc["NAUS length control (ours)"]
    assert row["Seeds"] == 3 and row["R-1"] == 28.0 and row["ΔR"] == 3.0
    assert row["ΔR sd"] == 2.65  # sd of 1, 2, 6
    low, high = (float(x) for x in row["ΔR 95% CI"].strip("[]").split(","))
    assert 1.0 <= low < 3.0 < high <= 6.0
    markdown = (tmp_path / "out/tables/table2.md").read_text()
    assert "28.00 ± 2.65" in markdown and "+3.00 ± 2.65" in markdown and "R-1 sd" not in markdown
    assert "mean of 4 students (seeds 0–3" in markdown


def test_results_made_with_other_settings_than_the_configurations_are_marked_stale(tmp_path):
    """The search shards and the students record their settings; the report compares them with the
    configuration, and a table made by another teacher says so in its caption and on the landing page."""
    m, b = tmp_path / "metrics", tmp_path / "build"
    write(m / "baseline/test/lead-10.json", metrics(20.0, 5.0, 18.0))
    write(m / "search/test/L10.json", metrics(25.0, 8.0, 22.0))
    write(m / "decode/test/L10/length-control-10.json", metrics(27.0, 8.0, 23.0))
    search_output(b, "test", 10, 3, 0.2)
    write(b / "search/test/L10.txt", "a b\nc d\ne f\n")
    teacher = {"rerank_k": 1600, "rerank_exact": 60, "fluency": "slor"}
    write(b / "search/test/L10/part0.jsonl.provenance.json",
          json.dumps({"parameters": {"search": {"length": 10, **teacher}}}))
    write(b / "train/L10/history.json", json.dumps({"history": [], "settings": {"model": {"d_model": 256}, "train": {"lr": 1e-3}},
                                                   "best": {"path": "best.pt", "sha256": "ab" * 32}}))
    write(b / "decode/test/L10/length-control-10.txt", "a b\n")
    config = {"profile": "fixture", "search": {"lengths": [10], "shards": 2, **teacher},
              "model": {"d_model": 256}, "train": {"lr": 1e-3, "seeds": [0]}, "data": {"data_dir": "/x"}}

    def report(changes: dict) -> tuple[str, str, dict]:
        changed = {section: {**values, **changes.get(section, {})} for section, values in config.items()
                   if isinstance(values, dict)}
        spec = ReportSpec("fixture", [10], config={**config, **changed})
        build_report(m, b, tmp_path / "out", spec)
        out = tmp_path / "out"
        return ((out / "tables/table2.rst").read_text(), (out / "report.rst").read_text(),
                json.loads((out / "fingerprints.json").read_text()))

    caption, landing, prints = report({})
    assert "STALE" not in caption + landing and prints["stale"] == []
    assert prints["search"]["test/L10"]["sha256"] == sha256sum(b / "search/test/L10.txt")
    assert prints["search"]["test/L10"]["records_sha256"] == sha256sum(b / "search/test/L10.jsonl")
    assert prints["students"]["L10"]["sha256"] == "ab" * 32 and "decode/test/L10/length-control-10" in prints["decodings"]
    assert "data_dir" not in prints["settings"]["data"]  # the machine's own path is no setting of the results
    caption, landing, prints = report({"search": {"rerank_k": 200}})
    assert caption.startswith("STALE: made with other settings than the configuration's "
                              "(search.rerank_k: 1600 made the results, the configuration says 200).")
    assert "**STALE: made with other settings" in landing and len(prints["stale"]) == 1
    caption, _, _ = report({"search": {"shards": 8}, "train": {"lr": 5e-4, "seeds": [0, 1]}})  # shards name no content
    assert "train.lr: 0.001 made the results, the configuration says 0.0005" in caption and "shards" not in caption
    # model.arch is the profile's own students' (L10); a Table 4 student names its own architecture
    write(b / "train/L10/history.json", json.dumps({"history": [], "settings": {"model": {"d_model": 256, "arch": "naus"}}}))
    write(b / "train/ar-L10/history.json", json.dumps({"history": [], "settings": {"model": {"d_model": 256, "arch": "ar"}}}))
    assert report({"model": {"arch": "naus"}})[2]["stale"] == []
    assert report({"model": {"arch": "naus-minilm"}})[2]["stale"] == [
        "model.arch: 'naus' made the results, the configuration says 'naus-minilm'"]


def test_p_values_and_the_source_length_figure_come_from_the_outputs_in_build(tmp_path):
    """Length control better than truncation and the teacher on every one of 30 sentences: both p-values
    are at their floor; a row whose outputs are not in build/ gets none."""
    m, b = tmp_path / "metrics", tmp_path / "build"
    titles = [f"word{i} alpha beta gamma delta" for i in range(30)]
    write(b / "data/test/title.txt", "".join(t + "\n" for t in titles))
    write(b / "data/test/article.txt", "".join(" ".join(["w"] * (10 + i)) + "\n" for i in range(30)))
    write(b / "search/test/L10.txt", "".join(f"word{i} alpha\n" for i in range(30)))
    write(b / "decode/test/L10/truncate-10.txt", "".join(f"word{i} zeta\n" for i in range(30)))
    write(b / "decode/test/L10/length-control-10.txt", "".join(f"word{i} alpha beta gamma\n" for i in range(30)))
    write(m / "baseline/test/lead-10.json", metrics(20.0, 5.0, 18.0))
    write(m / "search/test/L10.json", metrics(25.0, 8.0, 22.0))
    for method in ("truncate", "length-control", "beam"):
        write(m / f"decode/test/L10/{method}-10.json", metrics(26.0, 8.0, 23.0))

    build_report(m, b, tmp_path / "out", ReportSpec("fixture", [10]))

    rows = pd.read_csv(tmp_path / "out/tables/table2.csv").set_index("System")
    floor = 1 / 10_001
    assert rows.loc["NAUS length control (ours)", "p vs teacher"] == floor
    assert rows.loc["NAUS length control (ours)", "p vs truncate"] == floor
    assert rows.loc["NAUS truncate (ours)", "p vs teacher"] == floor  # worse on every sentence: as significant
    assert pd.isna(rows.loc["CTC beam search + truncate (ours)", "p vs teacher"])  # its output is not in build/
    assert "| <0.001 " in (tmp_path / "out/tables/table2.md").read_text()
    assert (tmp_path / "out/figures/source-length-L10.png").stat().st_size > 1000


def test_the_case_study_spreads_over_source_lengths_and_is_the_same_every_run(tmp_path):
    b = tmp_path / "build"
    write(b / "data/test/article.txt", "".join(" ".join([f"s{i}"] * (i + 1)) + "\n" for i in range(50)))
    write(b / "data/test/title.txt", "".join(f"ref {i}\n" for i in range(50)))
    write(b / "search/test/L8.txt", "".join(f"teacher {i}\n" for i in range(50)))
    for method in ("truncate", "length-control", "beam"):
        write(b / f"decode/test/L8/{method}-8.txt", "".join(f"{method} {i}\n" for i in range(50)))
    from naus.report import OUR_SYSTEMS
    from naus.sentences import case_study

    table = case_study(b, 8, [], OUR_SYSTEMS)
    chosen = table["Sentence"].unique().tolist()
    assert len(chosen) == 5 and sorted((i - 1) // 10 for i in chosen) == [0, 1, 2, 3, 4]  # one per fifth by length
    assert table.equals(case_study(b, 8, [], OUR_SYSTEMS))
    first = table[table["Sentence"] == chosen[0]].set_index("System")["Text"]
    assert first["Reference"] == f"ref {chosen[0] - 1}" and first["NAUS length control"] == f"length-control {chosen[0] - 1}"
    assert case_study(b, 8, [(8, 50)], OUR_SYSTEMS).empty  # the char-control output is not there
