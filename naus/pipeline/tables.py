"""What each table and figure of a profile shows, declared once from its configuration: each row's label, its
outputs (one per seed) and its decoding method, each figure's series. The workflow builds exactly these outputs
(`workflow/rules/common.smk`) and the report draws exactly these rows and figures (`naus.report`), refusing one whose
input is missing. An output is a path under build/{profile}/ without `.txt`; its scores are the same stem under
results/{profile}/metrics/ (DUC2004's under its protocol's folder) with `.json`. Plain Python."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from naus import NausError
from naus.pipeline import layout
from naus.architectures import ARCHITECTURES, TABLE4_ARCHS
from naus.methods import BEAM, CHAR_CONTROL, LENGTH_CONTROL, METHODS, SOURCE_ORDER, TRUNCATE
from naus.data.peers import DUC, GIGAWORD, PEERS
from naus.pipeline.quoted import PAPER_CHARS, PAPER_DUC, PAPER_GIGAWORD, PAPER_SHOWN, Quoted
from naus.settings import ALL_TITLES, LM_TITLES, UNSEARCHED, DecodeConfig, DataConfig

# The authors' released outputs (Gigaword at these lengths, DUC2004 at L = 13), rescored beside ours.
PUBLISHED_LENGTHS, PUBLISHED_DUC_LENGTH, PUBLISHED_KINDS = (8, 10), 13, ("length_control", "truncating")
AUTHORS = "the authors' NAUS"  # their length control's outputs, as a peer (`p vs the authors' NAUS`)
# The paper-shaped tables' students: the paper's method (one generation), and the last generation (beyond the paper)
PAPER_METHODS, BEYOND_METHODS = (TRUNCATE.name, LENGTH_CONTROL.name), (LENGTH_CONTROL.name, SOURCE_ORDER.name)

@dataclass(frozen=True)
class Protocol:
    """How a collection's outputs are scored, declared once: the evaluation rules run it, the report's
    per-sentence scores (p-values, the browser) repeat it, the captions state it."""

    collection: str  # the outputs' split: "test" or "duc"
    metric: str  # "f1" or "recall" (naus.evaluation.evaluate), averaged over the references
    max_bytes: int | None  # each output cut to this many UTF-8 bytes before scoring

    @property
    def references(self) -> tuple[str, ...]:
        return layout.REFERENCES[self.collection]

    @property
    def folder(self) -> str:
        """Where its scored outputs (under build/) and their metrics (under metrics/) are."""
        return layout.SCORED[self.collection]

    @property
    def measure(self) -> str:
        """Its ROUGE as a caption names it: F1 or recall."""
        return "F1" if self.metric == "f1" else self.metric

    def options(self) -> str:
        """Its `naus evaluate` options."""
        return f"--metric {self.metric}" + (f" --max-bytes {self.max_bytes}" if self.max_bytes else "")


# Gigaword: F1 against the one title; DUC2004: recall of the output cut to 75 bytes against four references.
PROTOCOLS = {"test": Protocol("test", "f1", None), "duc": Protocol("duc", "recall", 75)}


@dataclass(frozen=True)
class Row:
    label: str
    stems: tuple[str, ...]  # one output per seed
    method: str | None = None  # a student's decoding method; None: Lead, the teacher, a published output
    timed: bool = False  # the table shows its time (its first seed's `.timing.json`; the teacher's search time)
    peer: str | None = None  # a peer's label (`naus.data.peers`, AUTHORS): ours of L words get a p against it
    over: int | None = None  # a budget of words its outputs do not keep: its label gives the share longer
    main: bool = False  # shown in the paper-shaped table (every row: its supplementary `-full` table)


@dataclass(frozen=True)
class Group:
    """Rows scored against one teacher (ΔR): a length of Table 1 or 3, Table 2, a transfer of Table 7."""

    key: int | None  # the L column (Tables 1 and 3)
    teacher: Row | None  # ΔR's reference (None: no teacher for that target)
    rows: tuple[Row, ...]  # shown in this order (the teacher among them where the table shows it)
    other: "OtherRun | None" = None  # an earlier run whose metrics its rows read (never paired with this run's here)
    train: dict | None = None  # this run's training settings, which that run's must equal to be compared


@dataclass(frozen=True)
class Table:
    name: str
    protocol: Protocol
    groups: tuple[Group, ...]
    quoted: dict = field(default_factory=dict)  # a group's key -> the papers' rows shown after it
    p_values: bool = False  # its students' paired tests (against the teacher, truncation, each peer)
    times: bool = True  # its time, speedup and p-value columns (a transfer table has none)
    shaped: bool = False  # drawn twice: in the paper's shape (`main` rows, marks for p) and whole (`{name}-full`)

    @property
    def main_rows(self) -> tuple[str, ...]:
        """The labels the paper-shaped table shows: the rows marked `main`, and the papers' in `PAPER_SHOWN`."""
        ours = [row.label for g in self.groups for row in ((g.teacher,) if g.teacher else ()) + g.rows if row.main]
        quoted = [q[0] for rows in self.quoted.values() for q in rows if q[0] in PAPER_SHOWN]
        return tuple(dict.fromkeys(ours + quoted))

    @property
    def marked_peers(self) -> tuple[str, ...]:
        """The peers whose p-value the paper-shaped table marks: those of its `main` rows (a like-for-like budget)."""
        return tuple(dict.fromkeys(row.peer for g in self.groups for row in g.rows if row.main and row.peer))

    @property
    def names(self) -> tuple[str, ...]:
        """The files it is written as."""
        return (self.name, f"{self.name}-full") if self.shaped else (self.name,)


