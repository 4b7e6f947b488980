import json
import os
import re
import shlex
import sys
import threading
from pathlib import Path

import yaml

from snakemake_interface_executor_plugins.settings import DeploymentMethod
from snakemake.utils import min_version

min_version("9.0")

sys.path.insert(0, workflow.basedir)  # naus.architectures, naus.pipeline.tables: plain Python, each list once
from naus import NausError
from naus.pipeline import layout, plan, schema, tables
from naus.pipeline.declarations import PROTOCOLS
from naus.architectures import ARCHITECTURES, TABLE4_ARCHS
from naus.data.peers import PEERS
from naus.settings import LEARNED, ONNX_INT8, SearchConfig, options


def fail(message: str) -> None:
    """Stop before any job with one line, as `naus` does (a WorkflowError would add Snakemake's traceback)."""
    print(f"naus: error: {message}", file=sys.stderr)
    sys.exit(2)


if not config:  # no --configfile: the demo profile

    configfile: "config/demo.yaml"


localrules:
    all,
    stage_data,
    stage_lm,
    stage_search,
    stage_states,
    stage_train,
    stage_decode,
    stage_evaluate,


# The schema: the workflow's own keys from its file, each setting's from naus.settings (naus.pipeline.schema); a
# profile lists only what differs, the defaults and its named teacher's keys are filled in here.
try:
    for path in workflow.config_settings.configfiles:  # loaded already, their repeated keys merged: checked here
        schema.check_unique_keys(Path(path).read_text(), str(path))
    schema.resolve(config, yaml.safe_load(Path(workflow.source_path("../schemas/config.schema.yaml")).read_text()))
except NausError as err:
    fail(str(err))

# Every rule calls `python -m naus`, importable from this checkout inside any environment (venv or conda).
# Without --use-conda, `python` (and KenLM's lmplz beside it) is the one running Snakemake, so
# `.venv/bin/snakemake` works without activating the venv.
USES_CONDA = DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method
RUNNING_PYTHON = "" if USES_CONDA else f"export PATH={shlex.quote(os.path.dirname(sys.executable))}:$PATH; "
shell.prefix(
    f"set -euo pipefail; {RUNNING_PYTHON}export PYTHONPATH={shlex.quote(workflow.basedir)}${{{{PYTHONPATH:+:$PYTHONPATH}}}}; "
)


def cancel_reevaluation_timers() -> None:
    """Snakemake's rate limiter leaves its re-evaluation timers armed after the last job (for the default profile's
    max-jobs-per-timespan span); they are not daemon threads, so Python would wait them out at exit."""
    for thread in threading.enumerate():
        if isinstance(thread, threading.Timer):
            thread.cancel()


onsuccess:
    cancel_reevaluation_timers()


onerror:
    cancel_reevaluation_timers()


try:  # the schema's pattern too, checked again where the paths are built
    PROFILE = layout.check_profile(config["profile"])
except NausError as err:
    fail(f"config key profile: {err}")
# A profile's results are its configuration file's: `--config profile=...` would plan one profile's runs into
# another's build and results folders.
FILED_PROFILES = [
    (path, named)
    for path in workflow.config_settings.configfiles
    if (named := (yaml.safe_load(Path(path).read_text()) or {}).get("profile")) is not None
]
if FILED_PROFILES and FILED_PROFILES[-1][1] != PROFILE:
    fail(
        f"config key profile: {PROFILE!r} is not {FILED_PROFILES[-1][1]!r}, the profile of "
        f"{FILED_PROFILES[-1][0]}: give that profile's own configuration file (--configfile config/{PROFILE}.yaml)"
    )
BUILD, RESULTS, LOGS = (
    layout.profile_dir("build", PROFILE),
    layout.profile_dir("results", PROFILE),
    layout.profile_dir("logs", PROFILE),
)


def data_dir() -> Path:
    """The external data directory: config key data.data_dir, else the environment variable NAUS_DATA."""
    value = config["data"].get("data_dir") or os.environ.get("NAUS_DATA")
    if not value:
        fail(
            f"profile {PROFILE}: set config key data.data_dir or the environment variable NAUS_DATA "
            "to the directory holding gigaword/ and duc2004/"
        )
    return Path(value)


