"""What each table and figure of a profile shows, declared once from its configuration: each row's label, its
outputs (one per seed) and its decoding method, each figure's series. The workflow builds exactly these outputs
(`workflow/rules/common.smk`) and the report draws exactly these rows and figures (`naus.report`), refusing one whose
input is missing. An output is a path under build/{profile}/ without `.txt`; its scores are the same stem under
results/{profile}/metrics/ (DUC2004's under its protocol's folder) with `.json`. Plain Python."""

from __future__ import annotations

from dataclasses import replace

from naus import NausError
from naus.pipeline import layout
from naus.architectures import ARCHITECTURES, TABLE4_ARCHS
from naus.methods import BEAM, CHAR_CONTROL, LENGTH_CONTROL, METHODS, SOURCE_ORDER, TRUNCATE
from naus.data.peers import DUC, GIGAWORD, PEERS
from naus.pipeline.declarations import PROTOCOLS, Figure, Group, OtherRun, Row, Series, Spec, Table
from naus.pipeline.quoted import PAPER_CHARS, PAPER_DUC, PAPER_GIGAWORD
from naus.settings import ALL_TITLES, LM_TITLES, UNSEARCHED, DataConfig

# The authors' released outputs (Gigaword at these lengths, DUC2004 at L = 13), rescored beside ours.
PUBLISHED_LENGTHS, PUBLISHED_DUC_LENGTH, PUBLISHED_KINDS = (8, 10), 13, ("length_control", "truncating")
AUTHORS = "the authors' NAUS"  # their length control's outputs, as a peer (`p vs the authors' NAUS`)
# The paper-shaped tables' students: the paper's method (one generation), and the last generation (beyond the paper)
PAPER_METHODS, BEYOND_METHODS = (TRUNCATE.name, LENGTH_CONTROL.name), (LENGTH_CONTROL.name, SOURCE_ORDER.name)


def students(seeds, length, method: str, target, arch: str = "naus", split: str = "test", fraction=None,
             beam=None, generation: int = 1) -> tuple[layout.Decoded, ...]:
    """One decoding per seed of a student (`layout.ENSEMBLE` among the seeds: its seeds as one model)."""
    return tuple(layout.Decoded(split, layout.model(length, arch, fraction, seed, generation), method, str(target),
                                beam) for seed in seeds)


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
                for x in (layout.Searched("test", n), layout.Decoded("test", m, method, str(n)))))
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
    return Row(label, (layout.Searched(split, length),), timed=True, main=True)


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
    teacher = Row(f"Search teacher, {run.label}", (layout.Searched(split, length),), main=run.duc)
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
            Series("search teacher", ((None, (layout.Searched("test", n),)),)),
            *(Series(m.label, ((None, students(s.seeds, n, m.name, n)),)) for m in (TRUNCATE, LENGTH_CONTROL)))))
    gigaword = s.config["data"].get("source") == "gigaword"
    for group in (g for g in table2.groups if not g.other):
        figures.append(Figure(layout.figure("quality-speed", group.key), "quality-speed", group.key, rows=group.rows,
                              quoted=PAPER_GIGAWORD.get(group.key, ()) if gigaword else ()))  # one data set a figure
    return figures
