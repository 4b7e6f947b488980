"""Every name the pipeline gives a student or a file, built and parsed here only.

A student's name says what it is: `L10` (the profile's student for 10 words: NAUS, or the
architecture of config key `model.arch`), `L10-f0.25` (trained on the first
quarter of the pool, Figure 3), `ar-L10` (a Table 3 encoder-decoder), `L10-s3` (seed 3; seed 0
has no suffix), `L10-ens` (the profile's seeds of `L10` as one model, `naus ensemble`), `L10-g2` (the second
generation: it learns from the length-control summaries of `L10-ens`, not from the search's). Paths are relative to
`build/{profile}/` (outputs) or `results/{profile}/metrics/` (their scores, the same stems with
`.json`). Every function takes strings as well as numbers, so the rules pass their wildcards
(`"{length}"`) and get Snakemake's patterns from the same definitions. Plain Python: the rules,
the report, the command line and the tests import it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from naus import NausError
from naus.architectures import TABLE4_ARCHS
from naus.methods import LENGTH_CONTROL, METHODS
from naus.student.folder import BEST, HISTORY, LAST, STALE_LAST, STUDENT_NAMES, VOCAB  # noqa: F401 (the pipeline's names)

Part = int | float | str

ENSEMBLE = "ens"  # a student's name ending `-ens`: the profile's seeds of that student as one model
_STUDENT = rf"(({'|'.join(TABLE4_ARCHS)})-)?L\d+(-f0\.\d+)?(-g\d+)?"
TRAINED_PATTERN = rf"{_STUDENT}(-s\d+)?"  # the students `naus train` makes
ENSEMBLE_PATTERN = rf"{_STUDENT}-{ENSEMBLE}"  # those `naus ensemble` makes
MODEL_PATTERN = f"{TRAINED_PATTERN}|{ENSEMBLE_PATTERN}"


def students_of(archs, own: bool, ensembles: bool = True) -> str:
    """A pattern of the students of Table 3's architectures `archs` (each names its own: `nar-ctc-copy-L10`) and,
    with `own`, of the profile's own (`L10-s3`, whose architecture is config key model.arch): the rules that train
    and decode them ask for what those architectures need. Ensembles (`L10-ens`) too unless `ensembles` is False."""
    prefixes = ([f"({'|'.join(map(re.escape, archs))})-"] if archs else []) + ([""] if own else [])
    ending = r"(-s\d+|-" + ENSEMBLE + ")?" if ensembles else r"(-s\d+)?"
    return "|".join(rf"{prefix}L\d+(-f0\.\d+)?(-g\d+)?{ending}" for prefix in prefixes) or "(?!)"
METHOD_PATTERN = "|".join(METHODS)
TARGET_PATTERN = r"\d+|r0\.\d+|c\d+"  # words, a ratio of the source, characters (`target_option`)
# A profile names build/{profile} and results/{profile}: one path component, never `.`, `..` or hidden.
PROFILE_PATTERN = r"[A-Za-z0-9_-][A-Za-z0-9_.-]*"
# What the data step writes under build/{profile}/: each split's articles and titles (pool, dev, test and
# the second dev split select), DUC2004's input and references, the LM's headlines, the corpus statistics.
# `naus data --out` writes the names below `DATA`; the rules and the report read them under build/{profile}/.
DATA, STATS, HEADLINES, INPUTS = "data", "stats.json", "lm.txt", "inputs.json"  # inputs: the files read, sha256 each
DATA_STATS, LM_CORPUS, DATA_INPUTS = f"{DATA}/{STATS}", f"{DATA}/{HEADLINES}", f"{DATA}/{INPUTS}"
SPLITS, SELECT, DUC = ("pool", "dev", "test"), "select", "duc2004"  # select: only when asked for (data.select_size)
CORPUS_NAMES = (*SPLITS, SELECT, DUC, HEADLINES, STATS, INPUTS)  # a corpus folder's set: replaced as a whole


def split_file(split: str, side: str, folder: str = DATA) -> str:
    """A split's `article` or `title` side (`folder=""`: within the data folder, as `naus data` writes it)."""
    return f"{folder + '/' if folder else ''}{split}/{side}.txt"


