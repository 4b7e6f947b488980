import json
import logging

import pytest
import torch

from naus import NausError
from naus.pipeline import layout
from naus.decoding.summarizer import Summarizer
from naus.plumbing.files import read_lines
from naus.settings import ModelConfig
from naus.student.checkpoint import FORMAT, save_checkpoint
from naus.student.model import NAUS
from naus.student.vocab import Vocab
from tests.helpers import SENTENCE, TEXT, naus_main, write


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """An untrained but valid checkpoint: the API and CLI behaviour does not depend on training."""
    torch.manual_seed(0)
    vocab = Vocab.build(["police arrested five protesters on thursday in paris ."])
    config = ModelConfig(len(vocab), d_model=32, n_heads=2, n_layers=1, d_ff=64, dropout=0.0, max_len=64)
    path = tmp_path_factory.mktemp("ckpt") / "best.pt"
    save_checkpoint(path, {"format": FORMAT, "vocab": vocab.tokens, "model_config": config.to_dict(),
                           "model": NAUS(config).state_dict()})
    return path


@pytest.mark.parametrize("method", ["greedy", "truncate", "beam", "length-control"])
def test_summarize_api_keeps_empty_lines_and_lengths(checkpoint, method):
    summarizer = Summarizer.from_checkpoint(checkpoint)
    sentences = ["Police arrested five protesters on Thursday in Paris.", "", "Police arrested five"]
    results = summarizer.summarize(sentences, length=4, method=method)
    assert len(results) == 3 and results[1].summary == ""
    if method == "length-control":
        assert [r.length for r in results] == [4, 0, 3]  # the third has only 3 slots
    if method in ("truncate", "beam"):
        assert all(r.length <= 4 for r in results)
    assert summarizer.summarize([], length=4) == []


def test_ratio_mode(checkpoint):
    results = Summarizer.from_checkpoint(checkpoint).summarize(
        ["police arrested five protesters on thursday in paris ."], ratio=0.5, method="length-control"
    )
    assert results[0].length == 4


def test_missing_or_incompatible_checkpoint(tmp_path):
    with pytest.raises(NausError, match="checkpoint not found"):
        Summarizer.from_checkpoint(tmp_path / "none.pt")
    with pytest.raises(NausError, match="not a readable checkpoint"):
        Summarizer.from_checkpoint(write(tmp_path / "bad.pt", b"junk"))


def test_summarize_command_line(checkpoint, tmp_path, capsys):
    result = naus_main(["summarize", "--checkpoint", checkpoint, "--length", "3", "--jsonl"], capsys,
                       stdin="Police arrested five protesters on Thursday.\n\nIn Paris.\n")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(x) for x in result.stdout.splitlines()]
    assert [x["length"] for x in lines] == [3, 0, 2]  # "In Paris." has two words: its full stop is none
    empty = naus_main(["summarize", "--checkpoint", checkpoint], capsys, stdin="")
    assert empty.returncode == 0 and empty.stdout == ""
    missing = naus_main(["summarize", "--checkpoint", tmp_path / "x.pt"], capsys, stdin="a\n")
    assert missing.returncode == 2 and "checkpoint not found" in missing.stderr


def test_timing_records_its_passes_and_the_cpu_beside_the_summaries(checkpoint, tmp_path, capsys):
    """A timing names the chip that made it (the CPU's model and its instruction sets, as a GPU's card)."""
    from naus.cli import main
    from naus.device import cpu_name, isa

    source = write(tmp_path / "in.txt", "police arrested five protesters\nin paris\n")
    decode = ["decode", "--checkpoint", str(checkpoint), "--input", str(source), "--length", "2"]
    assert main([*decode, "--timing", str(tmp_path / "t.json"), "--timing-passes", "2", "--batch1-samples", "1"]) == 0
    timing = json.loads((tmp_path / "t.json").read_text())
    assert (timing["passes"], timing["samples"], timing["batch1_samples"]) == (2, 2, 1)
    assert timing["seconds_per_sample"] > 0 and len(capsys.readouterr().out.splitlines()) == 2
    assert timing["device"].startswith(f"cpu ({cpu_name()}") and all(flag in timing["device"] for flag in isa())


