"""Word vectors learned from unlabelled text alone (`naus.teacher.word_vectors`), the pair-free stand-in for MiniLM:
co-occurrence counts and PPMI checked against their definitions by brute force, the SVD against numpy's, the table
readable by the teacher's static similarity, and students' states from it checked against the lines they encode."""

import itertools
import math
from collections import Counter

import numpy as np
import pytest

from naus import NausError
from naus.plumbing.files import sha256sum
from naus.student.frozen import POSITIONS, WIDTH as STATE_WIDTH, States
from naus.teacher.masked_lm import position_code
from naus.teacher.similarity import StaticEmbedder
from naus.teacher.word_vectors import (build_word_vectors, cooccurrences, ppmi, train_word_vectors, truncated_svd,
                                       vocabulary, word_states)

LINES = ["the cat sat on the mat", "a dog sat on a log", "the dog saw the cat", "cat and dog and log"]


def test_cooccurrences_weigh_each_pair_by_its_distance_and_never_cross_a_line():
    split = [line.split() for line in LINES]
    words = vocabulary(split, min_count=1)
    index = {w: i for i, w in enumerate(words)}
    rows, cols, weights = cooccurrences(split, index, window=3)
    brute = Counter()
    for line in split:
        for i, j in itertools.permutations(range(len(line)), 2):
            if abs(i - j) <= 3:
                brute[index[line[i]], index[line[j]]] += 1.0 / abs(i - j)
    assert {(int(r), int(c)): w for r, c, w in zip(rows, cols, weights)} == pytest.approx(dict(brute))


def test_unknown_words_hold_their_place_but_count_nothing():
    split = [["rare", "cat", "sat"]]
    rows, cols, weights = cooccurrences(split, {"cat": 0, "sat": 1}, window=1)
    assert sorted(zip(rows.tolist(), cols.tolist(), weights.tolist())) == [(0, 1, 1.0), (1, 0, 1.0)]


def test_ppmi_is_the_positive_part_of_the_smoothed_pointwise_mutual_information():
    rng = np.random.default_rng(1)
    counts = rng.integers(0, 4, (5, 5)).astype(float)
    counts = counts + counts.T
    rows, cols = np.nonzero(counts)
    r, c, v = ppmi(rows, cols, counts[rows, cols], 5, smoothing=0.75)
    word, context = counts.sum(1), counts.sum(0) ** 0.75
    expected = {(i, j): math.log(counts[i, j] * context.sum() / (word[i] * context[j])) for i, j in zip(rows, cols)}
    assert {(int(i), int(j)): x for i, j, x in zip(r, c, v)} == pytest.approx({k: x for k, x in expected.items()
                                                                              if x > 0})


def test_the_randomized_svd_finds_the_leading_singular_pairs():
    rng = np.random.default_rng(2)
    dense = rng.standard_normal((40, 6)) @ np.diag([9, 7, 5, 3, 2, 1]) @ rng.standard_normal((6, 40))
    rows, cols = np.nonzero(dense)
    vectors, singular = truncated_svd(rows, cols, dense[rows, cols], 40, 4)
    u, s, _ = np.linalg.svd(dense)
    assert singular == pytest.approx(s[:4], rel=1e-6)
    assert np.abs(vectors.T @ u[:, :4]) == pytest.approx(np.eye(4), abs=1e-6)  # the same vectors up to sign
    assert (vectors[np.abs(vectors).argmax(axis=0), range(4)] > 0).all()  # each sign fixed


def corpus() -> list[str]:
    rng = np.random.default_rng(3)
    topics = [[f"w{t}{k}" for k in range(12)] for t in range(30)]
    return [" ".join(rng.choice(topics[rng.integers(30)], 8)) for _ in range(3000)]


def test_words_of_one_topic_get_near_vectors_and_the_same_text_the_same_bytes(tmp_path):
    lines = corpus()
    words, vectors = train_word_vectors(lines, width=30)
    index = {w: i for i, w in enumerate(words)}
    same, other = vectors[index["w00"]] @ vectors[index["w01"]], vectors[index["w00"]] @ vectors[index["w10"]]
    assert np.linalg.norm(vectors, axis=1) == pytest.approx(1.0, abs=1e-3)
    assert same > 0.5 > other
    build_word_vectors(lines, tmp_path / "a.npz", width=30)
    build_word_vectors(lines, tmp_path / "b.npz", width=30)
    assert sha256sum(tmp_path / "a.npz") == sha256sum(tmp_path / "b.npz")
    embedder = StaticEmbedder(tmp_path / "a.npz")  # the teacher's static similarity reads the table as it is
    first, second, third = embedder.encode(["w00 w01 w02", "w03 w04", "w20 w21"])
    assert first @ second > first @ third


