"""Hostile and careless input, round six: a lock that is a link or someone else's file, a profile name that is
not one."""

from __future__ import annotations

import os
import subprocess

import numpy as np
import pytest

from naus import NausError
from naus.outputs import OutputLock
from tests.helpers import ROOT, snakemake, write
from tests.unit.test_bad_input import good, run_cli  # noqa: F401 (a fixture)
from tests.unit.test_hostile_input import decode


def test_a_link_where_the_lock_goes_is_refused_and_what_it_points_to_kept(good, capsys, tmp_path):
    """`ln -s victim.txt out.txt.lock` replaced the victim's text with the writer's line and removed the link."""
    victim = write(tmp_path / "victim.txt", "precious\n")
    out = tmp_path / "out.txt"
    os.symlink(victim, f"{out}.lock")
    code, err = run_cli(decode(good, out), capsys)
    assert code == 2 and "symbolic link" in err and err.count("\n") == 1
    assert victim.read_text() == "precious\n" and os.path.islink(f"{out}.lock") and not out.exists()


def test_an_input_where_the_lock_goes_is_refused_and_kept(good, capsys, tmp_path):
    """`--input x.txt.lock --out x.txt` removed the input when the lock was released."""
    source = write(tmp_path / "x.txt.lock", good["text"].read_text())
    code, err = run_cli(["decode", "--checkpoint", good["checkpoint"], "--input", source, "--length", "2",
                         "--out", tmp_path / "x.txt"], capsys)
    assert code == 2 and "not a lock of naus" in err
    assert source.read_text() == good["text"].read_text() and not (tmp_path / "x.txt").exists()


def test_a_lock_with_other_names_or_of_another_kind_is_refused_and_a_killed_writers_is_reused(tmp_path):
    other = write(tmp_path / "other.txt", "")
    os.link(other, tmp_path / "a.lock")
    with pytest.raises(NausError, match="a hard-linked file"):
        OutputLock(tmp_path / "a")
    os.mkfifo(tmp_path / "b.lock")
    with pytest.raises(NausError, match="not a file"):
        OutputLock(tmp_path / "b")
    assert (tmp_path / "a.lock").exists() and (tmp_path / "b.lock").exists()
    write(tmp_path / "c.lock", "process 1 on elsewhere\n")  # a writer killed with -9 left it: no process holds it
    with OutputLock(tmp_path / "c") as lock:
        assert lock.path.read_text() == f"process {os.getpid()} on {os.uname().nodename}\n"
    assert not (tmp_path / "c.lock").exists()