def test_time_writes_each_named_decodings_timing_and_no_summaries(checkpoint, tmp_path, capsys):
    """What the pipeline's timing job runs: every decoding given with its settings (the plan's) and the files it reads
    and writes, recorded with what made it; a stem that is not where those settings' decoding is written, a method
    that is none, a decoding given without its time file, and a time file that is an input are refused before any
    work."""
    from naus.cli import main

    source = write(tmp_path / "test.txt", "police arrested five protesters\nin paris\n")
    planned = [layout.Decoded("test", "L2", "length-control", "2"), layout.Decoded("test", "L2", "length-control", "3", 4),
               layout.Decoded("test", "L2", "char-control", "c12")]
    stems = [d.stem for d in planned]
    outs = [tmp_path / f"t{k}.json" for k in range(len(stems))]
    decodings = [arg for d, out in zip(planned, outs) for arg in (
        "--decoding", d.stem, d.method, d.target, str(d.beam or 6), str(checkpoint), str(source), str(out))]
    timed = ["time", "--timing-passes", "2", "--batch1-samples", "1"]
    assert main([*timed, *decodings]) == 0
    first, sweep, chars = (json.loads(out.read_text()) for out in outs)
    assert (first["passes"], first["samples"], first["batch1_samples"], first["beam_size"]) == (2, 2, 1, 6)
    assert sweep["beam_size"] == 4 and first["checkpoint"] == sweep["checkpoint"] and chars["method"] == "char-control"
    assert first["input"]["path"] == str(source) and first["checkpoint"]["path"] == str(checkpoint)
    assert capsys.readouterr().out == "" and sorted(tmp_path.glob("*.txt")) == [source]
    files = [str(checkpoint), str(source), str(outs[0])]
    for wrong, named in ((["decode/test/L2/nonsense-2", "nonsense", "2", "6", *files], "'nonsense' is not a method"),
                         ([stems[0], "truncate", "2", "6", *files], "is not written there"),
                         ([stems[0], "length-control", "two", "6", *files], "'two' is not a target"),
                         ([stems[0], "length-control", "2", "0", *files], "beam_size must be between 1"),
                         ([stems[0], "length-control", "2", "6", *files[:2]], "STEM METHOD TARGET BEAM CHECKPOINT"),
                         ([stems[0], "length-control", "2", "6", *files[:2], str(source)], str(source))):
        before = source.read_bytes()
        assert main([*timed, "--decoding", *wrong]) == 2 and named in capsys.readouterr().err
        assert source.read_bytes() == before


def test_a_students_decodings_in_one_process_are_those_of_one_process_each(checkpoint, tmp_path, capsys):
    """`naus decode-all` then `naus unbundle` (the pipeline's decodings): the same summaries and provenance as
    `naus decode --provenance` run once per decoding; a decoding the file does not hold is named."""
    import shutil

    from naus.cli import main

    build = tmp_path / "build"
    (build / layout.student_dir("L2")).mkdir(parents=True)
    shutil.copy(checkpoint, build / layout.student_dir("L2") / "best.pt")
    source = write(build / layout.DECODE_SOURCES["test"], "police arrested five protesters\n\nin paris\n")
    planned = [layout.Decoded("test", "L2", "length-control", "2"), layout.Decoded("test", "L2", "beam", "3", 4)]
    stems = [d.stem for d in planned]
    decodings = [arg for d in planned for arg in ("--decoding", d.stem, d.method, d.target, str(d.beam or 6))]
    bundle = tmp_path / "all.json"
    student = build / layout.student_dir("L2") / "best.pt"
    given = ["--checkpoint", str(student), "--source", str(source)]  # what the rule declares, passed as such
    assert main(["decode-all", *given, "--out", str(bundle), *decodings]) == 0
    for stem, options in zip(stems, (["--method", "length-control", "--length", "2"],
                                     ["--method", "beam", "--length", "3", "--beam-size", "4"])):
        one, bundled = tmp_path / "one.txt", tmp_path / "bundled.txt"
        assert main(["decode", "--checkpoint", str(build / layout.student_dir("L2") / "best.pt"), "--input",
                     str(source), *options, "--out", str(one), "--provenance", str(tmp_path / "one.json")]) == 0
        assert main(["unbundle", "--bundle", str(bundle), "--stem", stem, "--out", str(bundled), "--provenance",
                     str(tmp_path / "bundled.json")]) == 0
        assert bundled.read_bytes() == one.read_bytes() and len(one.read_text().splitlines()) == 3
        made, expected = (json.loads((tmp_path / f"{name}.json").read_text()) for name in ("bundled", "one"))
        assert made["summaries"]["sha256"] == expected["summaries"]["sha256"]
        assert made["checkpoint"]["sha256"] == expected["checkpoint"]["sha256"] and made["lines"] == 3
    capsys.readouterr()
    missing = layout.decoded("test", "L2", "truncate", "2")
    assert main(["unbundle", "--bundle", str(bundle), "--stem", missing, "--out", str(tmp_path / "x.txt"),
                 "--provenance", str(tmp_path / "x.json")]) == 2
    assert f"holds no decoding {missing}" in capsys.readouterr().err and not (tmp_path / "x.txt").exists()
    # --out onto the student it loads (or the source, or the states) is refused
    before = student.read_bytes()
    states = build / layout.frozen_states("test")
    for target in (student, source, states):
        assert main(["decode-all", *given, "--states", str(states), "--out", str(target), *decodings]) == 2
        assert "an output may not overwrite an input" in capsys.readouterr().err
    assert student.read_bytes() == before and not states.exists()
    # a decoding whose stem is not where its settings' decoding is written is refused before any work
    wrong = ["--decoding", stems[0], "length-control", "3", "6"]
    assert main(["decode-all", *given, "--out", str(tmp_path / "two.json"), *decodings, *wrong]) == 2
    assert "is not written there" in capsys.readouterr().err and not (tmp_path / "two.json").exists()