def check_data_dir() -> None:
    """The data directory is one, before the DAG: otherwise Snakemake's MissingInputException, many lines long,
    names a rule's first input and not the setting."""
    if not data_dir().is_dir():
        where = "config key data.data_dir" if config["data"].get("data_dir") else "NAUS_DATA"
        fail(
            f"{data_dir()}: {where} names {'no directory' if data_dir().exists() else 'nothing that exists'}; it "
            "must be the directory holding gigaword/ and duc2004/"
        )


# Checked now, not first inside a job's input function (where Snakemake would wrap the message in its traceback);
# not for `--lint`, which reads the rules and no data (Snakemake skips its own environment checks then).
if config["data"]["source"] != "demo" and (
    not config["data"].get("download")
    or any(config["data"].get(key) for key in ("duc_dir", "published_dir", "peers", "extra_headlines"))
):
    data_dir()
    if workflow.check_envvars:
        check_data_dir()


ANALYSIS_LENGTHS = config.get("analysis", {}).get("lengths", [])
ANALYSIS_ARCHS = config.get("analysis", {}).get("archs", list(TABLE4_ARCHS))
DUC_LENGTH = config.get("duc", {}).get("length")


wildcard_constraints:
    model=layout.MODEL_PATTERN,


def flags(settings: dict) -> str:
    """A config section as `naus` options: `rerank_k: 200` becomes `--rerank-k 200`; each value quoted for the
    shell, so a configured `$(...)` reaches `naus` as text (a plain value's command is unchanged)."""
    return " ".join(f"--{key.replace('_', '-')} {shlex.quote(str(value))}" for key, value in settings.items())


SEEDS, ANALYSIS_SEEDS = config["train"]["seeds"], config["train"]["analysis_seeds"]
# Job priorities: the chain that ends in the students (the estimates; the pool's and dev's searches, states and, for a
# later generation, labels; the students) runs before what only the tables read (the test set's and DUC's searches
# and decodings), so that training starts early and both cores stay busy to the end.
STUDENT_CHAIN = 1
# Above it, the small jobs that rewrite or score a file (a second or so each): run as soon as they can. Waiting, they
# pile up by the hundred behind the students, and Snakemake re-reads every waiting job's inputs and params each time
# it picks jobs (once a job finishes): its own process then took a third of the two cores from the jobs.
BOOKKEEPING = STUDENT_CHAIN + 1


def chain_priority(split: str) -> int:
    return STUDENT_CHAIN if split in ("pool", "dev") else 0


# The students by what they need (naus.architectures: `gpu`): a cluster sends those that train their whole encoder to
# its GPU partition, those on frozen states to a CPU core.
OWN_GPU = ARCHITECTURES[config["model"]["arch"]].gpu
GPU_TABLE4, CPU_TABLE4 = ([a for a in TABLE4_ARCHS if ARCHITECTURES[a].gpu is gpu] for gpu in (True, False))
GPU_STUDENTS, CPU_STUDENTS = layout.students_of(GPU_TABLE4, OWN_GPU), layout.students_of(CPU_TABLE4, not OWN_GPU)
GPU_TRAINED, CPU_TRAINED = (
    layout.students_of(GPU_TABLE4, OWN_GPU, ensembles=False),
    layout.students_of(CPU_TABLE4, not OWN_GPU, ensembles=False),
)


def frozen_states(model: str, split: str) -> list[str]:
    """The frozen MiniLM states of `split` that student `model` reads (none unless it learns on them)."""
    return [f"{BUILD}/{layout.frozen_states(split)}"] if PLAN.student(model).frozen else []


# The encoder file the frozen states come from, where the profile asks for one: the distilled MiniLM
# (model.distilled_states) or the word vectors learned without sentence pairs (model.word_vector_states).
if config["model"]["distilled_states"] and config["model"]["word_vector_states"]:
    fail(
        "config keys model.distilled_states and model.word_vector_states: the states come from one encoder; "
        "set one of them"
    )
STATES_ENCODER = (
    [f"{BUILD}/{layout.DISTILLED_ENCODER}"]
    if config["model"]["distilled_states"]
    else [f"{BUILD}/{layout.WORD_VECTORS}"] if config["model"]["word_vector_states"] else []
)


def encoder_flag(input) -> str:
    """`--encoder FILE` for a job that computes frozen states, where they are an encoder file's."""
    return f"--encoder {input.encoder}" if input.encoder else ""


