"""The search's resumable, sharded output (`naus.teacher.shards`): resumed, merged and refused as its provenance
says, damaged or nested records named."""

import json

import pytest

from naus import NausError
from naus.plumbing.files import read_lines
from tests.helpers import as_interrupted, headline_corpus, naus_main, run_cli, write


@pytest.mark.parametrize("provenance, message", [
    ({}, "has no 'parameters'"),
    ({"parameters": {}, "total": "2", "shard": [0, 1]}, 'total is "2", expected an int'),
    ({"parameters": {}, "total": 2, "shard": [3, 1]}, "shard is [3, 1], expected [i, n] with 0 <= i < n"),
])
def test_merge_refuses_a_shard_provenance_of_the_wrong_shape(provenance, message, tmp_path, capsys):
    part = write(tmp_path / "part0.jsonl", '{"index": 0, "summary": "a"}\n{"index": 1, "summary": "b"}\n')
    write(tmp_path / "part0.jsonl.provenance.json", json.dumps(provenance))
    code, err = run_cli(["merge", part, "--out", tmp_path / "m.jsonl", "--text", tmp_path / "m.txt"], capsys)
    assert code == 2 and message in err.strip().splitlines()[-1], err
    (tmp_path / "part0.jsonl.provenance.json").unlink()
    code, err = run_cli(["merge", part, "--out", tmp_path / "m.jsonl", "--text", tmp_path / "m.txt"], capsys)
    assert code == 2 and "search the shard again (naus search --restart)" in err