class Copier(torch.nn.Module):
    """A stand-in student that copies each slot's source token (its <unk> too): the case where
    a summary of raw text would carry <unk> for every word the vocabulary lacks."""

    def __init__(self, config):
        super().__init__()
        self.config = config

    def forward(self, tokens, lengths, normalize=True):
        logits = 10.0 * torch.nn.functional.one_hot(tokens, self.config.vocab_size).float()
        return logits.log_softmax(-1) if normalize else logits


@pytest.mark.parametrize("method", ["greedy", "truncate", "beam", "length-control"])
def test_unknown_words_come_back_from_the_source_unless_kept(checkpoint, method):
    summarizer = Summarizer.from_checkpoint(checkpoint)
    summarizer.model = Copier(summarizer.model.config)
    raw = "Police arrested five anti-nuclear protesters Thursday in Cherbourg."
    summary = summarizer.summarize([raw], length=7, method=method)[0].summary
    assert "<unk>" not in summary
    assert summary.split()[:7] == "Police arrested five anti-nuclear protesters Thursday in".split()  # as written
    tokenised = ["police arrested five anti-nuclear protesters"]
    assert summarizer.summarize(tokenised, length=5, method=method, raw=False)[0].summary == tokenised[0]
    kept = summarizer.summarize(tokenised, length=5, method=method, raw=False, restore=False)[0].summary
    assert kept == "police arrested five <unk> protesters"


def test_unknown_words_without_slot_alignment_take_the_source_order():
    from naus.decoding import Hypothesis
    from naus.decoding.summarizer import restore_unknown

    vocab = Vocab.build(["police arrested protesters in"])
    source = "police arrested anti-nuclear protesters in cherbourg".split()
    words = ["<unk>", "police", "<unk>", "<unk>"]
    hyp = Hypothesis([vocab.index.get(w, vocab.unk) for w in words])
    assert restore_unknown(words, hyp, source, vocab, aligned=False) == ["anti-nuclear", "police", "cherbourg", "<unk>"]


def test_char_control_fits_the_budget_counting_restored_unknown_words(checkpoint):
    """The copying student within 30 characters: whole words, the source's own for each <unk>, and
    the budget holds for the summary as returned (`anti-nuclear` counts 12 characters, not 5)."""
    summarizer = Summarizer.from_checkpoint(checkpoint)
    summarizer.model = Copier(summarizer.model.config)
    raw = "Police arrested five anti-nuclear protesters Thursday in Cherbourg."
    source = "police arrested five anti-nuclear protesters thursday in cherbourg .".split()
    for budget in (5, 12, 20, 30, 45, 80):
        summary = summarizer.summarize([raw], method="char-control", chars=budget, headlines=False)[0].summary
        assert len(summary.encode()) <= budget and "<unk>" not in summary
        words = summary.split()
        assert all(w in source for w in words) and len(summary) > budget - 14  # only a whole word left out
    with pytest.raises(NausError, match="needs a budget in characters"):
        summarizer.summarize([raw], method="char-control")
    with pytest.raises(NausError, match="for char-control, not length-control"):
        summarizer.summarize([raw], method="length-control", chars=30)