@dataclass(frozen=True)
class Series:
    label: str
    points: tuple[tuple[float | None, tuple[str, ...]], ...]  # (x, one output per seed)


@dataclass(frozen=True)
class Figure:
    name: str  # under figures/, without .png
    kind: str  # which drawing: training-size, beam-size, char-budget, loss, lengths, source-length
    length: int
    series: tuple[Series, ...] = ()
    history: str | None = None  # the student's history.json (the loss curve)
    timed: bool = False  # it shows each point's time (its first seed's `.timing.json`)
    rows: tuple[Row, ...] = ()  # Table 1's rows at its length (quality against speed)
    quoted: tuple[Quoted, ...] = ()  # the paper's rows at its length, at the times it reports


@dataclass(frozen=True)
class Spec:
    """A profile's tables and figures, and the settings their captions name."""

    profile: str
    lengths: list[int]
    seeds: list[int]
    analysis_seeds: list[int]
    methods: list[str]  # Table 1's (and 2's) decoding methods its students decode with, in the registry's order
    chars: list[tuple[int, int]]  # Table 1's character budgets: (model length, characters)
    duc_length: int | None
    duc_chars: int | None
    config: dict = field(repr=False)  # the whole resolved configuration (the outputs' recorded settings)
    tables: tuple[Table, ...] = ()
    figures: tuple[Figure, ...] = ()
    shipped: tuple[str, ...] = ()  # one's own text: the students shipped, and (a test set) the outputs scored
    scored: tuple[str, ...] = ()

    def stems(self, split: str = "test") -> list[str]:
        """Every output a table or figure reads on `split`, once each."""
        found = [s for t in self.tables if t.protocol.collection == split for g in t.groups if not g.other
                 for row in ((g.teacher,) if g.teacher else ()) + g.rows for s in row.stems]
        found += list(self.scored) if split == "test" else []
        if split == "test":
            found += [s for f in self.figures for series in f.series for _, stems in series.points for s in stems]
        return list(dict.fromkeys(found))

    def timed(self) -> list[str]:
        """The decodings whose time a table or figure shows (a student row's first seed, a timed figure's points'
        first seeds), once each: the only decodings the workflow times."""
        rows = [row.stems[0] for t in self.tables for g in t.groups if not g.other for row in g.rows
                if row.timed and row.method]
        points = [stems[0] for f in self.figures if f.timed for series in f.series for _, stems in series.points]
        return list(dict.fromkeys(rows + points))

    def students(self) -> list[str]:
        """Every student a table or figure decodes with, and those shipped, once each."""
        return list(dict.fromkeys([*(layout.decoded_model(s) for split in ("test", "duc") for s in self.stems(split)
                                     if s.startswith("decode/")), *self.shipped]))

    @property
    def batch_size(self) -> int:
        """The batch the timing jobs decode at (config key decode.batch_size)."""
        return self.config.get("decode", {}).get("batch_size", DecodeConfig.batch_size)

    def table(self, name: str) -> Table | None:
        return next((t for t in self.tables if t.name == name), None)

    def tables_on(self, collection: str) -> list[str]:
        """The tables that read `collection` ("duc": those that wait for DUC2004 where a user has not brought it)."""
        return [t.name for t in self.tables if t.protocol.collection == collection]

    @property
    def table_names(self) -> list[str]:
        """Every table file the report writes: the claims, each declared table (a shaped one twice), the case study."""
        return ["claims", *(name for t in self.tables for name in t.names), "case-study"]