def duc_file(name: str, folder: str = DATA) -> str:
    """DUC2004's `input` (digits kept) or a reference `ref0` … `ref3`."""
    return split_file(DUC, name, folder)


def search_source(split: str) -> str:
    """The sentences a split's search covers (the pool's first `pool_limit`; DUC2004's with digits as #)."""
    return f"search/{split}/source.txt"


# A configured download of the Gigaword files (data.download): the archive, and the folder it unpacks into.
DOWNLOAD_ARCHIVE, DOWNLOAD_DIR = "download/gigaword.archive", "download/gigaword"
# The teacher's models: the KenLM binary, MiniLM as int8 ONNX, the static word vectors (γ > 0).
LM_MODEL, MINILM_ONNX, STATIC_VECTORS = "lm/lm.bin", "similarity/minilm-int8.onnx", "similarity/static.npz"
# Word vectors learned from the profile's unlabelled text alone (`naus word-vectors`): the static table of
# search.static_vectors: word-vectors, the frozen states of model.word_vector_states.
WORD_VECTORS = "similarity/word-vectors.npz"


def estimate(length: Part) -> str:
    """The learned estimate of a length (`naus fit-estimate`)."""
    return f"similarity/estimate-L{length}.npz"


# The sentences each split decodes: the Gigaword test set, DUC2004 with digits masked as in training, or the
# dev split (a training recipe is chosen by its dev ROUGE).
DECODE_SOURCES = {"test": split_file("test", "article"), "duc": search_source("duc"),
                  "dev": split_file("dev", "article"), "pool": search_source("pool")}
# What a collection's outputs are scored against, and the folder of build/ and of results/{profile}/metrics/
# its scored outputs and their metrics sit in (DUC2004's: digits restored).
REFERENCES = {"test": (split_file("test", "title"),), "duc": tuple(duc_file(f"ref{i}") for i in range(4))}
SCORED = {"test": "", "duc": "duc2004"}
# The sentences whose frozen MiniLM states a split's students read (`naus encode-states`): what they train on
# (the pool's searched sentences, dev's) and what they decode.
STATES_SOURCES = {"pool": search_source("pool"), "dev": search_source("dev"), "test": DECODE_SOURCES["test"],
                  "duc": DECODE_SOURCES["duc"]}


# The smaller MiniLM the students' states come from where model.distilled_states is set (`naus distil`).
DISTILLED_ENCODER = "states/encoder.safetensors"


def frozen_states(split: str) -> str:
    """A split's frozen MiniLM states, line for line with `STATES_SOURCES[split]`."""
    return f"states/{split}.npz"


def check_profile(name: object) -> str:
    """A profile's name, refused unless it is one safe path component (`..` would write outside build/)."""
    if not isinstance(name, str) or not re.fullmatch(PROFILE_PATTERN, name):
        raise NausError(f"profile {name!r}: a profile's name is one path component of letters, digits, '_', '-' "
                        "and '.' that does not start with '.' (it names build/{profile} and results/{profile})")
    return name


@dataclass(frozen=True)
class StudentName:
    arch: str  # a key of naus.architectures.ARCHITECTURES
    length: int  # the search output's length it learns from
    fraction: float  # of the pool's pairs it trains on
    seed: int = 0  # of its initialisation, dropout and batch order
    generation: int = 1  # 1: it learns from the search; n: from the length-control summaries of generation n - 1
    ensemble: bool = False  # the profile's seeds as one model (then `seed` is 0)