def test_char_budget_on_the_command_line(checkpoint, capsys):
    run = lambda *options: naus_main(  # noqa: E731
        ["summarize", "--checkpoint", checkpoint, *options], capsys,
        stdin="Police arrested five protesters on Thursday in Paris.\nIn Paris.\n")
    fits = run("--chars", "20")
    assert fits.returncode == 0, fits.stderr
    assert [len(line.encode()) <= 20 for line in fits.stdout.splitlines()] == [True, True]
    both = run("--chars", "20", "--length", "3")
    assert both.returncode == 2 and "not allowed with argument" in both.stderr
    wrong = run("--chars", "20", "--method", "beam")
    assert wrong.returncode == 2 and "naus: error: a budget in characters (--chars) is for char-control" in wrong.stderr


def test_a_bundled_summary_holding_a_line_break_is_refused_not_written_as_two_lines(tmp_path, capsys):
    from naus.cli import main

    record = {"path": "x", "sha256": "0" * 64}
    bundle = write(tmp_path / "all.json", json.dumps({"decodings": {"decode/test/L2/truncate-2": {
        "input": record, "checkpoint": record, "summaries": ["one", "two\rthree", "", "four"]}}}))
    out = tmp_path / "out.txt"
    assert main(["unbundle", "--bundle", str(bundle), "--stem", "decode/test/L2/truncate-2", "--out", str(out),
                 "--provenance", str(tmp_path / "out.json")]) == 2
    assert "summary 2 of decode/test/L2/truncate-2 holds a line break" in capsys.readouterr().err
    assert not out.exists()


NEW = ["Lyon's mayor didn't resign (yet) after 3,200 marchers crossed the Rhône on 14 July.", "IBM sold 12 plants.",
       "iPhone sales rose 7.5% in Q3, Apple said."]  # sentences no data set here has


@pytest.mark.parametrize("method", ["greedy", "truncate", "beam", "length-control"])
def test_headlines_are_the_sources_words_as_written_and_count_no_punctuation(checkpoint, method):
    """No masked digit, no -lrb-, no punctuation among the L words; each source word as the source wrote it."""
    results = Summarizer.from_checkpoint(checkpoint).summarize(NEW, length=5, method=method)
    for sentence, result in zip(NEW, results):
        words = result.summary.split()
        assert "#" not in result.summary and "-lrb-" not in result.summary and "(" not in result.summary
        assert len(words) == result.length and all(any(c.isalnum() for c in w) for w in words)
        assert result.length <= 5 if method != "length-control" else result.length == min(5, len(sentence.split()))
    headlines = " ".join(r.summary for r in results)
    assert all(w in headlines for w in ("14", "IBM", "Q3") if w.lower() in headlines.lower())
    evaluator = Summarizer.from_checkpoint(checkpoint).summarize(NEW, length=5, method=method, headlines=False)
    assert all(r.summary == r.summary.lower() for r in evaluator)


def test_a_character_budget_gives_the_longest_headline_that_fits(checkpoint):
    """Within the budget, no length-controlled headline with more words fits than the one given."""
    summarizer = Summarizer.from_checkpoint(checkpoint)
    for chars in (8, 25, 40):
        given = summarizer.summarize(NEW, chars=chars)
        assert all(len(r.summary.encode()) <= chars for r in given)
        for words in range(1, 8):
            for fixed, best in zip(summarizer.summarize(NEW, length=words, method="length-control"), given):
                assert len(fixed.summary.encode()) > chars or best.length >= fixed.length


def test_headlines_need_raw_text_and_the_command_line_writes_the_evaluators_form_with_raw(checkpoint, capsys):
    with pytest.raises(NausError, match="headlines are written from raw text"):
        Summarizer.from_checkpoint(checkpoint).summarize(["police arrested # men"], raw=False, headlines=True)
    raw = naus_main(["summarize", "--checkpoint", checkpoint, "--length", "4", "--raw"], capsys, stdin=NEW[1] + "\n")
    headline = naus_main(["summarize", "--checkpoint", checkpoint, "--length", "4"], capsys, stdin=NEW[1] + "\n")
    assert raw.returncode == headline.returncode == 0
    assert raw.stdout == raw.stdout.lower() and "#" not in headline.stdout


