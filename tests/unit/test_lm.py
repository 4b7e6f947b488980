"""The KenLM fluency model (`naus.teacher.lm`): trained only on a corpus it can learn from, refused when its
probabilities are impossible."""

import pytest

from tests.helpers import run_cli, write


def test_train_lm_on_an_empty_corpus_says_so(tmp_path, capsys):
    code, err = run_cli(["train-lm", "--corpus", write(tmp_path / "empty.txt", "\n\n"), "--out", tmp_path / "lm.bin"],
                        capsys)
    assert code == 2 and err.strip().splitlines()[-1] == f"naus: error: {tmp_path / 'empty.txt'}: no words to train a language model on"


def test_a_language_model_with_impossible_probabilities_is_refused():
    """A damaged model without its checksum record may load and answer garbage (KenLM itself never
    writes a positive log-probability): the search's table refuses it in one line."""
    import types

    from naus import NausError
    from naus.teacher.lm import NgramTable

    class Damaged:  # KenLM's interface, answering log10 P = 0.5 for every word
        def BeginSentenceWrite(self, state):
            pass

        def NullContextWrite(self, state):
            pass

        def BaseScore(self, state, word, out):
            return 0.5

    lm = types.SimpleNamespace(model=Damaged(), order=2, path="damaged.bin", unigram=lambda word: -1.0)
    with pytest.raises(NausError, match=r"damaged.bin: not a valid KenLM model \(a log-probability of 1.151 over"):
        NgramTable(lm, ["police", "arrest", "five"])