def library_decoding() -> str:
    """The decoders' library defaults that no profile sets (`schema.COMMAND_LINE_ONLY`: the source-order decoder's
    phrases, last word and adjacency) as `naus` options, given to every decoding rule: a changed default changes their
    params, and Snakemake decodes again as it would for a changed config key."""
    from naus.settings import DecodeConfig

    names = sorted(schema.COMMAND_LINE_ONLY["decode"] - {"min_length"})
    return " ".join(f"--{name.replace('_', '-')} {shlex.quote(str(getattr(DecodeConfig, name)))}" for name in names)


# What each table and figure shows, declared once (naus.pipeline.tables): the outputs to build, and what the report
# reads; and the jobs that make them (naus.pipeline.plan), which the rules look up by the paths Snakemake asks for.
try:
    PLAN = plan.plan(config)
except NausError as err:
    fail(str(err))
SPEC = PLAN.spec


def systems() -> list[str]:
    """Every evaluated test-set output, as a path under build/{profile}/ without `.txt`."""
    return SPEC.stems("test")


def students() -> list[str]:
    """Every student a table or figure decodes with (Table 1's per length and seed, Figure 3's, Table 3's, ...)."""
    return SPEC.students()


def trained_students() -> list[str]:
    """The students `naus train` makes (each has a history and a training time); an ensemble is made of them."""
    return [model for model in students() if not PLAN.student(model).ensemble]


def duc_systems() -> list[str]:
    """Table 2's outputs on DUC2004, as paths under build/{profile}/ without `.txt`."""
    return SPEC.stems("duc")


def metric_files() -> list[str]:
    """The metrics every table and figure needs."""
    return [f"{RESULTS}/{layout.metrics_file(s)}" for s in systems()] + [
        f"{RESULTS}/{layout.metrics_file(s, PROTOCOLS['duc'].folder)}" for s in duc_systems()
    ]


def earlier_run_files() -> list[str]:
    """The files of earlier runs whose rows the tables show (report.other_protocol, report.pair_free): each one's
    record (provenance.json, or the pipeline's fingerprints.json), the metrics of those rows and, where it has it,
    its own table (its students' p against its own teacher)."""
    files = []
    for table in SPEC.tables:
        for group in (g for g in table.groups if g.other):
            folder = group.other.folder
            own = f"{folder}/{layout.table_file(f'{table.name}-full', 'csv')}"
            files += [group.other.record]
            files += [own] if os.path.exists(own) else []
            files += [
                f"{folder}/{layout.metrics_file(s, table.protocol.folder)}" for row in group.rows for s in row.stems
            ]
    return list(dict.fromkeys(files))


def timed_teachers() -> list[tuple[str, int]]:
    """(split, length) of each search whose time a table shows: searched again in the time job, beside the students
    (on the sentences they are timed on at batch 1: none where decode.batch1_samples is 0)."""
    if not config["decode"].get("batch1_samples"):
        return []
    return list(
        dict.fromkeys(
            (row.jobs[0].split, row.jobs[0].length)
            for table in SPEC.tables
            for group in table.groups
            if not group.other
            for row in group.rows
            if row.timed and not row.method
        )
    )


def teacher_timings(wildcards, input) -> str:
    """Each shown search again on the first decode.batch1_samples sentences, one thread, as `search_shard` runs it
    (its records kept: the report checks they are the search's own)."""
    runs = []
    for split, length in timed_teachers():
        stem = f"{BUILD}/{layout.teacher_time(split, length)}"
        models = reranking_flags(input.onnx, ESTIMATE and ESTIMATE.format(length=length))
        static = f"--static {input.static}" if input.static else ""
        runs.append(
            f"python -m naus --threads 1 search --input {BUILD}/{layout.search_source(split)} --lm {input.lm} "
            f"--length {length} --limit {config['decode']['batch1_samples']} {flags(SEARCH_PARAMS)} {static} "
            f"{models} --restart --out {stem}.jsonl --timing {stem}.json >> {TIME_LOG} 2>&1"
        )
    return "".join(f" && {run}" for run in runs)


