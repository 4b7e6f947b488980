"""Your own corpus (issue 119): two raw text files, sentences and unpaired headlines, through the same Snakefile to
students `Summarizer.from_pretrained` loads, a tiny one end to end (config/own.yaml is its full-size preset)."""

import random

import yaml

from tests.helpers import ROOT, write
from tests.workflow.conftest import snakemake

PLACES = ["Lyon", "Nairobi", "Oslo", "Lima", "Osaka"]
WHO = ["The city council of {}", "Police in {}", "Farmers near {}", "The port authority of {}"]
DID = ["voted on Monday to ban cars from the old centre", "said on Tuesday they arrested five protesters",
       "protested against new water rules", "raised fees by 2.5 percent"]


def test_two_raw_text_files_become_students_a_summarizer_loads(tmp_path, env):
    rng = random.Random(0)
    data = tmp_path / "my text"  # a path with a space
    sentences = [f"{who.format(place)} {did}, officials said." for who in WHO for place in PLACES for did in DID]
    rng.shuffle(sentences)  # 80 distinct sentences
    write(data / "sentences.txt", "".join(s + "\n" for s in sentences))
    write(data / "headlines.txt", "".join(f"{rng.choice(PLACES)} council {rng.choice(['bans', 'raises', 'arrests'])} "
                                          f"{rng.choice(['cars', 'fees', 'protesters'])}\n" for _ in range(60)))
    write(data / "test/sentences.txt", "".join(s + "\n" for s in sentences[:6]))
    write(data / "test/headlines.txt", "Lyon bans cars\nPolice arrest five\nFarmers protest\n" * 2)
    profile = yaml.safe_load((ROOT / "config/own.yaml").read_text())
    profile["data"].update(dev_size=10, test_article="test/sentences.txt", test_title="test/headlines.txt")
    profile.update(lm={"order": 2, "memory": "5%"},
                   search={"lengths": [4], "shards": 1, "rerank_k": 0, "estimator": "in-context", "steps_coef": 0.02,
                           "restarts_coef": 0.02},  # fluency alone: no MiniLM to export for the re-ranking
                   model={**profile["model"], "d_model": 16, "n_heads": 2, "d_ff": 32, "max_len": 64},
                   train={**profile["train"], "max_steps": 6, "warmup": 2, "eval_every": 3, "max_tokens": 256})
    config = write(tmp_path / "own.yaml", yaml.safe_dump(profile))
    code, out = snakemake(tmp_path, config, {**env, "NAUS_DATA": str(data)})
    assert code == 0, out[-3000:]

    from naus import Summarizer
    from naus.student.checkpoint import load_checkpoint
    from naus.student.vocab import SPECIALS

    shipped = tmp_path / "results/own/model/L4.pt"
    assert load_checkpoint(shipped)["vocab"] == list(SPECIALS)  # no word list of the user's text
    summary = Summarizer.from_pretrained(shipped).summarize([sentences[0]], length=4)[0].summary
    assert len(summary.split()) == 4 and all(w.lower() in sentences[0].lower() for w in summary.split()), summary
    readme = (tmp_path / "results/own/model/README.md").read_text()
    assert "70 unlabelled sentences" in readme and "10 held out" in readme and "| `L4.pt` | 4 | naus-copy |" in readme
    assert "test R-1 / R-2 / R-L (ours)" in readme
    lm = (tmp_path / "build/own/data/lm.txt").read_text().splitlines()
    assert len(lm) == 60 and all(" council " in line for line in lm)  # the headlines alone, normalised