def students(seeds, length, method: str, target, arch: str = "naus", split: str = "test", fraction=None,
             beam=None, generation: int = 1) -> tuple[str, ...]:
    """One decoding per seed of a student (`layout.ENSEMBLE` among the seeds: its seeds as one model)."""
    return tuple(layout.decoded(split, layout.model(length, arch, fraction, seed, generation), method, target, beam)
                 for seed in seeds)


def generations(s: "Spec") -> list[tuple[int, list, str]]:
    """The students Tables 1 and 2 show, as (generation, seeds, the label's addition): each generation's seeds
    (config key train.generations), and with decode.ensemble the last one's seeds as one model."""
    last = s.config["train"].get("generations", 1)
    shown = [(g, s.seeds, "" if g == 1 else f", generation {g}") for g in range(1, last + 1)]
    if s.config["decode"].get("ensemble"):
        seeds = f"{len(s.seeds)} seed{'s' if len(s.seeds) > 1 else ''}"
        shown.append((last, [layout.ENSEMBLE], f"{'' if last == 1 else f', generation {last}'}, {seeds} as one model"))
    return shown


# The most outputs a profile may ask for (ten times gigaword-sample's 398): the schema's lists at their maximum ask
# for far more than Snakemake plans in reasonable time and memory.
MAX_OUTPUTS = 5_000
TEXT = "text"  # config key data.source of a profile of one's own text


def spec(config: dict) -> Spec:
    """The tables and figures a resolved configuration asks for."""
    try:
        base = Spec(layout.check_profile(config["profile"]), list(config["search"]["lengths"]),
                    list(config["train"]["seeds"]), list(config["train"]["analysis_seeds"]),
                    [name for name in METHODS if name in config["decode"]["methods"]
                     and name in ARCHITECTURES[config.get("model", {}).get("arch", "naus")].methods],
                    [(int(m), int(c)) for m, c in config["decode"].get("chars", [])],
                    (config.get("duc") or {}).get("length") or None, (config.get("duc") or {}).get("chars"), config)
        if config["data"].get("source") == TEXT:  # no table: each length's last-generation student shipped and,
            method = ARCHITECTURES[config["model"]["arch"]].methods[0]  # given a test set, scored beside the teacher
            shipped = tuple(layout.model(n, generation=config["train"]["generations"]) for n in base.lengths)
            return replace(base, shipped=shipped, scored=tuple(
                x for n, m in zip(base.lengths, shipped) if config["data"].get("test_article")
                for x in (layout.search("test", n), layout.decoded("test", m, method, n))))
        table2 = _table2(base)
        tables = (table2, _table3(base), _table4(base), _table6(base))
        made = replace(base, tables=tuple(t for t in tables if t and t.groups), figures=tuple(_figures(base, table2)))
    except (KeyError, TypeError, ValueError) as err:
        raise NausError(f"not a profile's resolved configuration ({type(err).__name__}: {err})") from None
    if (outputs := len(made.stems("test")) + len(made.stems("duc"))) > MAX_OUTPUTS:
        raise NausError(f"the profile asks for {outputs:,} outputs (its lengths, seeds, fractions, methods and sweeps "
                        f"multiplied), more than {MAX_OUTPUTS:,}: fewer of them")
    return made