def test_a_second_writer_of_the_same_summaries_is_refused(checkpoint, tmp_path, capsys):
    """One writer per output: while one holds it, a second `naus decode` (or `unbundle`) onto it is refused, so
    no file of summaries sits beside another writer's provenance."""
    from naus.plumbing.outputs import OutputLock

    source, out = write(tmp_path / "in.txt", "police arrested five protesters\n"), tmp_path / "out.txt"
    with OutputLock(out):
        result = naus_main(["decode", "--checkpoint", checkpoint, "--input", source, "--length", "2", "--out", out,
                            "--provenance", tmp_path / "p.json"], capsys)
    assert result.returncode == 2 and "being written by process" in result.stderr and not out.exists()
    assert naus_main(["decode", "--checkpoint", checkpoint, "--input", source, "--length", "2", "--out", out],
                     capsys).returncode == 0 and out.is_file()

# -- hostile and careless input (the review rounds): each test names the input it spoils and what it did before --

def test_summarize_reads_a_generator(good):
    from naus.decoding.summarizer import Summarizer

    summarizer = Summarizer.from_checkpoint(good["checkpoint"])
    sentences = ["police arrest five protesters in paris", "stocks close lower"]
    assert len(summarizer.summarize((s for s in sentences), length=2)) == 2


def test_the_models_markers_written_in_a_tokenised_input_are_not_summary_words(good):
    from naus.decoding.summarizer import Summarizer
    from naus.student.vocab import Vocab

    summarizer = Summarizer.from_checkpoint(good["checkpoint"], "cpu")
    sentences = ["police <pad> arrest <blank> five <pad> protesters <blank> in <pad> paris <blank>"] * 2
    for method in ("length-control", "truncate", "beam"):
        for result in summarizer.summarize(sentences, length=4, method=method, raw=False):
            assert "<pad>" not in result.summary and "<blank>" not in result.summary, (method, result.summary)
    vocab = Vocab.build(["police arrest"])
    assert vocab.encode("police <pad> <blank>") == [vocab.index["police"], vocab.unk, vocab.unk]


@pytest.mark.parametrize("targets", [{"length": 6, "ratio": 0.5}, {"length": 6, "chars": 30},
                                     {"ratio": 0.5, "chars": 30}])
def test_the_api_refuses_two_targets_as_the_command_line_does(good, targets):
    """`summarize(x, length=6, ratio=0.5)` gave 12 words and `(length=6, chars=30)` 4: length was ignored."""
    from naus import Summarizer

    with pytest.raises(NausError, match="give one of length, ratio and chars, not "):
        Summarizer.from_checkpoint(good["checkpoint"]).summarize(["police arrest five protesters"], **targets)


def test_the_api_refuses_a_path_given_as_states(good):
    """`states="x.npz"` raised AttributeError from inside the decoder."""
    from naus import Summarizer

    with pytest.raises(TypeError, match=r"states must be States \(naus.student.frozen.States.load\(path\)"):
        Summarizer.from_checkpoint(good["checkpoint"]).summarize(["police arrest"], states="x.npz")


@pytest.mark.parametrize("given, message", [
    (["police \ud800 arrested five"], r"sentences\[0\] holds a lone surrogate U\+D800 at character 8"),
    (["fine", "also \udfff"], r"sentences\[1\] holds a lone surrogate U\+DFFF")])
def test_the_api_names_a_lone_surrogate_and_where_it_is(given, message):
    """A lone surrogate ended in the tokenizer's `TypeError: PreTokenizedEncodeInput must be Union[...]`."""
    from naus import Summarizer

    with pytest.raises(ValueError, match=message) as raised:
        Summarizer.from_pretrained().summarize(given)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize("given, message", [(b"police arrest", "got bytes"), (None, "got NoneType"),
                                            (42, "got int"), ([None], r"got NoneType at sentences\[0\]")])
def test_the_api_names_the_type_it_was_given_and_the_one_it_takes(given, message):
    """`bytes` was refused as "got int", `None` as "'NoneType' object is not iterable"."""
    from naus import Summarizer

    with pytest.raises(TypeError, match=message) as raised:
        Summarizer.from_pretrained().summarize(given)
    assert "strings" in str(raised.value)


