"""What made a profile's results: the commit and the input files (SHA-256) they came from, the SHA-256 of each stage's
outputs and the settings recorded beside them; and what has changed since (the results are then stale): a setting
the configuration sets otherwise, an input that is not the data manifest's, the code of a later commit.

The search shards record their settings (`*.jsonl.provenance.json`) and each student its model and
training settings (`history.json`): a table made from outputs that another configuration made
(a GPU run finished on old search output, a rule left out with `--allowed-rules`) says so.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from naus import NausError
from naus.pipeline import layout
from naus.pipeline.plan import train_settings
from naus.plumbing.files import read_json, same_digest, sha256sum
from naus.plumbing.outputs import atomic_open, write_text
from naus.plumbing.markup import ESCAPES
from naus.plumbing.provenance import DATA_INPUTS, HISTORY, code_changes, code_state, file_record
from naus.settings import IN_CONTEXT, LEARNED, SearchConfig

# Settings that name no output's content: the machine's data directory, and what only schedules or times work;
# search.preset names other keys, which are compared; search.fit_sentences is compared by content (the learned
# estimate's SHA-256 in each shard's provenance), not by value; model.distilled_states by its students' (their
# checkpoints name the encoder whose states they learned on).
UNRECORDED = {"data": ("data_dir",),
              "search": ("shards", "lengths", "embedder", "preset", "fit_sentences"),
              "train": ("seeds", "analysis_seeds", "fractions", "generations", "device"),
              "model": ("distilled_states",)}


def fingerprints(build: Path, config: dict, released: list[Path] = ()) -> dict:
    """The settings of the configuration, per stage each output's sha256 and recorded settings, and the sha256 of
    every input: the data step's and the `released` outputs the evaluation rescores (the authors' and the peers')."""
    search = {}
    for split, length, path in layout.searches(build):
        text = path.with_suffix(".txt")
        parts = sorted(path.with_suffix("").glob("part*.jsonl.provenance.json"))
        parameters = read_json(parts[0], shape={"parameters": {}})["parameters"] if parts else {}
        recorded = {**parameters["search"], "estimator": LEARNED if parameters.get("estimate") else IN_CONTEXT} \
            if "search" in parameters else {}
        search[f"{split}/L{length}"] = {"sha256": sha256sum(text) if text.is_file() else None,
                                        "records_sha256": sha256sum(path), "settings": recorded}
    students = {}
    for history in sorted(build.glob(f"{layout.student_dir('*')}/history.json")):
        record = read_json(history, shape=HISTORY)
        best = record["best"]["sha256"] if "best" in record else None
        students[history.parent.name] = {"sha256": best, "settings": record.get("settings", {})}
    decodings = {str(path.relative_to(build).with_suffix("")): sha256sum(path)
                 for path in sorted(build.glob("decode/**/*.txt"))}
    inputs = build / layout.DATA_INPUTS
    read = read_json(inputs, shape=DATA_INPUTS)["inputs"] if inputs.is_file() else []
    return {"profile": config.get("profile"), "made_by": code_state(), "searched": _searched(build),
            "inputs": {_input_name(record["path"], config): record["sha256"]
                       for record in [*read, *(file_record(path) for path in released)]},
            "settings": recorded_settings(config),
            "search": search, "students": students, "decodings": decodings}


def _searched(build: Path) -> dict:
    """How many pool articles the searches covered (search.pool_limit's cut, which decides every student's training
    data) and the pool's size; empty before a search."""
    source, stats = build / layout.search_source("pool"), build / layout.DATA_STATS
    if not (source.is_file() and stats.is_file()):
        return {}
    with open(source, "rb") as handle:
        articles = sum(1 for _ in handle)
    return {"articles": articles, "pool_pairs": read_json(stats, shape={"pool_pairs": int})["pool_pairs"]}


def _input_name(path: str, config: dict) -> str:
    """An input file by what names it on any machine: its path under the data directory, as the profile names it
    (`gigaword/pool/article.txt`, `duc2004/input.txt`), else its file name (the demo's wheel)."""
    from naus.data.sources import profile_paths

    for named in sorted(profile_paths(config), key=len, reverse=True):
        at = path.rfind(f"/{named.rstrip('/')}")
        rest = path[at + len(named.rstrip("/")) + 1 :]
        if at >= 0 and (not rest or rest.startswith("/")):
            return named.rstrip("/") + rest
    return Path(path).name


def recorded_settings(config: dict) -> dict:
    """The configuration's settings that name an output's content, per section."""
    return {section: {k: v for k, v in values.items() if k not in UNRECORDED.get(section, ())}
            for section, values in config.items() if isinstance(values, dict)}


def warning(marks: list[str]) -> str:
    """The sentence that opens every caption of stale results (empty when none is)."""
    return f"STALE: made otherwise than the configuration, data and code say now ({'; '.join(marks)}). " if marks \
        else ""


