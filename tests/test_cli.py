import subprocess

from tests.conftest import ROOT, write


def run(args, env):
    return subprocess.run(args, capture_output=True, text=True, env=env, cwd=ROOT)


def test_cli_reports_bad_input_on_one_line(tmp_path, env):
    a = write(tmp_path / "a.txt", "x\ny\n")
    t = write(tmp_path / "t.txt", "x\n")
    result = run(
        ["naus", "data", "gigaword", "--pool-article", a, "--pool-title", t,
         "--test-article", a, "--test-title", t, "--out", tmp_path / "out"],
        env,
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("naus: error: line counts differ") and "a.txt has 2" in lines[-1]
    assert not (tmp_path / "out").exists()


def test_cli_rejects_out_of_range_option(tmp_path, env):
    result = run(["naus", "data", "demo", "--out", tmp_path, "--dev-size", "0"], env)
    assert result.returncode == 2 and "--dev-size: must be a positive integer" in result.stderr