def timing_files() -> list[str]:
    """The times the report shows: the timed decodings' and searches', each student's training, each search shard's."""
    searched = [(split, n) for split in ("pool", "dev", "test") for n in config["search"]["lengths"]]
    searched += [(split, DUC_LENGTH) for split in ("pool", "dev", "duc")] if DUC_LENGTH else []
    return (
        [f"{BUILD}/{s}.timing.json" for s in SPEC.timed()]
        + [f"{BUILD}/{layout.teacher_time(*t)}.{suffix}" for t in timed_teachers() for suffix in ("json", "jsonl")]
        + [f"{BUILD}/{layout.train_timing(model)}" for model in trained_students()]
        + [
            f"{BUILD}/{layout.search_timing(split, n, i)}"
            for split, n in dict.fromkeys(searched)
            for i in range(config["search"]["shards"])
        ]
    )


def bundle_of(stem: str) -> str:
    """The `decode_student` file a planned decoding is written out of."""
    decoding = PLAN.decodings[stem]
    return f"{BUILD}/{layout.decoded_bundle(decoding.split, decoding.model)}"


def decoding_args(decoding: layout.Decoded) -> str:
    """A decoding as `naus decode-all --decoding` and `naus time --decoding` begin it: STEM METHOD TARGET BEAM."""
    return f"{decoding.stem} {decoding.method} {decoding.target} {decoding.beam or config['decode']['beam_size']}"


def timed_decodings(stems: list[str]) -> list[dict]:
    """Each timed decoding with what `naus time --decoding` gives it after its settings: its student, its source, the
    file its time is written to and, for a student on frozen states, their file."""
    timed = []
    for stem in stems:
        decoding = PLAN.decodings[stem]
        timed.append(
            {
                "decoding": decoding,
                "checkpoint": f"{BUILD}/{layout.student_checkpoint(decoding.model)}",
                "source": f"{BUILD}/{layout.DECODE_SOURCES[decoding.split]}",
                "out": f"{BUILD}/{stem}.timing.json",
                "states": frozen_states(decoding.model, decoding.split),
            }
        )
    return timed


def timed_inputs(timed: list[dict]) -> dict[str, list[str]]:
    """The students, sources and states of the timed decodings."""
    return {
        "checkpoints": sorted({decoding["checkpoint"] for decoding in timed}),
        "sources": sorted({decoding["source"] for decoding in timed}),
        "states": sorted({path for decoding in timed for path in decoding["states"]}),
    }


def all_targets() -> list[str]:
    if SPEC.shipped:  # a profile of one's own text: its students, and their scores where it has a test set
        return [f"{BUILD}/{layout.DATA_STATS}", f"{RESULTS}/{layout.SHIPPED}/{layout.README}"] + metric_files()
    return [
        f"{BUILD}/{layout.DATA_STATS}",
        f"{RESULTS}/{layout.README}",
        f"{RESULTS}/{layout.HEADLINE}",
    ] + metric_files()


DOWNLOAD = config["data"].get("download")
GIGAWORD_KEYS = ("pool_article", "pool_title", "test_article", "test_title")


def check_fetched() -> None:
    """The data directory holds every file of the profile that `naus data fetch` derives, before the DAG. The user's
    data is never a rule's output (Snakemake deletes a job's outputs before it runs, and all of them under `-F` or
    `--delete-all-output`): a missing file stops the workflow in one line naming it and the command that derives it;
    DUC2004, which the user brings, is named with the tables that wait for it."""
    from naus.data.sources import missing_files, profile_paths

    if config["data"]["source"] == "demo" or not profile_paths(config):  # a download alone reads no data directory
        return
    try:
        missing = missing_files(config, data_dir())  # a download's Gigaword files are its own (naus.data.sources)
    except NausError:  # a profile whose files no recipe makes: its own inputs say what is missing
        return
    if not missing:
        return
    filed = Path(workflow.config_settings.configfiles[0])
    named = Path(workflow.basedir) / "config" / f"{PROFILE}.yaml"  # `naus data fetch` takes a profile by its name
    profile = PROFILE if named.exists() and filed.resolve() == named.resolve() else str(filed)
    fetch = f"naus data fetch {shlex.quote(profile)} --to {shlex.quote(str(data_dir()))}"
    duc = [path for path in missing if path.startswith(f"{config['data'].get('duc_dir')}/")]
    if duc and len(duc) == len(missing):
        waiting = ", ".join(SPEC.tables_on("duc")) or "none"
        fail(
            f"{data_dir() / duc[0]}: missing, and {len(duc) - 1} more DUC2004 files; DUC2004 is NIST's "
            f"(https://duc.nist.gov/data.html): the tables that wait for it ({waiting}) need its five files, which "
            f"`{fetch} --duc DIR` checks and copies"
        )
    fail(
        f"{data_dir() / missing[0]}: missing, and {len(missing) - 1} more of the profile's files: `{fetch}` derives "
        "them from their public sources"
    )