def refresh(results: Path, config: dict) -> list[str]:
    """Results that cannot be made again here (students trained on a borrowed GPU) measured against a changed
    configuration: their recorded fingerprints compared anew, and the STALE sentence of every caption under
    `results` rewritten. Returns the new marks."""
    path = results / layout.FINGERPRINTS
    prints = read_json(path, shape=FINGERPRINTS)
    for name in prints["students"]:
        try:
            layout.parse_model(name)
        except ValueError as err:
            raise NausError(f"{path}: students: {err}") from None
    old = warning(prints.get("stale", []))
    if not old:
        raise NausError(f"{path}: these results were made with their configuration; run the report to redraw them")
    prints["settings"] = recorded_settings(config)
    marks = stale(prints)
    for caption in sorted(p for p in results.rglob("*") if p.suffix in ESCAPES):
        text, escape = caption.read_text(encoding="utf-8"), ESCAPES[caption.suffix]
        if escape(old.rstrip()) in text:  # a caption's opening, or the landing page's bold sentence
            write_text(caption, text.replace(escape(old.rstrip()), escape(warning(marks).rstrip())))
    with atomic_open(path) as handle:
        json.dump({**prints, "stale": marks}, handle, indent=1, sort_keys=True)
    return marks


# fingerprints.json: the commit and input files that made the results, an output's recorded settings, per section
FINGERPRINTS = {"made_by?": {}, "inputs?": {}, "settings": {"*": {}}, "search": {"*": {"settings": {}}},
                "students": {"*": {"settings": {"*": {}}}}, "decodings": {}, "stale?": [str],
                "searched?": {"articles?": int, "pool_pairs?": int}}
NEWER = object()  # a setting the configuration has and an output's record lacks
SEARCH_SETTINGS = {spec.name for spec in dataclasses.fields(SearchConfig)}  # what a search's provenance records


def stale(prints: dict) -> list[str]:
    """Each setting an output was made with that the configuration now sets otherwise, once per key:
    `search.rerank_k: 200 made the results, the configuration says 1600`."""
    configured, found = prints["settings"], {}
    recorded = [("search", output["settings"], configured.get("search", {})) for output in prints["search"].values()]
    recorded += [(section, _configured_part(name, section, values), _section(configured, section, name))
                 for name, output in prints["students"].items() for section, values in output["settings"].items()]
    for section, values, section_wants in recorded:
        if section == "search" and values.get("rerank_k") == 0:  # no re-ranking: nothing the estimator chooses
            values = {**values, "estimator": section_wants.get("estimator")}
        for key, value in values.items():
            want = section_wants.get(key, value)
            if key not in UNRECORDED.get(section, ()) and want != value:
                found.setdefault(f"{section}.{key}", (value, want))
        if section == "search" and values:  # every SearchConfig setting is recorded: one missing is newer than the
            for key, want in configured.get("search", {}).items():  # output (the workflow's own keys are not its)
                if key not in values and key in SEARCH_SETTINGS:
                    found.setdefault(f"search.{key}", (NEWER, want))
    marks = [f"{key}: {_made(made)}, the configuration says {want!r}" for key, (made, want) in sorted(found.items())]
    return marks + _searched_marks(prints) + _input_marks(prints.get("inputs", {})) + \
        _code_marks(prints.get("made_by", {}))


def _searched_marks(prints: dict) -> list[str]:
    """search.pool_limit, which no output's record holds, compared through the count of pool articles searched."""
    searched, limit = prints.get("searched") or {}, prints["settings"].get("search", {}).get("pool_limit")
    if not searched or limit is None:
        return []
    pool = searched["pool_pairs"]
    if (pool if limit == 0 else min(limit, pool)) == searched["articles"]:
        return []
    return [f"search.pool_limit: {searched['articles']} of {pool} pool articles searched made the results, the "
            f"configuration says {limit!r}"]


def _input_marks(inputs: dict[str, str]) -> list[str]:
    """Each input file (by the path it was read from) whose sha256 is not the one the data manifest commits for it."""
    from naus.data.manifest import manifest

    committed = {key: entry["sha256"] for key, entry in manifest()["derived"].items()}
    committed |= {path: entry["sha256"] for source in manifest()["sources"].values()
                  for path, entry in source["files"].items()}
    marks = []
    for path, digest in inputs.items():
        if path in committed and not same_digest(digest, committed[path]):
            marks.append(f"input {path}: sha256 {digest[:12]}… is not the data manifest's {committed[path][:12]}…")
    return marks


def _code_marks(made_by: dict) -> list[str]:
    """The code that made the results changed since (the checkout's commit is another, with other files of `CODE`)."""
    made, now = made_by.get("commit"), code_state()["commit"]
    if not made or not now or made == now or not (changed := code_changes(made)):
        return []
    return [f"code: {made[:7]} made the results, {now[:7]} changed {len(changed)} of its files (e.g. {changed[0]})"]


def _made(value) -> str:
    return "not yet a setting when the results were made" if value is NEWER else f"{value!r} made the results"


def _section(configured: dict, section: str, student: str) -> dict:
    """The configuration's section as this student is made with it (the first generation's training its own)."""
    values = configured.get(section, {})
    if section != "train":
        return values
    return train_settings(values, student, configured.get("analysis", {}).get("lr"))


def _configured_part(student: str, section: str, values: dict) -> dict:
    """A student's recorded settings that the configuration sets: a Table 3 student (`ar-L10`) names its
    own architecture, so config key model.arch is not its."""
    if section == "model" and layout.parse_model(student).arch != "naus":
        return {k: v for k, v in values.items() if k != "arch"}
    return values
