import itertools
import json
import logging
import os

import numpy as np
import pytest

from naus import NausError
from naus.settings import SearchConfig
from naus.teacher.lm import LanguageModel, train_lm
from naus.teacher.search import HillClimber, Teacher, _best_distinct
from naus.teacher.shards import ResumableOutput, merge_shards, read_records, shard_range
from naus.teacher.similarity import StaticEmbedder
from tests.helpers import as_interrupted, headline_corpus, naus_main, shown, write
from tests.reference import climb_arrays

SOURCES = [
    "police arrested five anti-nuclear protesters thursday after they sought to disrupt loading of a ship",
    "the government on wednesday announced the closure of schools as a military campaign escalated",
    "stocks closed lower in tokyo on monday as investors waited for earnings",
    "short one",
    "",
    "the prime minister said on friday that trade talks with japan will go on next week",
]


@pytest.fixture(scope="module", params=[2, 3, 4])
def lm(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp(f"lm{request.param}")
    corpus = write(tmp / "headlines.txt", headline_corpus())
    train_lm(corpus, tmp / "lm.bin", order=request.param)
    return LanguageModel(tmp / "lm.bin")


@pytest.fixture(scope="module")
def lm3_file(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lm3")
    train_lm(write(tmp / "headlines.txt", headline_corpus()), tmp / "lm.bin", order=3)
    return tmp / "lm.bin"


@pytest.fixture(scope="module")
def lm3(lm3_file):
    return LanguageModel(lm3_file)


def test_ngram_table_matches_kenlm_on_every_subsequence(lm):
    words = "police arrest UNSEENWORD five protesters in tokyo".split()
    table = lm.table(words)
    for length in range(1, len(words) + 1):
        combos = np.array(list(itertools.combinations(range(len(words)), length)))
        expected = [lm.log_prob([words[i] for i in c]) for c in combos]
        np.testing.assert_allclose(table.log_prob(combos), expected, atol=1e-4)


@pytest.mark.parametrize("fluency", ["slor", "perplexity"])
def test_exhaustive_mode_equals_brute_force(lm3, fluency):
    words = "police arrested five protesters in tokyo on monday".split()
    config = SearchConfig(length=4, fluency=fluency, rerank_k=0, steps_coef=10, restarts_coef=10)
    found = HillClimber(lm3, config).search(0, words)
    assert found.scorings == 70  # C(8, 4) <= budget: every subset is scored

    def objective(combo):
        y = [words[i] for i in combo]
        log_prob = lm3.log_prob(y)
        if fluency == "perplexity":
            return log_prob / 5
        return (log_prob - sum(lm3.unigram(w) for w in y)) / 4

    best = max(itertools.combinations(range(len(words)), 4), key=objective)
    assert tuple(found.positions[0]) == best
    assert found.scores[0] == pytest.approx(objective(best), abs=1e-4)


def test_output_is_an_l_word_subsequence_and_hill_climbing_never_lowers_a_score(lm3):
    climber = HillClimber(lm3, SearchConfig(length=6, rerank_k=0))
    words = SOURCES[0].split()
    found = climber.search(3, words)
    positions = found.positions[0]
    assert len(positions) == 6 and list(positions) == sorted(set(positions))
    steps, restarts = SearchConfig(length=6).budget(len(words), 6)
    assert (steps, restarts) == (54, 18)  # ⌊0.1·15·36⌋, ⌊0.035·15·36⌋
    assert found.scorings == (steps + 1) * restarts
    trace: list[np.ndarray] = []
    climb_arrays(climber, 3, words, trace=trace)  # the walk the compiled one equals (next test)
    assert len(trace) == steps and (np.diff(np.stack(trace), axis=0) >= 0).all(), "a step lowered a restart's score"


@pytest.mark.parametrize("fluency", ["slor", "perplexity"])
def test_compiled_climb_equals_the_array_version(lm3, fluency):
    config = SearchConfig(length=5, fluency=fluency, rerank_k=0)
    climber = HillClimber(lm3, config)
    long_source = " ".join([SOURCES[0], SOURCES[1], SOURCES[5], SOURCES[2]]).split()  # 66 words: two key words
    for index, words in enumerate([SOURCES[0].split(), SOURCES[5].split(), long_source, ["the"] * 12]):
        found, expected = climber.search(index, words, keep=30), climb_arrays(climber, index, words, keep=30)
        np.testing.assert_array_equal(found.positions, expected.positions)
        # numba's loops and numpy's reductions may add in another order (and use other vector units
        # on other CPUs): the scores agree to float64 rounding, not necessarily to the bit.
        for field in ("scores", "log_probs", "slors"):
            np.testing.assert_allclose(getattr(found, field), getattr(expected, field), rtol=1e-12, atol=1e-12)
        assert found.scorings == expected.scorings


def test_compiled_climb_with_static_similarity(lm3, tmp_path):
    words = SOURCES[0].split()
    vocab = sorted(set(words))
    rng = np.random.default_rng(0)
    np.savez(tmp_path / "static.npz", words=np.array(vocab), vectors=rng.standard_normal((len(vocab), 8)),
             idf=rng.uniform(1, 3, len(vocab)))
    static = StaticEmbedder(tmp_path / "static.npz")
    config = SearchConfig(length=6, gamma=2.0, rerank_k=0)
    climber = HillClimber(lm3, config, static)
    found, expected = climber.search(1, words, keep=20), climb_arrays(climber, 1, words, keep=20)
    np.testing.assert_array_equal(found.positions, expected.positions)
    np.testing.assert_allclose(found.scores, expected.scores, rtol=1e-12)
    np.testing.assert_allclose(found.static_sims, expected.static_sims, rtol=1e-12)


def test_teacher_summaries_and_edge_cases(lm3):
    teacher = Teacher(lm3, SearchConfig(length=5, rerank_k=0))
    results = teacher.summarize(list(enumerate(SOURCES)))
    for source, result in zip(SOURCES, results):
        words = source.split()
        if len(words) > 5:
            summary = result.summary.split()
            assert len(summary) == 5
            it = iter(words)
            assert all(w in it for w in summary), "summary is not a subsequence of the source"
        else:
            assert result.summary == source  # S <= L: the source itself; empty stays empty
    record = results[0].record()
    assert set(record) == {"index", "summary", "score", "f_lm", "slor", "f_sim", "scorings"}
    assert 0 < record["f_lm"] < 1


def test_ratio_mode(lm3):
    config = SearchConfig(length=None, ratio=0.5, rerank_k=0)
    result = Teacher(lm3, config).summarize([(0, SOURCES[0])])[0]
    assert len(result.summary.split()) == len(SOURCES[0].split()) // 2


def test_same_seed_same_output_for_any_shard_count(lm3, tmp_path):
    teacher = Teacher(lm3, SearchConfig(length=5, rerank_k=0, seed=11))
    items = list(enumerate(SOURCES))
    whole = [r.record() for r in teacher.summarize(items)]
    for shards in (2, 3):
        parts = []
        for shard in range(shards):
            out = ResumableOutput(tmp_path / f"{shards}" / f"part{shard}.jsonl", len(SOURCES), (shard, shards), {"seed": 11})
            out.append(r.record() for r in teacher.summarize([items[i] for i in out.indices]))
            out.finish()
            parts.append(out.out)
        merge_shards(parts, tmp_path / f"{shards}.jsonl", tmp_path / f"{shards}.txt", "summary")
        assert read_records(tmp_path / f"{shards}.jsonl") == whole
    other = Teacher(lm3, SearchConfig(length=5, rerank_k=0, seed=12)).summarize(items)
    assert [r.scorings for r in other] == [r["scorings"] for r in whole]


def test_interrupted_shard_resumes_without_loss_or_duplicates(tmp_path):
    out = ResumableOutput(tmp_path / "part.jsonl", 18, (1, 3), {"length": 8})
    assert out.indices == range(6, 12)
    out.append({"index": i, "summary": f"s{i}"} for i in range(6, 9))
    with open(out.partial, "a") as handle:  # a torn line from a killed process
        handle.write('{"index": 9, "summ')
    out.close()  # the process ends: its lock goes with it
    again = ResumableOutput(tmp_path / "part.jsonl", 18, (1, 3), {"length": 8})
    assert again.done == 3 and list(again.remaining) == [9, 10, 11]
    again.append({"index": i, "summary": f"s{i}"} for i in again.remaining)
    again.finish()
    assert [r["index"] for r in read_records(tmp_path / "part.jsonl")] == list(range(6, 12))
    assert not again.partial.exists()


def test_a_shard_resumed_with_other_parameters_refuses_or_restarts(tmp_path):
    with ResumableOutput(tmp_path / "part.jsonl", 6, (0, 1), {"search": {"length": 6, "seed": 0}}) as out:
        out.append({"index": i, "summary": "six words"} for i in range(2))
    with pytest.raises(NausError, match=r"part.jsonl.partial: made with parameters.search.length = 6, now "
                                        r"parameters.search.length = 8; pass --restart"):
        ResumableOutput(tmp_path / "part.jsonl", 6, (0, 1), {"search": {"length": 8, "seed": 0}})
    with pytest.raises(NausError, match="made with shard = \\[0, 1\\], now shard = \\[0, 2\\]"):
        ResumableOutput(tmp_path / "part.jsonl", 6, (0, 2), {"search": {"length": 6, "seed": 0}})
    assert len(read_records(out.partial)) == 2, "refusing left the partial output as it was"
    fresh = ResumableOutput(tmp_path / "part.jsonl", 6, (0, 1), {"search": {"length": 8, "seed": 0}}, restart=True)
    assert fresh.done == 0


def finished_shards(tmp_path, shards, total, parameters=None):
    parts = []
    for shard in range(shards):
        out = ResumableOutput(tmp_path / f"part{shard}.jsonl", total, (shard, shards), parameters or {"length": 8})
        out.append({"index": i, "summary": f"s{i}"} for i in out.indices)
        out.finish()
        parts.append(out.out)
    return parts


def test_merge_refuses_an_incomplete_or_mixed_set_of_shards(tmp_path):
    parts = finished_shards(tmp_path, 3, 7)
    merged = (tmp_path / "m.jsonl", tmp_path / "m.txt")
    with pytest.raises(NausError, match="expected shards 0..2 once each, missing 2"):
        merge_shards(parts[:2], *merged, "summary")
    with pytest.raises(NausError, match="got \\[0, 1, 1, 2\\]"):
        merge_shards(parts + parts[1:2], *merged, "summary")
    other = finished_shards(tmp_path / "other", 3, 7, {"length": 10})
    with pytest.raises(NausError, match="made with parameters.length = 8, now parameters.length = 10"):
        merge_shards(parts[:2] + other[2:], *merged, "summary")
    with pytest.raises(NausError, match="a record needs an integer 'index' and 'title'"):
        merge_shards(parts, *merged, "title")
    (tmp_path / "part1.jsonl.provenance.json").unlink()
    with pytest.raises(NausError, match="no part1.jsonl.provenance.json beside it"):
        merge_shards(parts, *merged, "summary")
    assert not merged[0].exists()
    write(tmp_path / "lone.jsonl", json.dumps({"index": 0, "summary": "x"}) + "\n")
    with pytest.raises(NausError, match="lone.jsonl: no lone.jsonl.provenance.json"):
        merge_shards([tmp_path / "lone.jsonl"], *merged, "summary")
    assert merge_shards(finished_shards(tmp_path / "whole", 3, 7), *merged, "summary") == 7


def test_bad_search_input(lm3, tmp_path):
    with pytest.raises(NausError, match=r"length must be between 1 and 4096, got 0"):
        SearchConfig(length=0)
    with pytest.raises(NausError, match="language model not found"):
        LanguageModel(tmp_path / "missing.bin")
    with pytest.raises(NausError, match="not a KenLM model"):
        LanguageModel(write(tmp_path / "bad.bin", "not a model"))
    with pytest.raises(NausError, match="needs a static embedding table"):
        HillClimber(lm3, SearchConfig(length=3, gamma=1.0))
    with pytest.raises(NausError, match="needs the contextual embedder"):
        Teacher(lm3, SearchConfig(length=3, rerank_k=5))
    from naus.teacher.similarity import StaticEmbedder

    with pytest.raises(NausError, match="static embedding table not found"):
        StaticEmbedder(tmp_path / "nope.npz")


def test_search_command_refuses_to_resume_with_another_length(lm3_file, tmp_path, capsys):
    source = write(tmp_path / "source.txt", "\n".join(SOURCES) + "\n")
    out = tmp_path / "out.jsonl"
    command = ["search", "--input", source, "--lm", lm3_file, "--rerank-k", "0", "--out", out]

    def search(*extra):
        return naus_main(command + list(extra), capsys)

    assert search("--length", "6").returncode == 0
    first = out.read_text().splitlines()[0]
    as_interrupted(out, first + "\n")  # as if a later run at L = 6 had been killed
    refused = search("--length", "8")
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines()[-1] == (
        f"naus: error: {out}.partial: made with parameters.search.length = 6, now parameters.search.length = 8; "
        "pass --restart to start it over"
    )
    assert search("--length", "8", "--restart").returncode == 0
    summaries = [json.loads(line)["summary"] for line in out.read_text().splitlines()]
    assert all(len(s.split()) == min(8, len(source.split())) for s, source in zip(summaries, SOURCES))


def test_the_same_search_twice_writes_byte_identical_records_and_times_them_apart(lm3_file, tmp_path):
    from naus.cli import main
    from naus.plumbing.files import read_json

    source = write(tmp_path / "source.txt", "\n".join(SOURCES) + "\n")
    runs = []
    for run in ("a", "b"):
        parts = [tmp_path / run / f"part{shard}.jsonl" for shard in range(2)]
        for shard, part in enumerate(parts):
            assert main(["search", "--input", str(source), "--lm", str(lm3_file), "--length", "4", "--rerank-k", "0",
                         "--shard", f"{shard}/2", "--out", str(part), "--timing", str(tmp_path / run / f"t{shard}.json")]) == 0
            timing = read_json(tmp_path / run / f"t{shard}.json")
            assert timing["sentences"] == len(shard_range(len(SOURCES), shard, 2)) and timing["seconds"] > 0
        assert main(["merge", *map(str, parts), "--out", str(tmp_path / run / "L4.jsonl"),
                     "--text", str(tmp_path / run / "L4.txt")]) == 0
        runs.append(tmp_path / run / "L4.jsonl")
    assert runs[0].read_bytes() == runs[1].read_bytes()


def test_one_writer_per_output(lm3_file, tmp_path, env):
    """Two searches on one --out at once: the second refuses in one line naming the file and the
    first process, and the first keeps every record. The first is paused (SIGSTOP) while it holds
    the lock, so the two overlap whatever the machine's speed."""
    import os
    import signal
    import subprocess
    import time

    from tests.helpers import ROOT

    source = write(tmp_path / "source.txt", "".join(f"{s} {k}\n" for k in range(60) for s in SOURCES[:3]))
    out = tmp_path / "out.jsonl"
    command = ["naus", "search", "--input", source, "--lm", lm3_file, "--length", "5", "--rerank-k", "0",
               "--batch", "1", "--out", out]
    first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    lock = tmp_path / "out.jsonl.lock"
    while not (lock.is_file() and lock.read_text()) and first.poll() is None:
        time.sleep(0.01)
    os.kill(first.pid, signal.SIGSTOP)
    try:
        assert first.poll() is None, "the first search ended before the second could start"
        second = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT)
    finally:
        os.kill(first.pid, signal.SIGCONT)
    _, first_err = first.communicate(timeout=300)
    assert second.returncode == 2
    assert second.stderr.strip().splitlines()[-1] == (
        f"naus: error: {out}: being written by process {first.pid} on {os.uname().nodename} (its lock: {lock}); "
        "wait for it to end or stop it, then run again")
    assert first.returncode == 0, first_err
    assert [r["index"] for r in read_records(out)] == list(range(180))
    assert not lock.exists(), "the lock goes with its writer"


def test_a_lock_left_by_a_killed_writer_blocks_nobody(tmp_path):
    from naus.plumbing.outputs import OutputLock

    write(tmp_path / "part.jsonl.lock", "process 1 on elsewhere\n")  # no process holds it
    with ResumableOutput(tmp_path / "part.jsonl", 2, (0, 1), {"p": 1}) as out:
        with pytest.raises(NausError, match=r"part.jsonl: being written by process \d+ on "):
            OutputLock(tmp_path / "part.jsonl")
        out.append({"index": i, "summary": "s"} for i in range(2))
        out.finish()
    assert len(read_records(tmp_path / "part.jsonl")) == 2 and not (tmp_path / "part.jsonl.lock").exists()


def test_the_objective_every_stage_uses_is_the_papers_formula():
    """`objective` (compiled, element by element or over arrays) against the formula written out."""
    import math

    from naus.teacher.search import objective, similarity_term
    from tests.reference import objective_python

    rng = np.random.default_rng(0)
    log_probs, slors, cosines = -rng.random(50) * 30, rng.normal(size=50), rng.uniform(-1, 1, 50)
    for fluency in ("slor", "perplexity"):
        for gamma in (0.0, 1.5, 48.0):
            together = objective(log_probs, slors, 8, fluency == "slor", gamma, similarity_term(cosines))
            for i in range(50):
                expected = objective_python(log_probs[i], slors[i], 8, fluency, gamma, cosines[i])
                assert math.isclose(together[i], expected, rel_tol=1e-12, abs_tol=1e-12)
                assert objective(log_probs[i], slors[i], 8, fluency == "slor", gamma, similarity_term(cosines[i])) \
                    == together[i]


@pytest.mark.parametrize("keep", [1, 3, 40])
def test_best_distinct_states_are_those_a_full_sort_keeps(keep):
    """Ranking only the best-scoring rows (and more when their copies hide too few states) keeps exactly what
    ranking every row would: the first copy of each of the `keep` best states, ties by the state's key."""
    rng = np.random.default_rng(keep)
    for trial in range(30):
        states = rng.integers(0, 3 if trial % 2 else 60, size=(1 + trial % 3, 2)).astype(np.uint64)
        keys = states[rng.integers(0, len(states), size=400)] if trial % 3 == 0 else rng.integers(
            0, 4, size=(400, 2)).astype(np.uint64)
        unique, inverse = np.unique(keys, axis=0, return_inverse=True)
        scores = rng.integers(0, 5, size=len(unique)).astype(float)[inverse.ravel()]  # copies score the same
        ranked = sorted(range(len(keys)), key=lambda r: (-scores[r], tuple(keys[r]), r))
        expected = [r for i, r in enumerate(ranked) if i == 0 or tuple(keys[r]) != tuple(keys[ranked[i - 1]])]
        assert _best_distinct(keys, scores, keep).tolist() == expected[:keep]


def test_a_merge_stopped_between_its_two_renames_leaves_no_mixed_pair(tmp_path, monkeypatch):
    """The old outputs go before the new ones come in: a stop after the first rename leaves the other missing
    (a job to run again), never one file of this merge beside one of the last."""
    import naus.plumbing.outputs

    merged = (tmp_path / "m.jsonl", tmp_path / "m.txt")
    merge_shards(finished_shards(tmp_path / "first", 3, 7), *merged, "summary")
    old, second = merged[0].read_text(), finished_shards(tmp_path / "second", 3, 5)
    real, calls = os.replace, []

    def stop_at_the_second(source, target):
        calls.append(target)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real(source, target)

    monkeypatch.setattr(naus.plumbing.outputs.os, "replace", stop_at_the_second)
    with pytest.raises(KeyboardInterrupt):
        merge_shards(second, *merged, "summary")
    assert [path.exists() for path in merged].count(True) <= 1 and (not merged[0].exists() or merged[0].read_text() != old)


def test_the_command_lines_default_teacher_is_the_profiles_fast_one(lm3_file, tmp_path, capsys, caplog):
    """`naus search` without --estimate fits the learned estimate on its input's first sentences, as `naus
    fit-estimate` does: the same summaries as with that file passed; a file and the in-context estimate refused."""
    from naus.cli import build_parser
    from naus.settings import SearchConfig, with_preset

    caplog.set_level(logging.INFO, logger="naus")
    source = write(tmp_path / "source.txt", "\n".join(SOURCES[:3]) + "\n")
    common = ["--input", source, "--lm", lm3_file, "--length", "4", "--rerank-k", "30", "--device", "cpu"]
    fitted = naus_main(["search", *common, "--out", tmp_path / "fitted.jsonl"], capsys)
    assert fitted.returncode == 0 and "fitting the learned estimate" in caplog.text, fitted.stderr[-2000:]
    caplog.clear()
    assert naus_main(["fit-estimate", *common, "--out", tmp_path / "estimate.npz"], capsys).returncode == 0
    given = naus_main(["search", *common, "--estimate", tmp_path / "estimate.npz", "--out", tmp_path / "given.jsonl"],
                      capsys)
    assert given.returncode == 0 and "fitting" not in caplog.text
    assert (tmp_path / "fitted.jsonl").read_text() == (tmp_path / "given.jsonl").read_text()
    defaults = build_parser().parse_args(["search", "--input", "in", "--lm", "lm", "--length", "4", "--out", "out"])
    assert (defaults.estimator, defaults.rerank_exact) == (SearchConfig.estimator, SearchConfig.rerank_exact)
    profiles = with_preset({})  # every profile's teacher: the same, with no overlay of the command line's
    assert all(profiles.get(key, getattr(SearchConfig, key)) == getattr(defaults, key) for key in ("estimator",
                                                                                                  "rerank_exact"))
    refused = naus_main(["search", *common, "--estimator", "in-context", "--estimate", tmp_path / "estimate.npz",
                         "--out", tmp_path / "both.jsonl"], capsys)
    assert refused.returncode == 2 and "--estimate is a learned estimate" in refused.stderr


def test_build_teacher_is_naus_searchs_default_and_refuses_what_the_command_line_refuses(lm3, tmp_path):
    """One call for the teacher `naus search` runs: the default preset's settings under the caller's, and the same
    refusals (an estimate with the in-context estimator, a learned one with nothing to read or fit it on)."""
    from naus.settings import SearchConfig
    from naus.teacher.build import build_teacher

    teacher = build_teacher(lm3, 3, rerank_k=0)
    assert teacher.config == SearchConfig(length=3, rerank_k=0)
    assert len(teacher.summarize([(0, "police arrest five protesters in paris")])[0].summary.split()) == 3
    with pytest.raises(NausError, match="the estimator must be 'learned'"):
        build_teacher(lm3, 3, estimate=tmp_path / "e.npz", estimator="in-context")
    with pytest.raises(NausError, match="preset 'quick' is not one of"):
        build_teacher(lm3, 3, preset="quick")
    with pytest.raises(NausError, match="give estimate= .* or fit_on="):
        build_teacher(lm3, 3, rerank_k=5)


def test_searchconfig_defaults_are_the_settings_naus_search_runs():
    """`SearchConfig(length=10)` is `naus search --length 10`'s teacher, field for field: no overlay on either side."""
    from naus.cli import build_parser
    from naus.commands import settings_from
    from naus.settings import SearchConfig

    args = build_parser().parse_args(["search", "--input", "in", "--lm", "lm", "--length", "10", "--out", "out"])
    assert settings_from(args, SearchConfig, length=args.length, ratio=args.ratio, min_length=args.min_length) \
        == SearchConfig(length=10)


def test_naus_compile_climbs_on_a_language_model_it_writes_itself(tmp_path):
    """`naus compile` (the set-up's, before KenLM's lmplz is built) compiles the hill climb on a bigram ARPA model
    it writes: KenLM loads it without a word on stderr, and the sentence is long enough that the climb runs."""
    import math
    import subprocess
    import sys

    from naus.commands.decode import COMPILE_LM, COMPILE_NEWS
    from naus.plumbing.files import sha256sum
    from naus.teacher.lm import checksum_path

    arpa = write(tmp_path / "lm.arpa", COMPILE_LM)
    write(checksum_path(arpa), sha256sum(arpa) + "\n")
    words = COMPILE_NEWS[0].lower().split()
    config = SearchConfig(length=4, rerank_k=0)
    steps, restarts = config.budget(len(words), 4)
    assert math.comb(len(words), 4) > steps * restarts  # not the exhaustive mode
    found = HillClimber(LanguageModel(arpa), config).search(0, words)
    assert found.positions.shape[1] == 4 and found.scorings > 0
    loaded = subprocess.run([sys.executable, "-c", "import sys; from naus.teacher.lm import LanguageModel; "
                             "LanguageModel(sys.argv[1])", str(arpa)], capture_output=True, text=True)
    assert loaded.returncode == 0 and loaded.stderr == "", loaded.stderr

# -- hostile and careless input (the review rounds): each test names the input it spoils and what it did before --

def test_the_teachers_api_reads_raw_text_as_every_reader_does(lm3):
    """A source given to the search in Python loses its control and format characters as a file's line does."""
    from naus.settings import SearchConfig
    from naus.teacher.search import Teacher

    teacher = Teacher(lm3, SearchConfig(length=2, rerank_k=0))
    plain, = teacher.summarize([(0, "the police arrested five protesters")])
    hostile, = teacher.summarize([(0, "the\u202e police arrested\x00 five\u200b protesters")])
    assert hostile.summary == plain.summary and shown(hostile.summary)


def test_search_memory_is_bounded_on_a_long_line_with_a_high_order_lm(tmp_path, env):
    """A 1,000-word line and a 5-gram LM, under a 4 GB address-space limit: the dense n-gram table
    would need (1,002)^5 floats; the search reads the words that fit search.max_memory_mb instead
    (1 GB: the limit also holds Python, NumPy, numba compiling its kernels on a first run, the LM)."""
    import random
    import resource
    import subprocess

    from naus.teacher.lm import train_lm
    from tests.helpers import ROOT, headline_corpus

    train_lm(write(tmp_path / "h.txt", headline_corpus()), tmp_path / "lm.bin", order=5)
    rng = random.Random(0)
    words = [rng.choice(headline_corpus(50).split()) for _ in range(1000)]
    longest = " ".join(words * 100)  # 100,000 words: a dense 5-gram table of them would need 10^25 floats
    source = write(tmp_path / "long.txt", " ".join(words) + "\npolice arrest five protesters in paris\n" + longest + "\n")

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    result = subprocess.run(["naus", "search", "--input", source, "--lm", tmp_path / "lm.bin", "--length", "6",
                             "--rerank-k", "0", "--out", tmp_path / "out.jsonl"], capture_output=True, text=True,
                            env=env, cwd=ROOT, preexec_fn=limit, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "sentence 1: 1000 words, searched on its first 40" in result.stderr
    assert "sentence 3: 100000 words, searched on its first 40" in result.stderr
    first, second, third = (json.loads(line)["summary"].split()
                            for line in (tmp_path / "out.jsonl").read_text().splitlines())
    assert len(first) == 6 and set(first) <= set(words[:40]) and len(second) == 6 and set(third) <= set(words[:40])
