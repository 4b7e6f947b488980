"""Every setting of the search, the students and their training: its default, range and help,
once. The command line generates its options from these dataclasses and the workflow's config
schema its entries (`naus.pipeline.schema`); the profiles under config/ list only what differs. Plain
Python, so `naus --help` and the light steps never import torch."""

from __future__ import annotations

import math
import numbers
import re
import typing
from dataclasses import asdict, dataclass, field, fields

from naus import NausError, SettingError

FLUENCIES = ("slor", "perplexity")
PAPER_BUDGET = (0.1, 0.035)  # hill-climbing steps and restarts coefficients of Schumann et al. and the paper
# Upper bounds, so that a typo cannot ask for a job graph of millions or a table of terabytes. Each is far
# above any use (the paper: 256 positions, beam 6, 10 seeds) and bounds what grows with it:
MAX_POSITIONS = 4096  # a student's positions: attention costs T^2 per layer; a summary has at most T words
MAX_BEAM = 256  # hypotheses kept per cell of the decoders' tables: their memory and time grow with it
MAX_CHARS = 10_000  # a character budget: char-control keeps a column per character of it
MAX_BATCH = 4096  # sentences per forward pass: the logits are batch x positions x vocabulary floats
MAX_SEED = 2**32 - 1  # NumPy's and PyTorch's seeds are unsigned 32-bit numbers
MAX_SEEDS = 100  # students per length: each is a training job and a dozen decodings (100: ~2,000 jobs)
MAX_ORDER = 6  # KenLM's KENLM_MAX_ORDER as scripts/build-kenlm.sh builds it: lmplz refuses a higher order
MAX_DOWNLOAD_MB = 8192  # a download (the Rush-format Gigaword release is a few hundred MB): /dev/zero stops here
MAX_CONFIG_VALUES = 100_000  # a profile's values (the paper's: a few hundred); a YAML alias bomb has millions


def setting(default, help: str, minimum: float | None = None, above: float | None = None, below: float | None = None,
            choices=None, maximum: float | None = None, pattern: str | None = None):
    """A field with its default, the help of its command-line option and its range
    ([minimum, maximum], (above, ...), [..., below)) or, for text, the pattern it matches whole."""
    return field(default=default, metadata={"help": help, "minimum": minimum, "above": above, "below": below,
                                            "choices": choices, "maximum": maximum, "pattern": pattern})


BOUNDS = ("minimum", "maximum", "above", "below")  # a setting's range: [minimum, maximum], (above, ...), [..., below)


def out_of_range(value: float, minimum: float | None = None, maximum: float | None = None, above: float | None = None,
                below: float | None = None) -> str | None:
    """What a number outside a range must be ("must be between 1 and 256"), or None inside it: the one
    range check of the dataclasses, the command line and the library (NaN and infinities refused)."""
    if ((minimum is None or value >= minimum) and (maximum is None or value <= maximum)
            and (above is None or value > above) and (below is None or value < below)):
        return "must be a finite number" if isinstance(value, float) and math.isinf(value) else None
    low, high = (minimum, above)[minimum is None], (maximum, below)[maximum is None]
    if low is not None and high is not None:
        if minimum is not None and maximum is not None:
            return f"must be between {minimum} and {maximum}"
        return f"must be in {'[(' [minimum is None]}{low}, {high}{'])'[maximum is None]}"
    if low is not None:
        return f"must be {'at least' if minimum is not None else 'greater than'} {low}"
    return f"must be {'at most' if maximum is not None else 'less than'} {high}"


def check_number(name: str, value: float, **bounds) -> None:
    if (requirement := out_of_range(value, **bounds)) is not None:
        raise SettingError(f"{name} {requirement}, got {value}")


def check_ranges(settings) -> None:
    """Every field of a settings dataclass of its type and inside its range, whoever built it (CLI, workflow
    or API): a float where an integer belongs is a TypeError, not a number silently cut."""
    hints = typing.get_type_hints(type(settings))
    for spec in fields(settings):
        value, meta = getattr(settings, spec.name), spec.metadata
        kinds = typing.get_args(hints[spec.name]) or (hints[spec.name],)
        if value is not None and (int in kinds or float in kinds) and (
                isinstance(value, bool) or not isinstance(value, numbers.Real if float in kinds else numbers.Integral)):
            raise TypeError(f"{spec.name} must be {'a number' if float in kinds else 'an integer'}, "
                            f"got {type(value).__name__} {value!r}")
        if value is not None and str in kinds and not isinstance(value, str):
            raise TypeError(f"{spec.name} must be a string, got {type(value).__name__} {value!r}")
        if "help" in meta and isinstance(value, (int, float)) and not isinstance(value, bool):
            check_number(spec.name, value, **{key: meta[key] for key in BOUNDS})
        pattern = meta.get("pattern") if "help" in meta else None
        if pattern and isinstance(value, str) and not re.fullmatch(pattern, value):
            raise SettingError(f"{spec.name} must match {pattern}, got {value!r}")
        if "help" in meta and meta["choices"] and value not in meta["choices"]:
            raise SettingError(f"{spec.name} must be one of {list(meta['choices'])}, got {value!r}")