TEACHER_LABEL = "Search teacher (ours)"


def ours_label(method_label: str, which: str = "") -> str:
    """A row of our students: the method's label, which students (`generations`' addition), `(ours)`."""
    return f"{method_label}{which} (ours)"


def cut_label(peer_label: str, length: int) -> str:
    """A peer's released outputs cut at our word budget."""
    return f"{peer_label} (rescored), cut at {length} words"


def last_generation(s: "Spec") -> str:
    """The label addition of the last generation's own students (its seeds, not as one model)."""
    return [which for _, seeds, which in generations(s) if layout.ENSEMBLE not in seeds][-1]


def _teacher(split: str, length: int, label: str = TEACHER_LABEL) -> Row:
    return Row(label, (layout.search(split, length),), timed=True, main=True)


def _ours(s: Spec, split: str, length: int, budget_unit: str, chars: list[int]) -> list[Row]:
    """The students' rows, each generation's (and an ensemble's): one per decoding method, then one per character
    budget."""
    rows, last = [], s.config["train"].get("generations", 1)
    for generation, seeds, which in generations(s):
        beyond = BEYOND_METHODS if generation == last else ()
        rows += [Row(ours_label(METHODS[m].label, which),
                     students(seeds, length, m, length, split=split, generation=generation), m, True,
                     main=layout.ENSEMBLE not in seeds and m in (PAPER_METHODS if generation == 1 else ()) + beyond)
                 for m in s.methods]
        rows += [Row(f"{CHAR_CONTROL.label}, {budget} {budget_unit}{which} (ours)",
                     students(seeds, length, CHAR_CONTROL.name, layout.chars_target(budget), split=split,
                              generation=generation), CHAR_CONTROL.name, True) for budget in chars]
    return rows


def published_label(length: int, kind: str = PUBLISHED_KINDS[0]) -> str:  # length control: AUTHORS, a peer
    return f"published HC_{length}_{kind} (rescored)"


def _published(folder: str, length: int) -> list[Row]:
    return [Row(published_label(length, kind), (layout.published(f"{folder}HC_{length}_{kind}"),),
                peer=AUTHORS if kind == PUBLISHED_KINDS[0] else None) for kind in PUBLISHED_KINDS]


def _peers(s: Spec, collection: str, length: int) -> list[Row]:
    """The configured peers' released outputs on `collection` at `length`, rescored, and cut at `length` words
    where a peer's do not keep the budget."""
    rows = []
    for name in s.config["data"].get("peers") or {}:
        declared = PEERS[name]
        if (collection, length) in declared.files:
            subset = declared.subset.get((collection, length))
            cut = collection in declared.cut and s.config["decode"].get("cut_peers", True)
            rows.append(Row(f"{declared.label} (rescored" + (f" on {subset})" if subset else ")"),
                            (layout.peer(name, collection, length),), peer=None if subset else declared.label,
                            over=length if collection in declared.cut else None,
                            main=collection == DUC and not subset))  # DUC2004's protocol cuts every row alike
            if cut:
                rows.append(Row(cut_label(declared.label, length),
                                (layout.peer(name, collection, length, cut=True),), peer=f"{declared.label} cut",
                                main=True))
    return rows


# What each protocol of data.lm_titles lets the LM read, as Table 1's rows of another protocol are labelled.
LM_LABELS = {UNSEARCHED: "LM without the searched titles", ALL_TITLES: "LM with every pool title, the paper's protocol"}
LM_READS = {UNSEARCHED: "no title of an article any search labels, nor a copy of one (data.lm_titles: unsearched)",
            ALL_TITLES: "every pool title, the searched articles' too (data.lm_titles: all, the paper's protocol)"}
PAIR_FREE = "pair-free chain (word vectors learned here, no sentence pair)"  # report.pair_free's rows end with it