def model(length: Part, arch: str = "naus", fraction: Part | None = None, seed: Part = 0,
          generation: Part = 1) -> str:
    """A student's name (its directory under train/): the length it learns, its architecture, its share of the
    pool, its generation (the first unnamed), its seed (seed 0 unnamed, so a one-seed profile keeps its names;
    `ENSEMBLE`: every seed as one model)."""
    name = f"L{length}" if arch == "naus" else f"{arch}-L{length}"
    name = name if fraction in (None, 1, 1.0) else f"{name}-f{fraction}"
    name = name if str(generation) == "1" else f"{name}-g{generation}"
    return name if str(seed) == "0" else f"{name}-{ENSEMBLE}" if seed == ENSEMBLE else f"{name}-s{seed}"


def parse_model(name: str) -> StudentName:
    match = re.fullmatch(rf"(?:(?P<arch>{'|'.join(TABLE4_ARCHS)})-)?L(?P<length>\d+)(?:-f(?P<fraction>0\.\d+))?"
                         rf"(?:-g(?P<generation>[2-9]|[1-9]\d+))?(?:-s(?P<seed>\d+)|-(?P<ensemble>{ENSEMBLE}))?", name)
    if match is None:
        raise ValueError(f"{name!r} is not a student's name (L10, L10-f0.25, ar-L10, L10-s3, L10-ens, L10-g2, ...)")
    return StudentName(match["arch"] or "naus", int(match["length"]), float(match["fraction"] or 1.0),
                       int(match["seed"] or 0), int(match["generation"] or 1), bool(match["ensemble"]))


def chars_target(budget: Part) -> str:
    """A budget in characters as a decoding target (`c75`: char-control within 75 characters)."""
    return f"c{budget}"


def parse_target(target: str) -> tuple[int | None, float | None]:
    """A word target as the config and the file names write it: `10` words, or `r0.5` of the source."""
    return (None, float(target[1:])) if target.startswith("r") else (int(target), None)


def target_settings(target: str) -> dict[str, int | float]:
    """A target as `Summarizer.summarize` takes it: `10` → length 10, `r0.5` → ratio 0.5, `c75` → chars 75."""
    if target.startswith("c"):
        return {"chars": int(target[1:])}
    length, ratio = parse_target(target)
    return {"ratio": ratio} if ratio else {"length": length}


def target_option(target: str) -> str:
    """The `naus decode` option of a target: `10` → --length 10, `r0.5` → --ratio 0.5, `c75` → --chars 75."""
    return " ".join(f"--{key} {value}" for key, value in target_settings(target).items())


def target_label(target: str) -> str:
    """How a table names a target: `10`, `50%` or `75 chars`."""
    if target.startswith("c"):
        return f"{int(target[1:])} chars"
    length, ratio = parse_target(target)
    return f"{int(ratio * 100)}%" if ratio else str(length)


def search(split: str, length: Part) -> str:
    """A split's merged search output (`.jsonl` records, `.txt` summaries)."""
    return f"search/{split}/L{length}"


@dataclass(frozen=True)
class Searched:
    """A split's merged search output for a length, by what its path (`search`) is made of: a table's teacher row."""

    split: str
    length: int

    @property
    def stem(self) -> str:
        return search(self.split, self.length)


def parse_search(stem: str) -> tuple[str, int]:
    """(split, length) of a `search` path."""
    match = re.fullmatch(pattern(search("{split}", "{length}"), split="[^/]+", length=r"\d+"), stem)
    if match is None:
        raise ValueError(f"{stem!r} is not a search output's name (search/test/L10, ...)")
    return match["split"], int(match["length"])


def searches(build: Path) -> list[tuple[str, int, Path]]:
    """Every merged search output under `build` as (split, length, path), by split then length."""
    found = []
    for path in build.glob(f"{search('*', '*')}.jsonl"):
        try:
            found.append((*parse_search(path.relative_to(build).with_suffix("").as_posix()), path))
        except ValueError:
            continue
    return sorted(found, key=lambda item: item[:2])