@pytest.mark.parametrize("profile", ["demo.yaml /some/dir", "demo /tmp", "../config/demo", "demo.yaml", "lease-partial"])
def test_make_refuses_a_profile_that_is_not_a_profiles_name_and_removes_nothing(tmp_path, profile):
    """`make clean PROFILE='demo.yaml /some/dir'` passed the check (`$(wildcard)` found config/demo.yaml) and would
    have run `rm -rf build/demo.yaml /some/dir`."""
    keep = write(tmp_path / "keep" / "file.txt", "kept\n")
    result = subprocess.run(["make", "-n", "clean", f"PROFILE={profile}"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode != 0 and "rm " not in result.stdout
    assert "no profile" in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    result = subprocess.run(["make", "clean", f"PROFILE={profile}"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode != 0 and keep.read_text() == "kept\n"


@pytest.mark.parametrize("section, value, key", [("train", {"max_steps": 100.0}, "train.max_steps"),
                                                  ("train", {"seeds": [1.0]}, "train.seeds.0"),
                                                  ("search", {"lengths": [8.0]}, "search.lengths.0")])
def test_a_float_where_the_configuration_wants_an_integer_is_refused_naming_its_key(tmp_path, section, value, key):
    """JSON Schema's integer accepts 100.0: the profile passed and a Snakemake traceback came from common.smk."""
    import yaml

    from tests.helpers import resolved_config

    config = yaml.safe_load((ROOT / "config/demo.yaml").read_text())
    config[section].update(value)
    with pytest.raises(NausError, match=rf"config key {key}: .* is not of type 'integer'"):
        resolved_config(write(tmp_path / "float.yaml", yaml.safe_dump(config)))


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


@pytest.mark.parametrize("kind", ["file", "fifo", "missing"])
def test_a_data_directory_that_is_none_is_one_line_before_the_dag(tmp_path, env, kind):
    """NAUS_DATA naming a file, a FIFO or nothing gave Snakemake's MissingInputException, many lines long."""
    path = tmp_path / "data"
    if kind == "file":
        write(path, "not a directory\n")
    elif kind == "fifo":
        os.mkfifo(path)
    code, out = snakemake(["-n", "--configfile", "config/gigaword-sample.yaml"], {**env, "NAUS_DATA": str(path)},
                          timeout=120)
    last = out.strip().splitlines()[-1]
    assert code != 0 and last.startswith(f"naus: error: {path}") and "Traceback" not in out
    assert "NAUS_DATA names" in last


def test_a_download_is_capped_and_written_with_the_umasks_permissions(tmp_path):
    """`naus download` of file:///dev/zero ran until the disk was full, and wrote 0600 where every output is 0644."""
    import hashlib

    from naus.sources import download

    source = write(tmp_path / "release.zip", b"x" * (3 << 20))
    with pytest.raises(NausError, match=r"more than 2 MB \(--max-mb\)"):
        download(source.as_uri(), tmp_path / "capped.zip", "0" * 64, max_mb=2)
    assert not (tmp_path / "capped.zip").exists() and not list(tmp_path.glob(".capped.zip.*"))
    old = os.umask(0o022)
    try:
        got = download(source.as_uri(), tmp_path / "kept.zip", hashlib.sha256(source.read_bytes()).hexdigest())
    finally:
        os.umask(old)
    assert got.read_bytes() == source.read_bytes() and (got.stat().st_mode & 0o777) == 0o644


def test_states_of_an_edited_or_reordered_source_are_refused_naming_the_file_and_line(tmp_path):
    """Checked by word counts only, states of an edited source (or two same-length sentences swapped) trained and
    decoded without a word: 89 of 100 sentences trained on another sentence's states."""
    from naus.decoding.summarizer import Summarizer
    from naus.student.train import load_pairs
    from naus.student.vocab import Vocab
    from tests.unit.test_copy_head import word_states

    lines = ["police arrest five men", "stocks close lower today", "rain hits the coast"]
    states = tmp_path / "states.npz"
    word_states(lines).save(states)
    edited = write(tmp_path / "edited.txt", "police arrest six men\nstocks close lower today\nrain hits the coast\n")
    target = write(tmp_path / "target.txt", "a\nb\nc\n")
    with pytest.raises(NausError, match=rf"{states}: no states of line 1 of {edited}"):
        load_pairs(edited, target, Vocab.build(lines), 32, states)
    swapped = word_states(lines)
    swapped.sentences = swapped.sentences[[1, 0, 2]]  # two sentences of four words: the counts agree
    swapped.save(states)
    source = write(tmp_path / "source.txt", "".join(f"{line}\n" for line in lines))
    with pytest.raises(NausError, match=rf"{states}: no states of line 1 of {source}"):
        load_pairs(source, target, Vocab.build(lines), 32, states)
    from naus.student.frozen import States

    with pytest.raises(NausError, match=rf"{states}: the states of sentence 1 \(and 1 more\) encode another"):
        States.load(states).check_lines(lines, States.load(states).source)
    assert Summarizer  # decoding reads the same check (Summarizer._frozen_states): tests/unit/test_copy_head.py


@pytest.mark.parametrize("value", [np.nan, np.inf, 1e6])
def test_states_holding_nan_inf_or_numbers_past_float16_are_refused_naming_the_file(tmp_path, value):
    """NaN states gave "training diverged at step 1 ... Lower --lr", naming no file; float32 past fp16's range
    silently became inf."""
    from naus.student.frozen import WIDTH, States

    flat = np.zeros((2, WIDTH), dtype=np.float32)
    flat[1, 5] = value
    np.savez(tmp_path / "s.npz", flat=flat, offsets=np.array([0, 2]), sentences=np.zeros((1, 32), np.uint8))
    with pytest.raises(NausError, match=rf"{tmp_path / 's.npz'}: frozen states hold NaN, infinite or numbers beyond"):
        States.load(tmp_path / "s.npz")


def test_states_of_raw_text_are_those_summarize_reads(tmp_path, capsys):
    """`naus encode-states --input news.txt` then `naus summarize --states` on it was refused (summarize reads the
    normalised line); `--raw` encodes what summarize reads, and its headlines equal those computed without states."""
    from naus.student.frozen import States, digests
    from naus.text import normalize
    from tests.helpers import naus_main

    news = write(tmp_path / "news.txt", "Police arrested 5 protesters in Paris on Monday.\nStocks closed LOWER.\n")
    assert naus_main(["encode-states", "--input", news, "--out", tmp_path / "plain.npz"], capsys).returncode == 0
    assert naus_main(["encode-states", "--raw", "--input", news, "--out", tmp_path / "raw.npz"], capsys).returncode == 0
    lines = [normalize(line) for line in news.read_text().splitlines()]
    assert np.array_equal(States.load(tmp_path / "raw.npz").sentences, digests(lines))
    with pytest.raises(NausError, match="naus encode-states --raw"):
        States.load(tmp_path / "plain.npz").check_lines(lines, "plain.npz", "naus encode-states --raw")


def test_a_full_disk_names_the_lock_it_could_not_write_and_leaves_none(tmp_path, monkeypatch):
    """A full disk gave `naus: error: [Errno 28] No space left on device`, naming no file, its .lock left behind."""
    import errno

    def full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(NausError, match=rf"{tmp_path / 'out.txt.lock'}: could not write the lock of .*No space left"):
        OutputLock(tmp_path / "out.txt")
    monkeypatch.undo()
    assert not (tmp_path / "out.txt.lock").exists()


def test_the_perl_backend_refuses_a_line_longer_than_it_can_hold_naming_file_and_line(tmp_path, capsys):
    """`naus evaluate --backend perl` on one 5,000-word line took 3.0 GB (ROUGE-1.5.5's memory is quadratic)."""
    from tests.helpers import naus_main

    hyp = write(tmp_path / "hyp.txt", "police arrest\n" + " ".join(["word"] * 5000) + "\n")
    ref = write(tmp_path / "ref.txt", "police arrest five\nstocks fall\n")
    result = naus_main(["evaluate", "--hyp", hyp, "--ref", ref, "--backend", "perl", "--out", tmp_path / "m.json"],
                       capsys)
    assert result.returncode == 2 and f"{hyp}: line 2: 5,000 words; the perl backend takes at most 1,000" in result.stderr
    assert not (tmp_path / "m.json").exists()
