"""The jobs a profile's resolved configuration asks for, each with its output path and its settings: every student
(`Student`: trained, or its seeds as one model) and every decoding the tables and figures read (`layout.Decoded`),
by name and by path. The workflow's rules and the command lines they run look a job up here by the path Snakemake
asks for, instead of taking its name apart. Plain Python."""

from __future__ import annotations

from dataclasses import dataclass

from naus.architectures import ARCHITECTURES
from naus.pipeline import layout, tables
from naus.pipeline.declarations import Spec


@dataclass(frozen=True)
class Student:
    """A student the workflow trains (or, `ensemble`, assembles from its seeds) and what its `naus train` is given."""

    name: str  # its folder under train/ (`layout.model`)
    arch: str  # its architecture: its name's (`ar-L10`), the profile's own (config key model.arch) for `L10`
    length: int  # the search output's length it learns from
    fraction: float  # of the pool's pairs it trains on
    seed: int
    generation: int  # 1: it learns from the search; n: from the length-control summaries of generation n - 1
    ensemble: bool  # the profile's seeds of that student as one model (`naus ensemble`)
    members: tuple[str, ...]  # an ensemble's students, one per seed
    teacher: str | None  # the model whose length-control summaries a later generation learns from
    settings: dict  # the training section as it trains with it (`train_settings`)

    @property
    def frozen(self) -> bool:
        """It learns on (and decodes from) frozen MiniLM states."""
        return ARCHITECTURES[self.arch].frozen

    @property
    def inputs(self) -> dict[str, str]:
        """What it learns from, by its `naus train` option (`layout.train_inputs`)."""
        return layout.train_inputs(self.length, self.frozen, self.teacher)


@dataclass(frozen=True)
class Plan:
    spec: Spec  # the tables and figures, whose outputs these jobs make (and the configuration: `spec.config`)
    students: dict[str, Student]  # every student the tables read, with each ensemble's seeds and each teacher
    decodings: dict[str, layout.Decoded]  # every decoding the tables read, by its stem

    def student(self, name: str) -> Student:
        """A planned student, or one a user asks for by its name (a dev decoding's, from the command line)."""
        return self.students.get(name) or student(name, self.spec.config)

    def decodings_by_student(self) -> dict[tuple[str, str], list[layout.Decoded]]:
        """The planned decodings by split and student: each student's decodings of a split are made in one process."""
        grouped: dict[tuple[str, str], list[layout.Decoded]] = {}
        for decoding in self.decodings.values():
            grouped.setdefault((decoding.split, decoding.model), []).append(decoding)
        return grouped


def train_settings(train: dict, name: str, rates: dict | None = None) -> dict:
    """The training section as student `name` trains with it: a first-generation student's own settings
    (`train.first_generation`: the analyses' students, and those whose labels the next generation learns from)
    over the section's, and a Table 3 architecture's learning rate chosen on dev (`rates`: config key analysis.lr)."""
    student = layout.parse_model(name)
    settings = {**train, **(train.get("first_generation") or {})} if student.generation == 1 else train
    return {**settings, "lr": rates[student.arch]} if rates and student.arch in rates else settings


def student(name: str, config: dict) -> Student:
    """Student `name` as the configuration trains it."""
    named = layout.parse_model(name)
    seeds = config["train"]["seeds"]
    members = tuple(layout.model(named.length, named.arch, named.fraction, seed, named.generation) for seed in seeds)
    teacher = None if named.generation == 1 else layout.model(named.length, named.arch, named.fraction,
                                                               layout.ENSEMBLE, named.generation - 1)
    return Student(name, config["model"]["arch"] if named.arch == "naus" else named.arch, named.length,
                   named.fraction, named.seed, named.generation, named.ensemble, members if named.ensemble else (),
                   teacher, train_settings(config["train"], name, (config.get("analysis") or {}).get("lr")))


def plan(config: dict) -> Plan:
    """Every job a resolved configuration asks for: the tables' decodings, their students, and the students those
    are made of (an ensemble's seeds; a later generation's teacher, and so on back to the first)."""
    spec = tables.spec(config)
    students: dict[str, Student] = {}
    waiting = spec.students()
    while waiting:
        name = waiting.pop(0)
        if name not in students:
            students[name] = made = student(name, config)
            waiting += [*made.members, *([made.teacher] if made.teacher else [])]
    return Plan(spec, students, spec.decodings())