def train_inputs(length: Part, frozen: bool = False, teacher: str | None = None) -> dict[str, str]:
    """What a student for `length` learns from, by its `naus train` option: the pool's search output, and the dev
    split's for model selection (a later generation: model `teacher`'s length-control summaries of both, so no
    title ever chooses its checkpoint), and, `frozen`, their sources' frozen MiniLM states."""
    states = {"train_states": frozen_states("pool"), "dev_states": frozen_states("dev")} if frozen else {}
    targets = {split: f"{decoded(split, teacher, LENGTH_CONTROL.name, length)}.txt" if teacher
               else f"{search(split, length)}.txt" for split in ("pool", "dev")}
    return {"train_source": search_source("pool"), "train_target": targets["pool"],
            "dev_source": search_source("dev"), "dev_target": targets["dev"], **states}


def search_part(split: str, length: Part, shard: Part) -> str:
    """One shard's search records (`.jsonl`)."""
    return f"{search(split, length)}/part{shard}"


def search_timing(split: str, length: Part, shard: Part) -> str:
    return f"timing/{search_part(split, length, shard)}.json"


def teacher_time(split: str, length: Part) -> str:
    """The teacher timed beside the students in the time job (one thread, the machine to itself): its seconds
    (`.json`) and its records (`.jsonl`: the search's own first ones, else another teacher was timed), no suffix."""
    return f"timing/teacher/{split}-L{length}"


def search_timings(split: str, length: Part) -> str:
    """A glob of every shard's timing file of one search."""
    return search_timing(split, length, "*")


# The folders of build/{profile}/ a GPU run makes (scripts.lease.archive replaces them): students, their training
# times, decodings.
STUDENTS, TRAIN_TIMINGS, DECODINGS = "train", "timing/train", "decode"


def student_dir(name: str) -> str:
    return f"{STUDENTS}/{name}"


# What a training run writes into its folder (`naus train --out`): the weights of the best dev loss, the last
# checkpoint it resumes from, the history (written last: the run finished), the vocabulary as text.


def student_checkpoint(name: str) -> str:
    """The student's weights the pipeline decodes with (its best dev loss)."""
    return f"{student_dir(name)}/{BEST}"


def train_timing(name: str) -> str:
    return f"{TRAIN_TIMINGS}/{name}.json"


def decoded(split: str, name: str, method: str, target: Part, beam: Part | None = None) -> str:
    """A student's summaries of a split (`.txt`, timing in `.timing.json`); with `beam`, one point of
    the beam-size sweep (Figure 4)."""
    if beam is None:
        return f"{DECODINGS}/{split}/{name}/{method}-{target}"
    return f"{DECODINGS}/{split}/{name}/beams/{method}-{target}-b{beam}"


@dataclass(frozen=True)
class Decoded:
    """A student's decoding of a split, by what its path (`decoded`) is made of: the tables declare their decodings
    as these, and the workflow's decoding jobs are looked up by their stems."""

    split: str  # a key of DECODE_SOURCES
    model: str  # the student's name (`model`)
    method: str  # a decoding method (naus.methods)
    target: str  # `10` words, `r0.5` of the source, `c75` characters (TARGET_PATTERN)
    beam: int | None = None  # a point of the beam-size sweep; None: the profile's beam (decode.beam_size)

    @property
    def stem(self) -> str:
        return decoded(self.split, self.model, self.method, self.target, self.beam)


def decoded_bundle(split: str, name: str) -> str:
    """Every decoding of a split by a student that the tables read, in one file (`naus decode-all`)."""
    return f"{DECODINGS}/{split}/{name}/decodings.json"


def pattern(path: str, **parts: str) -> str:
    """A regular expression for the paths a function here builds: `path` built with `{name}` placeholders
    (`student_dir("{model}")`), each replaced by a named group of its pattern, the rest literal."""
    expression = re.escape(path)
    for name, part in parts.items():
        expression = expression.replace(re.escape(f"{{{name}}}"), f"(?P<{name}>{part})")
    return expression


# A decoding's stem (`decoded`), with or without a beam: its split, student, method, target (and beam).
DECODED_PARTS = {"split": "|".join(DECODE_SOURCES), "model": MODEL_PATTERN, "method": METHOD_PATTERN,
                 "target": TARGET_PATTERN}