def test_a_search_record_nested_past_ours_is_one_line(tmp_path):
    from naus.teacher.shards import read_records

    path = write(tmp_path / "records.jsonl", '{"index": 0, "summary": "a"}\n' + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(NausError, match=r"records.jsonl: line 2: JSON nested too deeply"):
        read_records(path)


def test_a_search_started_again_with_other_parameters_and_stopped_leaves_the_finished_shard_whole(tmp_path, capsys):
    from naus.teacher.lm import train_lm
    from naus.teacher.shards import ResumableOutput, provenance_path

    lm = tmp_path / "lm.bin"
    train_lm(write(tmp_path / "h.txt", headline_corpus()), lm, order=3)
    source = write(tmp_path / "source.txt", "police arrest five protesters in paris on monday after talks\n" * 4)
    out = tmp_path / "out.jsonl"
    search = ["search", "--input", source, "--lm", lm, "--rerank-k", "0", "--out", out]
    assert naus_main([*search, "--length", "8"], capsys).returncode == 0
    finished = out.read_bytes(), provenance_path(out).read_bytes()
    with ResumableOutput(out, 4, (0, 1), {"other": "parameters"}, restart=True) as started_again:
        started_again.append([{"index": 0, "summary": "police arrest"}])  # stopped here
    assert (out.read_bytes(), provenance_path(out).read_bytes()) == finished
    merged = naus_main(["merge", out, "--out", tmp_path / "m.jsonl", "--text", tmp_path / "m.txt"], capsys)
    assert merged.returncode == 0 and all(len(line.split()) == 8 for line in read_lines(tmp_path / "m.txt"))
    as_interrupted(out, out.read_text().splitlines(keepends=True)[0])
    assert naus_main([*search, "--length", "6", "--restart"], capsys).returncode == 0  # the partial set aside
    assert (tmp_path / "out.jsonl.stale").is_file()
    assert all(len(json.loads(line)["summary"].split()) == 6 for line in read_lines(out))


def test_merge_names_a_missing_field_and_a_record_without_index(tmp_path, capsys):
    from naus.teacher.shards import ResumableOutput

    parts = []
    for shard, record in enumerate([{"index": 0, "summary": "a"}, {"summary": "b"}]):
        output = ResumableOutput(tmp_path / f"part{shard}.jsonl", 2, (shard, 2), {"p": 1})
        output.append([{**record, "index": 1} if shard else record])
        output.finish()
        parts.append(tmp_path / f"part{shard}.jsonl")
    code, err = run_cli(["merge", *parts, "--field", "score", "--out", tmp_path / "m.jsonl",
                         "--text", tmp_path / "m.txt"], capsys)
    assert code == 2 and f"{parts[0]}: line 1: a record needs an integer 'index' and 'score'" in err
    write(parts[1], '{"summary": "b"}\n')
    code, err = run_cli(["merge", *parts, "--out", tmp_path / "m.jsonl", "--text", tmp_path / "m.txt"], capsys)
    assert code == 2 and f"{parts[1]}: line 1: a record needs an integer 'index'" in err
    assert not (tmp_path / "m.jsonl").exists()


def test_a_shard_resumed_after_its_models_were_rebuilt_in_place_refuses(tmp_path, capsys):
    """Provenance records the LM by content: rebuilt at the same path and size, it is another teacher."""
    from naus.plumbing.files import sha256sum
    from naus.teacher.lm import checksum_path, train_lm
    from tests.helpers import headline_corpus

    lm = tmp_path / "lm.bin"
    train_lm(write(tmp_path / "h.txt", headline_corpus()), lm, order=3)
    source = write(tmp_path / "source.txt", "police arrest five protesters in paris on monday\n" * 4)
    command = ["search", "--input", source, "--lm", lm, "--length", "4", "--rerank-k", "0",
               "--out", tmp_path / "out.jsonl"]
    assert naus_main(command, capsys).returncode == 0
    records = (tmp_path / "out.jsonl").read_text().splitlines(keepends=True)
    as_interrupted(tmp_path / "out.jsonl", "".join(records[:2]))
    (tmp_path / "out.jsonl").unlink()
    data = bytearray(lm.read_bytes())
    data[-1] ^= 1  # one byte: same size, other content
    lm.write_bytes(bytes(data))
    write(checksum_path(lm), sha256sum(lm) + "\n")  # as a rebuild records it
    result = naus_main(command, capsys)
    assert result.returncode == 2, result.stderr
    assert "out.jsonl.partial: made with parameters.lm_sha256 = " in result.stderr.strip().splitlines()[-1]
    assert (tmp_path / "out.jsonl.partial").read_text() == "".join(records[:2])


def test_a_damaged_partial_line_is_searched_again(tmp_path):
    from naus.teacher.shards import ResumableOutput, read_records

    with ResumableOutput(tmp_path / "part.jsonl", 4, (0, 1), {"p": 1}) as output:
        output.append({"index": i, "summary": "s"} for i in range(2))
    with open(tmp_path / "part.jsonl.partial", "ab") as handle:
        handle.write(b'{"index": 2, "summary": "\xff\xfe"}\n{"index": 3, "summary": "s"}\n')
    with ResumableOutput(tmp_path / "part.jsonl", 4, (0, 1), {"p": 1}) as output:
        assert list(output.remaining) == [2, 3]
        output.append({"index": i, "summary": "s"} for i in output.remaining)
        output.finish()
    assert [r["index"] for r in read_records(tmp_path / "part.jsonl")] == [0, 1, 2, 3]


@pytest.mark.parametrize("name, code", [("SIGINT", 130), ("SIGTERM", 143)])
def test_a_stopped_search_ends_in_one_line_and_resumes(name, code, tmp_path, env):
    import signal
    import subprocess
    import time

    from naus.teacher.lm import train_lm
    from tests.helpers import ROOT, headline_corpus

    train_lm(write(tmp_path / "h.txt", headline_corpus()), tmp_path / "lm.bin", order=3)
    source = write(tmp_path / "source.txt", "".join(f"police arrest {k} protesters in paris on monday after talks\n"
                                                    for k in range(400)))
    command = ["naus", "search", "--input", source, "--lm", tmp_path / "lm.bin", "--length", "4", "--rerank-k", "0",
               "--batch", "8", "--out", tmp_path / "out.jsonl"]
    # a job started in the background by a shell ignores SIGINT, and its children inherit that: the
    # command gets the default disposition back, as it would from a terminal or a scheduler
    running = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    partial = tmp_path / "out.jsonl.partial"
    while not (partial.is_file() and partial.stat().st_size) and running.poll() is None:
        time.sleep(0.01)
    running.send_signal(getattr(signal, name))
    _, err = running.communicate(timeout=120)
    assert running.returncode == code, err[-2000:]
    assert err.strip().splitlines()[-1].startswith(f"naus: error: stopped by {name}; the records searched so far are kept")
    assert "Traceback" not in err and not (tmp_path / "out.jsonl.lock").exists()
    kept = len(partial.read_text().splitlines())
    assert 0 < kept < 400
    again = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT)
    assert again.returncode == 0 and f"after {kept} finished sentences" in again.stderr
    assert [json.loads(x)["index"] for x in (tmp_path / "out.jsonl").read_text().splitlines()] == list(range(400))