def test_too_little_text_for_the_width_is_refused():
    with pytest.raises(NausError, match="fewer than the 320 dimensions"):
        train_word_vectors(LINES)


def test_a_students_states_are_each_words_vector_beside_its_position_and_name_the_table(tmp_path):
    lines = corpus()
    table = tmp_path / "table.npz"
    build_word_vectors(lines, table, width=STATE_WIDTH - POSITIONS)
    text = ["w00 unseen w01", "w10"]
    states = word_states(text, table)
    states.save(tmp_path / "states.npz")
    loaded = States.load(tmp_path / "states.npz")
    loaded.check_lines(text, tmp_path / "states.npz")
    assert loaded.encoder == sha256sum(table) and loaded.words().tolist() == [3, 1]
    words = dict(zip(np.load(table)["words"].tolist(), np.load(table)["vectors"]))
    first = loaded[0].astype(np.float64)
    assert first[0, :-POSITIONS] == pytest.approx(words["w00"] * math.sqrt(STATE_WIDTH - POSITIONS), abs=1e-2)
    assert not first[1, :-POSITIONS].any()  # a word the table lacks: no vector, its position still coded
    assert first[:, -POSITIONS:] == pytest.approx(position_code(3, POSITIONS), abs=1e-3)
    assert len({row.tobytes() for row in position_code(50, POSITIONS)}) == 50


def test_states_need_a_table_of_the_width_beside_the_position_code(tmp_path):
    build_word_vectors(corpus(), tmp_path / "narrow.npz", width=30)
    with pytest.raises(NausError, match="vectors of 30 dimensions"):
        word_states(["w00"], tmp_path / "narrow.npz")


def test_the_command_line_makes_the_table_and_a_students_states_from_it(tmp_path, env):
    """`naus word-vectors`, then `naus encode-states --encoder TABLE`: the states a student trains on, naming the
    table; an ONNX MiniLM cannot compute them, refused in one line with nothing written."""
    import subprocess

    from tests.helpers import ROOT, write

    text = write(tmp_path / "text.txt", "\n".join(corpus()) + "\n")
    table, states = tmp_path / "table.npz", tmp_path / "states.npz"
    for argv in (["word-vectors", "--inputs", text, "--out", table],
                 ["encode-states", "--input", text, "--encoder", table, "--out", states]):
        made = subprocess.run(["naus", *argv], capture_output=True, text=True, env=env, cwd=ROOT)
        assert made.returncode == 0, made.stderr
    loaded = States.load(states)
    loaded.check_lines(corpus(), states)
    assert loaded.encoder == sha256sum(table)
    from naus.student.frozen import encoder

    with pytest.raises(NausError, match="an ONNX MiniLM cannot compute the states of another encoder"):
        encoder(tmp_path / "minilm.onnx", table)


def test_a_student_on_word_states_summarises_new_text_from_its_table_and_refuses_minilms(tmp_path):
    """The pair-free chain's student: it learns on the table's states, decodes raw text with the table as its encoder
    (no MiniLM anywhere), and refuses MiniLM's states and another table."""
    from naus.decoding.summarizer import Summarizer
    from naus.settings import TrainConfig
    from naus.student.train import Pairs, train
    from naus.student.vocab import Vocab
    from tests.unit.test_copy_head import tiny_config

    lines = corpus()
    table, other = tmp_path / "table.npz", tmp_path / "other.npz"
    build_word_vectors(lines, table, width=STATE_WIDTH - POSITIONS)
    build_word_vectors(lines[:2000], other, width=STATE_WIDTH - POSITIONS)
    sources, targets = lines[:64], [" ".join(line.split()[:3]) for line in lines[:64]]
    vocab, states = Vocab.build(sources), word_states(sources, table)
    model = tiny_config(len(vocab))
    model.states_encoder = states.encoder
    train(Pairs([vocab.encode(s) for s in sources], [vocab.encode(t) for t in targets], states), None, vocab, model,
          TrainConfig(max_steps=5, max_tokens=512, warmup=1, eval_every=5, checkpoint_every=1000, device="cpu"),
          tmp_path / "student")
    student = tmp_path / "student/best.pt"
    summary = Summarizer.from_checkpoint(student, "cpu", encoder=table).summarize(["W00 w01 w02 w03 w04"], length=3)
    assert len(summary[0].summary.split()) == 3
    with pytest.raises(NausError, match="not the encoder whose states the student learned on"):
        Summarizer.from_checkpoint(student, "cpu", encoder=other)
    minilm = States(states.flat, states.offsets, states.sentences, "minilm.npz")  # the same lines, MiniLM's by name
    with pytest.raises(NausError, match="states of MiniLM"):
        Summarizer.from_checkpoint(student, "cpu").summarize(sources[:2], length=3, raw=False, states=minilm.take([0, 1]))