# A summary's length, however it is given (search and decoding, the command line and the library):
LENGTH = {"minimum": 1, "maximum": MAX_POSITIONS}  # words
RATIO = {"above": 0, "maximum": 1}  # of the source's words: L = max(min_length, floor(ratio x source length))
CHARS = {"minimum": 1, "maximum": MAX_CHARS}  # characters (UTF-8 bytes), char-control's budget


def check_targets(settings, **bounds: dict) -> None:
    """The summary targets a settings object gives (those not None) inside their bounds."""
    for name, bound in bounds.items():
        if getattr(settings, name) is not None:
            check_number(name, getattr(settings, name), **bound)


def check_learned_estimate(rerank_k: int) -> None:
    """A learned estimate chooses which of the re-ranked states MiniLM encodes: without re-ranking it has
    nothing to choose."""
    if rerank_k == 0:
        raise SettingError("a learned estimate chooses states for the re-ranking: it needs rerank_k > 0")


def check_plain(config: dict) -> None:
    """A configuration as YAML gave it, before anything walks it whole: at most MAX_CONFIG_VALUES values
    (aliases counted each time they are used, so a bomb stops in bounded time), every number finite
    (JSON Schema's bounds let NaN and infinity through) and no `<` or `>` in a string but the free-text `note`:
    Snakemake's HTML report shows each rule's parameters inside a <script> as they are, so a path or URL
    holding `</script>` would end it (the note reaches a rule only through the report's escaped JSON)."""
    stack, count = [("", config)], 0
    while stack:
        key, value = stack.pop()
        count += 1
        if count > MAX_CONFIG_VALUES:
            raise NausError(f"the configuration holds more than {MAX_CONFIG_VALUES:,} values (YAML aliases "
                            "repeating a list?); no profile needs as many")
        if isinstance(value, float) and not math.isfinite(value):
            raise NausError(f"config key {key}: {value} is not a finite number")
        if isinstance(value, str) and key != "note" and ("<" in value or ">" in value):
            raise NausError(f"config key {key}: '<' and '>' are not allowed outside the note")
        if isinstance(value, dict):
            stack.extend((f"{key}.{k}" if key else str(k), v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((f"{key}[{i}]", v) for i, v in enumerate(value))


def options(settings: type, section: dict) -> dict:
    """The settings of a configuration section that a dataclass's command-line options take (the fields
    with help), in the dataclass's order: what a rule passes on, with no list of names of its own."""
    return {spec.name: section[spec.name] for spec in fields(settings)
            if "help" in spec.metadata and spec.name in section}


def target_length(source_length: int, length: int | None, ratio: float | None, min_length: int = 1) -> int:
    """A summary's length: `length` words, or ⌊ratio × source length⌋ and at least `min_length`
    (the same rule for the search and for decoding)."""
    if ratio is not None:
        return max(min_length, math.floor(ratio * source_length))
    if length is None or length <= 0:
        raise NausError("give a positive --length or a --ratio")
    return length


# What chooses the states the teacher encodes on their own (config key search.estimator): the in-context
# estimate, or a linear correction of it fitted per length (`naus fit-estimate`).
IN_CONTEXT, LEARNED = ESTIMATORS = ("in-context", "learned")
# Where MiniLM runs for the re-ranking (config key search.embedder): int8 in onnxruntime (CPU), or PyTorch.
ONNX_INT8, TORCH = EMBEDDERS = ("onnx-int8", "torch")

# Named teachers a profile can ask for (config key search.preset): the search keys each sets, under the
# profile's own. `fast`, every profile's unless it names another, is SearchConfig's defaults: a learned estimate
# (`naus fit-estimate`) chooses the 20 states encoded on their own; `thorough`: the in-context estimate chooses
# 180, about six times the cost (chosen on two dev splits: results/benchmarks/teacher_default.json; 20 states,
# not 30: teacher_fewer_states.json).
TEACHER_PRESETS = {"fast": {}, "thorough": {"estimator": IN_CONTEXT, "rerank_exact": 180}}
DEFAULT_PRESET = "fast"


def with_preset(search: dict) -> dict:
    """A profile's search section as the workflow runs it: its named teacher's keys (search.preset, else
    DEFAULT_PRESET) under the profile's own."""
    name = search.get("preset", DEFAULT_PRESET)
    if name not in TEACHER_PRESETS:
        raise NausError(f"config key search.preset: {name!r} is not one of {sorted(TEACHER_PRESETS)}")
    return {**TEACHER_PRESETS[name], **search}


# How `naus fit-estimate` fits a learned estimate by default: on the first 300 sentences, 60 states each
# (half a minute a length on one core; results/benchmarks/teacher_default.json).
FIT_SENTENCES, FIT_STATES = 300, 60


@dataclass(frozen=True)
class SearchConfig:
    """The search teacher; its defaults are the teacher `naus search` and every profile run (the `fast` preset),
    chosen on two dev splits at L = 10 and 8 (results/benchmarks/teacher_default.json): the paper's hill-climbing
    budget, the 1,600 best distinct states re-ranked, the 20 a learned estimate ranks best encoded on their own."""

    length: int | None = 10
    ratio: float | None = None
    min_length: int = 1
    fluency: str = setting("slor", "the fluency term: SLOR, or the paper's 1/perplexity", choices=FLUENCIES)
    gamma: float = setting(0.0, "static similarity exponent in hill climbing (needs --static)", minimum=0)
    rerank_k: int = setting(1600, "distinct states of stage 1 re-ranked with MiniLM (0: the paper's one-stage "
                                 "search)", minimum=0, maximum=100_000)
    rerank_exact: int = setting(20, "of those, the states the estimate (learned or in-context) ranks best, "
                                    "encoded on their own for the choice (0: all)", minimum=0, maximum=100_000)
    estimator: str = setting(LEARNED, "what ranks the states to encode: a linear correction of the in-context "
                                      "estimate fitted per length (`naus fit-estimate`), or the in-context estimate "
                                      "itself (the `thorough` teacher's, with 180 states)", choices=ESTIMATORS)
    rerank_gamma: float = setting(48.0, "weight of ln similarity in the re-ranking", minimum=0)
    estimate_gamma: float = setting(96.0, "weight of ln similarity when the in-context estimate ranks the states "
                                          "to encode", minimum=0)
    steps_coef: float = setting(PAPER_BUDGET[0], "hill-climbing steps = coef x source length x L^2", above=0)
    restarts_coef: float = setting(PAPER_BUDGET[1], "restarts = coef x source length x L^2", above=0)
    seed: int = setting(0, "seed of the hill climbing", minimum=0, maximum=MAX_SEED)
    max_source_words: int = setting(200, "longer sources are searched on their first N words (the search's "
                                         "work grows with N^2)", minimum=1, maximum=MAX_POSITIONS)
    max_memory_mb: int = setting(1024, "memory one sentence's search may use: a source whose n-gram table "
                                       "((N + 2)^order floats) would not fit is searched on its first words, "
                                       "a budget whose states would not fit is refused", minimum=16, maximum=1 << 20)

    def __post_init__(self) -> None:
        check_ranges(self)
        if (self.length is None) == (self.ratio is None):
            raise NausError("give exactly one of a target length and a ratio")
        check_targets(self, length=LENGTH, ratio=RATIO)

    def target_length(self, source_length: int) -> int:
        return target_length(source_length, self.length, self.ratio, self.min_length)

    def budget(self, source_length: int, length: int) -> tuple[int, int]:
        """(steps, restarts) = (⌊a·S·L²⌋, ⌊b·S·L²⌋), each at least 1."""
        work = source_length * length * length
        return max(1, math.floor(self.steps_coef * work)), max(1, math.floor(self.restarts_coef * work))


@dataclass
class ModelConfig:
    """A student; the paper's by default (6 × 512, 8 heads)."""

    vocab_size: int
    d_model: int = setting(512, "width of the Transformer", minimum=8, maximum=8192)
    n_heads: int = setting(8, "attention heads", minimum=1, maximum=256)
    n_layers: int = setting(6, "Transformer layers (of the encoder, and of the decoder of an encoder-decoder)",
                            minimum=1, maximum=96)
    d_ff: int = setting(2048, "width of the feed-forward layers", minimum=8, maximum=65536)
    dropout: float = setting(0.1, "dropout probability", minimum=0, below=1)
    max_len: int = setting(256, "longest source in tokens (learned positions)", minimum=8, maximum=MAX_POSITIONS)
    arch: str = "naus"  # a key of naus.architectures.ARCHITECTURES
    states_encoder: str = ""  # a student on frozen states: the SHA-256 of the encoder file that made them; "": MiniLM

    def __post_init__(self) -> None:
        check_ranges(self)
        if self.d_model % self.n_heads:
            raise NausError(f"d_model {self.d_model} is not a multiple of n_heads {self.n_heads} (each head gets "
                            "d_model / n_heads dimensions)")

    def to_dict(self) -> dict:
        """Its fields; `states_encoder` only when set (a student on MiniLM's states is written as before it was
        a field: the same checkpoint bytes)."""
        return {k: v for k, v in asdict(self).items() if k != "states_encoder" or v}


@dataclass
class TrainConfig:
    """The paper's recipe by default (AdamW, inverse-square-root decay, 4,096-token batches)."""

    max_steps: int = setting(100_000, "optimizer steps", minimum=1, maximum=10**8)
    max_tokens: int = setting(4096, "source tokens (padding included) per batch", minimum=16, maximum=10**7)
    lr: float = setting(5e-4, "peak learning rate", above=0)
    warmup: int | None = setting(None, "steps of linear warm-up, then 1/sqrt(step) decay (default: a tenth of "
                                 "max_steps, the paper's 10,000 of 100,000; at most max_steps)", minimum=0)
    weight_decay: float = setting(0.01, "AdamW weight decay", minimum=0)
    clip: float = setting(2.0, "gradient-norm clipping", above=0)
    smoothing: float = setting(0.1, "label smoothing: weight of the uniform term", minimum=0, below=1)
    seed: int = setting(0, "seed of the initialisation, dropout and batch order", minimum=0, maximum=MAX_SEED)
    min_count: int = setting(1, "words seen fewer times in the training sources are <unk>", minimum=1)
    checkpoint_every: int = setting(2000, "steps between checkpoints (last.pt)", minimum=1)
    eval_every: int = setting(2000, "steps between dev evaluations (best.pt) and progress lines", minimum=1)
    patience: int = setting(0, "stop after this many dev evaluations without a lower dev loss (0: train to "
                               "max_steps)", minimum=0)
    device: str | None = setting(None, "cpu, cuda, cuda:1, ... (default: cuda when available)")

    def __post_init__(self) -> None:
        check_ranges(self)
        if self.warmup is not None and self.warmup > self.max_steps:
            raise SettingError(f"warmup {self.warmup} is longer than the run (max_steps {self.max_steps}): the "
                               "learning rate would never reach lr; give at most max_steps (default: a tenth)")

    @property
    def warmup_steps(self) -> int:
        """The warm-up the schedule runs: `warmup`, or a tenth of the run (the paper's ratio) when it is not set."""
        return self.max_steps // 10 if self.warmup is None else self.warmup


# Which pool titles the language model reads (config key data.lm_titles): `unsearched`, no title of an article that
# any search labels (the pool's first search.pool_limit, dev, select, test), not even a copy among the other
# headlines; or `all`, every pool title, as the paper's LM read the titles of the articles it searched.
UNSEARCHED, ALL_TITLES = LM_TITLES = ("unsearched", "all")


@dataclass(frozen=True)
class DataConfig:
    """How a corpus is split into pool, dev (and, for the demo, test) pairs, and which the demo keeps."""

    dev_size: int = setting(500, "pool pairs held out as the dev split", minimum=1, maximum=10**7)
    select_size: int = setting(0, "pool pairs held out as a second dev split (select/) for choosing the "
                                  "teacher; its titles are read for that only, never learned from", minimum=0,
                               maximum=10**7)
    seed: int = setting(0, "seed of the dev (and test) split", minimum=0, maximum=MAX_SEED)
    test_size: int = setting(300, "demo: pairs held out as the test split", minimum=1, maximum=10**7)
    max_article_words: int = setting(60, "demo: lead sentences longer than this are left out (0 keeps every "
                                         "length)", minimum=0)
    lm_titles: str = setting(UNSEARCHED, "the pool titles the LM reads: those of the pool articles no search "
                                         "labels, and no copy of a searched article's title (unsearched), or every "
                                         "pool title, the paper's protocol (all)", choices=LM_TITLES)

    def __post_init__(self) -> None:
        check_ranges(self)


@dataclass(frozen=True)
class MaskedLMConfig:
    """The encoder pretrained here by masked-language modelling on unlabelled text (`naus pretrain-mlm`)."""

    width: int = setting(384, "state width (a student's frozen states are 384 wide)", minimum=8, maximum=4096)
    layers: int = setting(4, "Transformer layers", minimum=1, maximum=48)
    heads: int = setting(6, "attention heads (dividing --width)", minimum=1, maximum=64)
    ffn: int = setting(1536, "feed-forward width", minimum=1, maximum=65536)
    min_count: int = setting(2, "rarer words are [UNK]", minimum=1)
    max_words: int = setting(64, "a training sentence's first words", minimum=1, maximum=4096)
    batch_words: int = setting(2048, "words a step, about", minimum=1)
    steps: int = setting(2000, "optimizer steps", minimum=1)
    lr: float = setting(5e-4, "peak learning rate (AdamW)", above=0.0, maximum=1.0)
    warmup: int = setting(200, "linear warm-up steps, then linear decay to 0", minimum=1)
    weight_decay: float = setting(0.01, "AdamW weight decay of the matrices", minimum=0.0, maximum=1.0)
    mask_rate: float = setting(0.15, "share of words to restore (BERT's 80/10/10 masking)", above=0.0, below=1.0)
    seed: int = setting(0, "seed of the weights, batches and masks", minimum=0)

    def __post_init__(self) -> None:
        check_ranges(self)
        if self.width % self.heads or self.width % 2:
            raise SettingError(f"width {self.width} must be even and divisible by heads {self.heads}")


@dataclass(frozen=True)
class LMConfig:
    """The KenLM fluency model."""

    order: int = setting(3, "n-gram order (KenLM's binary format needs at least 2)", minimum=2, maximum=MAX_ORDER)
    memory: str = setting("20%", "lmplz -S: memory for sorting, a share of the machine's (1% to 100%) or a size "
                          "(500M, 2G)", pattern=r"([1-9][0-9]?|100)%|[1-9][0-9]*[bKMGT]?")

    def __post_init__(self) -> None:
        check_ranges(self)


# The source-order decoder's phrases, last word and adjacency: chosen on dev for headlines an editor keeps, ROUGE
# not lower (results/benchmarks/readability.json).
PHRASE_CHOICES = ("whole", "words")  # DecodeConfig.phrases: kept whole, or each word alone
LAST_WORDS = ("content", "any")  # DecodeConfig.last_word: what a source-order summary may end on


@dataclass(frozen=True)
class DecodeConfig:
    """How a student decodes (the summarizer's defaults too)."""

    length: int | None = 10  # summary words (the command line's --length, exclusive with --ratio and --chars)
    min_length: int = setting(1, "with a ratio of the source as the target (r0.5, `naus decode --ratio`), at "
                                 "least this many words", minimum=1, maximum=MAX_POSITIONS)
    beam_size: int = setting(6, "beam of length control and CTC beam search", minimum=1, maximum=MAX_BEAM)
    batch_size: int = setting(64, "sentences per forward pass", minimum=1, maximum=MAX_BATCH)
    batch1_samples: int = setting(0, "when timing (`naus decode --timing`, `naus time`), also time the first N "
                                     "sentences decoded one at a time", minimum=0, maximum=100_000)
    timing_passes: int = setting(3, "when timing (`naus decode --timing`, `naus time`), time this many passes after "
                                    "an untimed one and record the median (one pass of a small test set is at the "
                                    "mercy of a busy moment)", minimum=1, maximum=100)
    phrases: str = setting("whole", "source order: keep each phrase (a number with its unit, a name, a short "
                                    "quotation: naus.text.phrases) whole or not at all, or take words alone",
                           choices=PHRASE_CHOICES)
    last_word: str = setting("content", "source order: what a summary may end on: any word, or a content word (no "
                                        "function word or clitic last, naus.text.FUNCTION_WORDS)", choices=LAST_WORDS)
    adjacency: float = setting(1.0, "source order: nats added to a summary's score for each word that directly "
                                    "follows its source neighbour (fewer, longer spans; 0: none)",
                               minimum=0.0, maximum=10.0)
    max_memory_mb: int = setting(1024, "memory char-control's tables may take: a budget and beam whose tables "
                                       "would not fit are refused", minimum=16, maximum=1 << 20)
    ratio: float | None = None  # L = floor(ratio x source length), in (0, 1] (--ratio)
    chars: int | None = None  # char-control's budget in characters (--chars)

    def __post_init__(self) -> None:
        check_ranges(self)
        check_targets(self, length=LENGTH, ratio=RATIO, chars=CHARS)