@dataclass(frozen=True)
class OtherRun:
    """An earlier run whose teacher and students Tables 1 (and 2) show beside this run's, from its committed metrics:
    this profile under the other data.lm_titles (report.other_protocol), or its chain without MiniLM (pair_free)."""

    folder: str
    label: str  # its rows' labels end with it
    method: str  # the decoding its students' row shows
    generation: int
    expects: tuple[tuple[str, object], ...]  # (a key of its record, dotted, and the value it must hold)
    p_label: str  # the column of its students' p-value against this run's same students
    duc: bool = False  # Table 2 shows it too, and the paper-shaped tables both

    which = property(lambda self: "" if self.generation == 1 else f", generation {self.generation}")
    @property
    def record(self) -> str:
        """What it was made with: a provenance.json written for it, else the pipeline's fingerprints.json."""
        written = f"{self.folder}/provenance.json"
        return written if Path(written).is_file() else f"{self.folder}/{layout.FINGERPRINTS}"


def other_runs(config: dict) -> list[OtherRun]:
    """The earlier runs config keys report.other_protocol and report.pair_free name."""
    report, runs = config.get("report") or {}, []
    if folder := report.get("other_protocol"):
        ours = config["data"].get("lm_titles", DataConfig.lm_titles)
        theirs = next(p for p in LM_TITLES if p != ours)
        runs.append(OtherRun(folder, LM_LABELS[theirs], LENGTH_CONTROL.name, 1, (("lm_titles", theirs),),
                             "p vs other LM"))
    if folder := report.get("pair_free"):  # its last generation's default decoding, Table 1's main row
        runs.append(OtherRun(folder, PAIR_FREE, ARCHITECTURES[config["model"]["arch"]].methods[0],
                             config["train"].get("generations", 1),
                             (("settings.search.static_vectors", "word-vectors"),
                              ("settings.model.word_vector_states", True)), "p vs MiniLM chain", duc=True))
    return runs


def _archived(s: Spec, length: int, run: OtherRun, split: str = "test") -> Group:
    """An earlier run's teacher and students at `length`, from its metrics."""
    teacher = Row(f"Search teacher, {run.label}", (layout.search(split, length),), main=run.duc)
    student = Row(f"{METHODS[run.method].label}{run.which}, {run.label}", students(
        s.seeds, length, run.method, length, split=split, generation=run.generation), run.method, main=run.duc)
    return Group(length if split == "test" else None, teacher, (teacher, student), other=run, train=s.config["train"])


def _table2(s: Spec) -> Table:
    groups, others = [], other_runs(s.config)
    published = s.config["data"].get("published_dir")
    for length in s.lengths:
        teacher = _teacher("test", length)
        rows = [Row(f"Lead-{length} (ours)", (layout.lead("test", length),), main=True), teacher]
        rows += _ours(s, "test", length, "chars", [budget for model, budget in s.chars if model == length])
        if published and length in PUBLISHED_LENGTHS:
            rows += _published("", length)
        rows += _peers(s, GIGAWORD, length)
        groups.append(Group(length, teacher, tuple(rows)))
        groups += [_archived(s, length, run) for run in others]
    quoted = {length: PAPER_GIGAWORD.get(length, ()) + (PAPER_CHARS.get(length, ()) if s.chars else ())
              for length in s.lengths}
    return Table("table2", PROTOCOLS["test"], tuple(groups), quoted, p_values=True, shaped=True)


def _table3(s: Spec) -> Table | None:
    if not s.duc_length:
        return None
    n = s.duc_length
    teacher = _teacher("duc", n, f"Search teacher, L={n} (ours)")
    rows = [Row(f"Lead, {PROTOCOLS['duc'].max_bytes} bytes (ours)", (layout.lead("duc", "all"),), main=True), teacher]
    rows += _ours(s, "duc", n, "bytes", [s.duc_chars] if s.duc_chars else [])
    if s.config["data"].get("published_dir") and n == PUBLISHED_DUC_LENGTH:
        rows += _published("duc/", n)
    rows += _peers(s, DUC, n)
    others = [_archived(s, n, run, "duc") for run in other_runs(s.config) if run.duc]
    return Table("table3", PROTOCOLS["duc"], (Group(None, teacher, tuple(rows)), *others), {None: PAPER_DUC},
                 p_values=True, shaped=True)