def test_a_file_and_an_iterable_are_summarised_a_chunk_at_a_time(tmp_path, capsys, monkeypatch):
    import naus.decoding.summarizer as summarizer
    from naus.decoding.summarizer import Summarizer

    monkeypatch.setattr(summarizer, "CHUNK", 4)
    sizes, real = [], Summarizer._summarize_chunk

    def recording(self, sentences, *args):
        sizes.append(len(sentences))
        return real(self, sentences, *args)

    monkeypatch.setattr(Summarizer, "_summarize_chunk", recording)
    source = write(tmp_path / "in.txt", (SENTENCE + "\n") * 10)
    assert naus_main(["summarize", "--input", source, "--length", "4", "--out", tmp_path / "o.txt"],
                     capsys).returncode == 0
    assert sizes == [4, 4, 2] and len(read_lines(tmp_path / "o.txt")) == 10
    sizes.clear()
    pulled = []

    def sentences():
        for k in range(9):
            pulled.append(k)
            assert len(pulled) - sum(sizes) <= 4, "read ahead of what was summarised"
            yield SENTENCE

    results = Summarizer.from_pretrained().summarize(sentences(), length=4)
    assert len(results) == 9 and sizes == [4, 4, 1]


@pytest.mark.parametrize("options, error, message", [
    ({"batch_size": -1}, ValueError, "batch_size must be between 1 and 4096, got -1"),
    ({"ratio": 5.0, "length": None}, ValueError, "ratio must be in (0, 1]"),
    ({"length": 3.7}, TypeError, "length must be an integer, got float 3.7"),
    ({"length": 10**9}, ValueError, "length must be between 1 and 4096"),
    ({"beam_size": 10**6}, ValueError, "beam_size must be between 1 and 256, got 1000000"),
    ({"chars": 10**9}, ValueError, "chars must be between 1 and 10000"),
    ({"batch_size": "64"}, TypeError, "batch_size must be an integer, got str"),
])
def test_the_library_checks_what_the_command_line_checks(checkpoints, options, error, message):
    summarizer = Summarizer.from_checkpoint(checkpoints["naus"], "cpu")
    with pytest.raises(error) as raised:
        summarizer.summarize(TEXT, **options)
    assert message in str(raised.value) and "\n" not in str(raised.value)


@pytest.mark.parametrize("sentences, message", [
    ("police arrest five", r"an iterable of strings \(a list of str\), got str: one sentence is \[text\]"),
    (["police", 7], r"sentences must be strings, got int at sentences\[1\]"),
    ([b"police arrest"], r"got bytes at sentences\[0\] \(decode bytes first"),
    (b"police arrest", r"an iterable of strings \(a list of str\), got bytes"),
    (None, r"an iterable of strings \(a list of str\), got NoneType")])
def test_sentences_that_are_not_strings_are_a_type_error(checkpoints, sentences, message):
    with pytest.raises(TypeError, match=message):
        Summarizer.from_checkpoint(checkpoints["naus"], "cpu").summarize(sentences)


def test_a_source_longer_than_the_students_positions_is_logged_and_read_on_its_first_words(checkpoints, caplog):
    long = " ".join(["police arrest five protesters"] * 5000)  # 20,000 words; the student has 32 positions
    with caplog.at_level(logging.WARNING, logger="naus.decoding.summarizer"):
        results = Summarizer.from_checkpoint(checkpoints["naus"], "cpu").summarize([long, TEXT[1]], length=4)
    assert "1 of 2 sentences are longer than this student's 32 positions" in caplog.text
    assert "sentence 1, 20000 words" in caplog.text and len(results[0].summary.split()) == 4


def test_a_huge_length_under_a_4_gb_limit_is_one_error_line_or_the_whole_source(checkpoints, tmp_path, env):
    """The case of the report: --length 10^9 was killed at 23 GB, or gave empty summaries under a limit."""
    import resource
    import subprocess

    text = write(tmp_path / "text.txt", "\n".join(TEXT) + "\n")

    def decode(*options):
        limit = lambda: resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))  # noqa: E731
        return subprocess.run(["naus", "decode", "--checkpoint", checkpoints["naus"], "--input", text, *options],
                              capture_output=True, text=True, env=env, preexec_fn=limit, timeout=300)

    refused = decode("--length", "1000000000")
    assert refused.returncode == 2 and refused.stderr.strip().splitlines()[-1] == \
        "naus decode: error: argument --length: must be between 1 and 4096, got 1000000000"
    refused = decode("--chars", "1000000000")  # was a MemoryError traceback
    assert refused.returncode == 2 and refused.stderr.strip().splitlines()[-1] == \
        "naus decode: error: argument --chars: must be between 1 and 10000, got 1000000000"
    widest = decode("--length", "4096", "--beam-size", "256")
    assert widest.returncode == 0, widest.stderr[-2000:]
    assert [len(line.split()) for line in widest.stdout.splitlines()] == [len(t.split()) for t in TEXT]