DECODED_PATTERNS = (pattern(decoded("{split}", "{model}", "{method}", "{target}"), **DECODED_PARTS),
                    pattern(decoded("{split}", "{model}", "{method}", "{target}", "{beam_size}"), **DECODED_PARTS,
                            beam_size=r"\d+"))


def parse_decoded(stem: str) -> Decoded:
    """What a `decoded` stem is made of (a path read from outside the plan: a GPU run's archive)."""
    for expression in DECODED_PATTERNS:
        if match := re.fullmatch(expression, stem):
            beam = match.groupdict().get("beam_size")
            return Decoded(match["split"], match["model"], match["method"], match["target"], beam and int(beam))
    raise ValueError(f"{stem!r} is not a decoding's path (decode/test/L10/length-control-10, ...)")


ANY_PROFILE = "{profile}"  # a profile's name where a help text or message shows a folder of any profile


def benchmark_result(name: str) -> str:
    """A benchmark's or study's JSON (`results/benchmarks/`, a glob where `name` has one), relative to the root."""
    return f"{profile_dir('results', 'benchmarks')}/{name}.json"


def profile_dir(kind: str, profile: str) -> str:
    """A profile's `build` (every output named here), `results` (tables, figures, metrics) or `logs` folder,
    relative to the project root (`ANY_PROFILE`: as a help text shows it)."""
    if kind not in ("build", "results", "logs"):
        raise ValueError(f"{kind!r} is not a profile's folder (build, results, logs)")
    return f"{kind}/{profile if profile == ANY_PROFILE else check_profile(profile)}"


def lead(split: str, length: Part) -> str:
    """The Lead baseline's output (`all`: the whole input, DUC2004's)."""
    return f"baseline/{split}/lead-{length}"


def published(label: str) -> str:
    return f"published/{label}"


def peer(name: str, collection: str, length: Part, cut: bool = False) -> str:
    """A peer's released output (`naus.data.peers`) on the test set or DUC2004, checked and copied into build/
    (`cut`: each line cut at `length` words)."""
    return f"peers/{name}/{collection}-L{length}{'-cut' if cut else ''}"


# A profile's results, under results/{profile}/: each output's ROUGE (the stem of its output in build/, with
# `.json`, under METRICS), the tables (`.md`, `.csv`, `.tex`, their captions `.rst`), the figures (`.png`,
# one captions file), the README, the HTML report's landing page, the outputs browser, every ROUGE in one
# file, a few headline numbers (what `dvc metrics show` prints) and the fingerprints of what made them.
METRICS, TABLES, FIGURES = "metrics", "tables", "figures"
README, LANDING_PAGE, FLAT_METRICS, FINGERPRINTS = "README.md", "report.rst", "metrics.json", "fingerprints.json"
SHIPPED = "model"  # under results/{profile}/ of a profile of one's own text: its students as `Summarizer` loads them


def shipped_student(length: int) -> str:
    """A profile's shipped student for `length` words (results/{profile}/model/L8.pt)."""
    return f"{SHIPPED}/L{length}.pt"
HEADLINE = "headline.json"
BROWSER, BROWSER_CAPTION, FIGURE_CAPTIONS = "browse.html", "browse.rst", f"{FIGURES}/captions.rst"
REPORT_NAMES = (TABLES, FIGURES, README, LANDING_PAGE, FLAT_METRICS, FINGERPRINTS, HEADLINE, BROWSER, BROWSER_CAPTION)


def metrics_file(stem: str, folder: str = "") -> str:
    """An output's ROUGE (`folder`: its protocol's, DUC2004's `duc2004`)."""
    return f"{METRICS}/{folder + '/' if folder else ''}{stem}.json"


def table_file(name: str, extension: str) -> str:
    return f"{TABLES}/{name}.{extension}"


def figure_file(name: str) -> str:
    return f"{FIGURES}/{name}.png"


def figure(kind: str, length: Part) -> str:
    """A per-length figure's name under figures/ (`loss`, `lengths`, `source-length`, `quality-speed`)."""
    return f"{kind}-L{length}"