def table4_archs(config: dict) -> list:
    """Table 3's architectures: the profile's own (model.arch) first, then each other configured one."""
    own = config.get("model", {}).get("arch", "naus")
    others = [a for a in config.get("analysis", {}).get("archs", TABLE4_ARCHS) if a != own]
    return [ARCHITECTURES[own], *(a for a in ARCHITECTURES.values() if a.name in others)]


def _table4(s: Spec) -> Table:
    """Per length, the profile's own students (Table 1's) under their architecture's name, then each other configured
    architecture (its analysis seeds); one configured as the profile's own (model.arch) is that row, not twice."""
    own = s.config.get("model", {}).get("arch", "naus")
    groups = []
    for length in s.config.get("analysis", {}).get("lengths", []):
        teacher = _teacher("test", length)
        rows = [teacher] + [
            Row(f"{arch.label}, {label}", students(s.seeds, length, method, length) if arch.name == own else
                students(s.analysis_seeds, length, method, length, arch.name), method, True)
            for arch in table4_archs(s.config)
            for method, label in arch.table4]
        groups.append(Group(length, teacher, tuple(rows)))
    return Table("table4", PROTOCOLS["test"], tuple(groups))


def _table6(s: Spec) -> Table:
    """A student trained for i words decoded for j words or a ratio; ΔR over the j-word teacher if searched."""
    groups = []
    for model, target in s.config["decode"].get("transfer", []):
        teacher = _teacher("test", target) if str(target) in map(str, s.lengths) else None
        label = f"{model} → {layout.target_label(str(target))}"
        groups.append(Group(None, teacher, tuple(
            Row(f"{label}, {m.short}", students(s.analysis_seeds, model, m.name, target), m.name)
            for m in (TRUNCATE, LENGTH_CONTROL))))
    return Table("table6", PROTOCOLS["test"], tuple(groups), times=False)


def _figures(s: Spec, table2: Table) -> list[Figure]:
    """Figures 3 and 4 and the budget figure (first length); per length: loss, summary lengths, source length."""
    first, decode = s.lengths[0], s.config["decode"]
    figures = []
    if fractions := s.config["train"].get("fractions"):
        figures.append(Figure("training-size", "training-size", first, tuple(
            Series(m.short, tuple((100 * f, students(s.seeds if f == 1.0 else s.analysis_seeds, first, m.name, first,
                                                     fraction=f)) for f in sorted(fractions) + [1.0]))
            for m in (TRUNCATE, LENGTH_CONTROL))))
    if beams := decode.get("beam_sweep"):
        figures.append(Figure("beam-size", "beam-size", first, tuple(
            Series(m.short, tuple((b, students(s.analysis_seeds, first, m.name, first, beam=b)) for b in sorted(beams)))
            for m in (LENGTH_CONTROL, BEAM)), timed=True))
    if budgets := decode.get("char_sweep"):
        figures.append(Figure("char-budget", "char-budget", first, (
            Series(CHAR_CONTROL.short, tuple((b, students([0], first, CHAR_CONTROL.name, layout.chars_target(b)))
                                             for b in sorted(budgets))),
            Series(LENGTH_CONTROL.short, ((None, students([0], first, LENGTH_CONTROL.name, first)),)))))
    for n in s.lengths:
        figures.append(Figure(layout.figure("loss", n), "loss", n,
                              history=f"{layout.student_dir(layout.model(n))}/history.json"))
        figures.append(Figure(layout.figure("lengths", n), "lengths", n, tuple(
            Series(m.name, ((None, students([0], n, m.name, n)),)) for m in (TRUNCATE, LENGTH_CONTROL))))
        figures.append(Figure(layout.figure("source-length", n), "source-length", n, (
            Series("search teacher", ((None, (layout.search("test", n),)),)),
            *(Series(m.label, ((None, students(s.seeds, n, m.name, n)),)) for m in (TRUNCATE, LENGTH_CONTROL)))))
    gigaword = s.config["data"].get("source") == "gigaword"
    for group in (g for g in table2.groups if not g.other):
        figures.append(Figure(layout.figure("quality-speed", group.key), "quality-speed", group.key, rows=group.rows,
                              quoted=PAPER_GIGAWORD.get(group.key, ()) if gigaword else ()))  # one data set a figure
    return figures