if workflow.check_envvars:  # not for `--lint`, which reads no data
    check_fetched()


def released_files() -> list[str]:
    """The released outputs (the authors' and the peers') the evaluation rescores, under the data directory: the
    report stamps their sha256 among its inputs."""
    from naus.data.sources import recipes_for

    named = [p for p in [config["data"].get("published_dir"), *(config["data"].get("peers") or {}).values()] if p]
    try:
        return [str(data_dir() / o) for recipe in recipes_for(named) for o in recipe.outputs] if named else []
    except NausError:  # released outputs of a profile's own, which no recipe makes: each rule's input names them
        return []


def unpacked_into(first_file: str) -> str:
    """The folder the download unpacks into, from the path of the first Gigaword file unpacked there."""
    return first_file[: -len(config["data"][GIGAWORD_KEYS[0]]) - 1]


def external(key: str) -> str:
    """A Gigaword file: inside the unpacked download when one is configured, else under the data directory."""
    if DOWNLOAD and key in GIGAWORD_KEYS:
        return f"{BUILD}/{layout.DOWNLOAD_DIR}/{config['data'][key]}"
    return str(data_dir() / config["data"][key])


def peer_subset_index(system: str) -> list[str]:
    """For a peer's output released on part of its collection (naus.data.peers), the index file giving each
    line's line of the collection (it is scored on those lines); none for every other output."""
    for name, directory in (config["data"].get("peers") or {}).items():
        for collection, length in PEERS[name].subset:
            if system == layout.peer(name, collection, length):
                return [str(data_dir() / directory / PEERS[name].index[(collection, length)])]
    return []


# The authors' released outputs, per collection: (directory, file mapping their lines to input lines).
PUBLISHED = {"": ("gigaword", "line_to_test_index.txt"), "duc/": ("duc2004", "summary_index.txt")}


def published_file(w, which: int) -> str:
    """For a `published/{label}` target: the released output (`which` = 0) or its index file (1)."""
    collection, label = ("duc/", w.label[4:]) if w.label.startswith("duc/") else ("", w.label)
    directory, index = PUBLISHED[collection]
    return str(data_dir() / config["data"]["published_dir"] / directory / (f"{label}.txt", index)[which])


def config_json() -> str:
    """The resolved configuration as one JSON argument (`naus report --config`). Snakemake's HTML report shows every
    rule's parameters inside a <script>: `<`, `>` and `&` written as JSON escapes, so that a note's text (or any
    value's) can never close that script or open another."""
    text = json.dumps(config, sort_keys=True)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def reranking_models(wildcards, input) -> str:
    """`reranking_flags` of a search job's inputs."""
    return reranking_flags(input.onnx, input.estimate)


def reranking_flags(onnx, estimate) -> str:
    """What the re-ranking reads: the ONNX MiniLM (--onnx) and the learned estimate (--estimate), else the
    estimator's name; one shell parameter, since an estimate replaces the estimator flag."""
    models = [f"--onnx {onnx}"] if onnx else []
    if estimate:
        return " ".join([*models, f"--estimate {estimate}"])
    return " ".join(
        [*models, f"--estimator {config['search']['estimator']}"] if config["search"]["rerank_k"] else models
    )


# `naus train` options: the model section and the training section. The seeds, the fractions and the generations
# are the workflow's (each student's name carries them); the architecture is each student's (`model.arch` for the
# profile's own, `ar-L10` names its own).
WORKFLOW_TRAIN_KEYS = ("fractions", "seeds", "analysis_seeds", "generations", "first_generation")
WORKFLOW_MODEL_KEYS = ("arch", "distilled_states", "word_vector_states")


def train_flags(name: str) -> str:
    """A student's `naus train` options: the first generation's own settings over the rest's (`naus.pipeline.plan.train_settings`)."""
    section = PLAN.student(name).settings
    return flags(
        {
            **{k: v for k, v in config["model"].items() if k not in WORKFLOW_MODEL_KEYS},
            **{k: v for k, v in section.items() if k not in WORKFLOW_TRAIN_KEYS},
        }
    )
