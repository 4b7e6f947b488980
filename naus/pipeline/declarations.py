"""What a profile's tables and figures are made of, as `naus.pipeline.tables` declares them: a row's outputs (one per
seed), a table's groups, a figure's series, the protocol a collection is scored by, and the whole declaration (`Spec`),
which knows every output it reads and every student's decoding behind them (the workflow's decoding jobs, looked up by
path). Plain Python."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from naus.pipeline import layout
from naus.pipeline.quoted import PAPER_SHOWN, Quoted
from naus.settings import DecodeConfig


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


Job = layout.Decoded | layout.Searched  # an output the workflow makes, as what its path is made of


def _outputs(given) -> tuple[tuple[str, ...], tuple[Job, ...]]:
    """Outputs given as paths or as jobs (a student's decoding, a search): their stems, and the jobs among them."""
    return tuple(o if isinstance(o, str) else o.stem for o in given), tuple(o for o in given if not isinstance(o, str))


@dataclass(frozen=True)
class Row:
    label: str
    stems: tuple[str, ...]  # one output per seed (given as jobs: their stems, the jobs kept in `jobs`)
    method: str | None = None  # a student's decoding method; None: Lead, the teacher, a published output
    timed: bool = False  # the table shows its time (its first seed's `.timing.json`; the teacher's search time)
    peer: str | None = None  # a peer's label (`naus.data.peers`, AUTHORS): ours of L words get a p against it
    over: int | None = None  # a budget of words its outputs do not keep: its label gives the share longer
    main: bool = False  # shown in the paper-shaped table (every row: its supplementary `-full` table)
    jobs: tuple[Job, ...] = ()  # what makes its outputs (none for a released one, Lead's, a peer's)

    def __post_init__(self) -> None:
        stems, jobs = _outputs(self.stems)
        object.__setattr__(self, "stems", stems)
        object.__setattr__(self, "jobs", jobs or self.jobs)


@dataclass(frozen=True)
class Group:
    """Rows scored against one teacher (ΔR): a length of Table 1 or 3, Table 2, a transfer of Table 7."""

    key: int | None  # the L column (Tables 1 and 3)
    teacher: Row | None  # ΔR's reference (None: no teacher for that target)
    rows: tuple[Row, ...]  # shown in this order (the teacher among them where the table shows it)
    other: OtherRun | None = None  # an earlier run whose metrics its rows read (never paired with this run's here)
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
    points: tuple[tuple[float | None, tuple[str, ...]], ...]  # (x, one output per seed), as a Row's stems
    jobs: tuple[Job, ...] = ()

    def __post_init__(self) -> None:
        points = [(x, *_outputs(outputs)) for x, outputs in self.points]
        object.__setattr__(self, "points", tuple((x, stems) for x, stems, _ in points))
        object.__setattr__(self, "jobs", tuple(job for *_, made in points for job in made) or self.jobs)


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
    scored: tuple[str, ...] = ()  # as a Row's stems
    scored_jobs: tuple[Job, ...] = ()

    def __post_init__(self) -> None:
        scored, jobs = _outputs(self.scored)
        object.__setattr__(self, "scored", scored)
        object.__setattr__(self, "scored_jobs", jobs or self.scored_jobs)

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

    def decodings(self) -> dict[str, layout.Decoded]:
        """Every student's decoding a table or figure reads, by its stem, in `stems`' order: the workflow's decoding
        jobs, looked up by path."""
        rows = [row for t in self.tables for g in t.groups if not g.other
                for row in ((g.teacher,) if g.teacher else ()) + g.rows]
        made = {job.stem: job for job in (*self.scored_jobs, *(job for row in rows for job in row.jobs),
                                          *(job for f in self.figures for series in f.series for job in series.jobs))
                if isinstance(job, layout.Decoded)}
        return {stem: made[stem] for split in ("test", "duc") for stem in self.stems(split) if stem in made}

    def students(self) -> list[str]:
        """Every student a table or figure decodes with, and those shipped, once each."""
        return list(dict.fromkeys([*(d.model for d in self.decodings().values()), *self.shipped]))

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
