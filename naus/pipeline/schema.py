"""The workflow's configuration schema, built here so that each default, bound, choice and help is
written once: `workflow/schemas/config.schema.yaml` holds only the workflow's own keys (what to run,
where the data is); every key that is a setting of `naus.settings` gets its type, default, range,
choices and description from the dataclass field, and the names a list may hold (methods,
architectures, peers, teachers) and the bounds shared with the command line come from their
registries as `$defs`. Plain Python (jsonschema only): the workflow validates with it, no rule
imports Snakemake's."""

from __future__ import annotations

import copy
import dataclasses
import typing
from pathlib import Path

from naus import NausError, settings
from naus.architectures import ARCHITECTURES, TABLE4_ARCHS
from naus.methods import word_methods
from naus.data.peers import PEERS

# The configuration sections whose keys are a settings dataclass's, and the fields of each that are the
# command line's alone: a student's seed comes from train.seeds, the device from the machine running it,
# min_length goes with a ratio, which a profile does not decode by; the source-order decoder's phrases, last word and
# adjacency are the library's defaults, chosen on dev (results/benchmarks/readability.json), as every profile decodes.
SECTIONS = {"data": settings.DataConfig, "lm": settings.LMConfig, "search": settings.SearchConfig,
            "model": settings.ModelConfig, "train": settings.TrainConfig, "decode": settings.DecodeConfig}
COMMAND_LINE_ONLY = {"train": {"seed", "device"}, "decode": {"min_length", "phrases", "last_word", "adjacency"}}

JSON_TYPES = {int: "integer", float: "number", str: "string", bool: "boolean"}


def field_schema(spec: dataclasses.Field, kind: type) -> dict:
    """A setting as JSON Schema: its type, range, choices, default and help."""
    meta = spec.metadata
    schema: dict = {"enum": list(meta["choices"])} if meta["choices"] else {"type": JSON_TYPES[kind]}
    if spec.default is None and "type" in schema:  # unset: the setting's help says what stands for it
        schema["type"] = [schema["type"], "null"]
    for keyword, key in (("minimum", "minimum"), ("maximum", "maximum"), ("exclusiveMinimum", "above"),
                         ("exclusiveMaximum", "below")):
        if meta[key] is not None:
            schema[keyword] = meta[key]
    if meta.get("pattern"):
        schema["pattern"] = f"^({meta['pattern']})$"
    return {**schema, "default": spec.default, "description": meta["help"]}


def section_properties(section: str) -> dict:
    """The schema of each setting a configuration section takes from its dataclass, in the field order."""
    kind = SECTIONS[section]
    hints = typing.get_type_hints(kind)
    properties = {}
    for spec in dataclasses.fields(kind):
        if "help" in spec.metadata and spec.name not in COMMAND_LINE_ONLY.get(section, ()):
            python_type = next(t for t in typing.get_args(hints[spec.name]) or (hints[spec.name],)
                               if t is not type(None))
            properties[spec.name] = field_schema(spec, python_type)
    return properties


def definitions() -> dict:
    """What the skeleton refers to by `$ref: "#/$defs/…"`: the registries' names and the shared bounds."""
    return {
        "length": {"type": "integer", **settings.LENGTH},
        "length_or_none": {"type": "integer", **settings.LENGTH, "minimum": 0},  # 0: none
        "beam_size": {"type": "integer", "minimum": 1, "maximum": settings.MAX_BEAM},
        "chars": {"type": "integer", **settings.CHARS},
        "chars_or_none": {"type": "integer", **settings.CHARS, "minimum": 0},
        "seeds": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": settings.MAX_SEED},
                  "minItems": 1, "maxItems": settings.MAX_SEEDS, "uniqueItems": True},
        "method": {"enum": word_methods()},
        "arch": {"enum": [name for name, arch in ARCHITECTURES.items() if arch.ctc]},
        "table4_arch": {"enum": list(TABLE4_ARCHS)},
        "peer": {"enum": sorted(PEERS)},
        "preset": {"enum": sorted(settings.TEACHER_PRESETS)},
        "embedder": {"enum": list(settings.EMBEDDERS)},
    }


def build(skeleton: dict) -> dict:
    """The whole schema: the skeleton with the settings' properties under its own and the `$defs` above."""
    schema = {**skeleton, "$defs": {**skeleton.get("$defs", {}), **definitions()}}
    schema["properties"] = dict(skeleton["properties"])
    for section in SECTIONS:
        body = schema["properties"][section]
        generated = section_properties(section)
        if overlap := set(generated) & set(body.get("properties", {})):
            raise NausError(f"config schema: section {section} writes the settings {sorted(overlap)} of "
                            f"naus.settings.{SECTIONS[section].__name__} again")
        own = {key: ({**spec, "properties": {k: {n: v for n, v in setting.items() if n != "default"}
                                             for k, setting in generated.items()}}
                     if spec.get("properties") == "settings" else spec)  # a sub-section of the same settings
               for key, spec in body.get("properties", {}).items()}
        schema["properties"][section] = {**body, "properties": {**generated, **own}}
    return schema


def validate(config: dict, schema: dict, set_default: bool) -> None:
    """Check a configuration (and with `set_default`, fill in each default it leaves out, as Snakemake's
    `validate` does); the first error in one line naming its key."""
    import jsonschema

    validator = jsonschema.Draft202012Validator
    # JSON Schema's integer takes 100.0; a rule's `range(...)` or a dataclass's check would then fail in a job
    validator = jsonschema.validators.extend(validator, type_checker=validator.TYPE_CHECKER.redefine(
        "integer", lambda checker, value: isinstance(value, int) and not isinstance(value, bool)))
    if set_default:
        check_properties = validator.VALIDATORS["properties"]

        def properties_with_defaults(checker, properties, instance, subschema):
            for key, spec in properties.items():
                if isinstance(instance, dict) and "default" in spec:
                    instance.setdefault(key, copy.deepcopy(spec["default"]))
            yield from check_properties(checker, properties, instance, subschema)

        validator = jsonschema.validators.extend(validator, {"properties": properties_with_defaults})
    error = jsonschema.exceptions.best_match(validator(schema).iter_errors(config))
    if error is not None:
        key = ".".join(str(part) for part in error.absolute_path)
        raise NausError(f"config key {key or '(top level)'}: {_as_text(error) or error.message}")


def _as_text(error) -> str | None:
    """A value that reads as the type asked for but arrived as text: Snakemake's --config passes the values nested
    in a mapping as text (`train='{max_steps: 500}'`). Say so, and how to pass it."""
    if error.validator != "type" or not isinstance(error.instance, str):
        return None
    import yaml

    try:
        parsed = yaml.safe_load(error.instance)
    except yaml.YAMLError:
        return None
    wanted = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
    kinds = {"integer": int, "number": (int, float), "boolean": bool, "array": list, "object": dict}
    if not any(isinstance(parsed, kinds.get(kind, ())) and not (kind != "boolean" and isinstance(parsed, bool))
               for kind in wanted):
        return None
    return (f"{error.instance!r} arrived as text, not {' or '.join(wanted)} (Snakemake's --config passes values "
            "nested in a mapping as text): give it in a configuration file instead (--configfile overlay.yaml)")


def check_sections(config: dict) -> None:
    """The rules between a section's keys (`d_model` a multiple of `n_heads`, …), checked by building each
    section's settings dataclass as a rule will: declared once, in its `__post_init__`."""
    required = {"model": {"vocab_size": 1}}
    for section, kind in SECTIONS.items():
        values = config.get(section, {})
        # the first generation's training its own settings over the section's (a warm-up within its shorter run)
        variants = [("", values)] + ([(".first_generation", {**values, **values["first_generation"]})]
                                     if section == "train" and values.get("first_generation") else [])
        for where, variant in variants:
            try:
                kind(**required.get(section, {}), **settings.options(kind, variant))
            except NausError as err:
                raise NausError(f"config section {section}{where}: {err}") from None


def check_lengths(config: dict) -> None:
    """The rules between sections: every length a table studies has search output to learn from, and Table 2
    has its data."""
    searched = config["search"]["lengths"]
    analysis = config.get("analysis", {}).get("lengths", [])
    if set(analysis) - set(searched):
        raise NausError(f"config key analysis.lengths {analysis}: every length needs search output, "
                        f"so it must be one of search.lengths {searched}")
    for key in ("transfer", "chars"):
        missing = sorted({model for model, _ in config["decode"].get(key, [])} - set(searched))
        if missing:
            raise NausError(f"config key decode.{key}: models of lengths {missing} have no search output to learn "
                            f"from; each model length must be one of search.lengths {searched}")
    duc_length = config.get("duc", {}).get("length")
    if duc_length and not config["data"].get("duc_dir"):
        raise NausError(f"config key duc.length {duc_length}: Table 2 needs data.duc_dir (the DUC2004 files)")


def resolve(config: dict, skeleton: dict) -> dict:
    """A configuration as the workflow runs it (the workflow, the lease plan and the tests resolve it so):
    its size and numbers checked, validated as written (a preset is a name), its named teacher's keys under
    its own, the defaults filled in, the rules between keys and between sections checked. In place; returned."""
    schema = build(skeleton)
    settings.check_plain(config)
    validate(config, schema, set_default=False)
    config["search"] = settings.with_preset(config.get("search", {}))
    validate(config, schema, set_default=True)
    check_sections(config)
    check_lengths(config)
    return config


def check_unique_keys(text: str, name: str) -> None:
    """A profile's YAML with no key given twice in one mapping: YAML loaders keep the last one silently, so a
    section written twice would lose the first's settings without a word."""
    import yaml

    class Strict(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            seen = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                if key in seen:
                    raise NausError(f"{name}: line {key_node.start_mark.line + 1}: key {key!r} given twice")
                seen.add(key)
            return super().construct_mapping(node, deep)

    try:
        yaml.load(text, Loader=Strict)  # noqa: S506 (a SafeLoader)
    except yaml.YAMLError as err:
        raise NausError(f"{name}: not valid YAML ({str(err).splitlines()[0]})") from None


SCHEMA_FILE = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"


def resolved(config: dict, name: str = "the configuration") -> dict:
    """A configuration resolved as the workflow resolves it (`resolve`), each refusal one line naming `name`."""
    import yaml

    if not isinstance(config, dict):
        raise NausError(f"{name}: a configuration is a mapping of sections, not {type(config).__name__}")
    try:
        return resolve(config, yaml.safe_load(SCHEMA_FILE.read_text(encoding="utf-8")))
    except NausError as err:
        raise NausError(f"{name}: {err}") from None


def load_profile(profile: str) -> dict:
    """A profile's configuration, resolved: config/PROFILE.yaml, or the file named; a file that cannot be read, is
    not YAML, gives a key twice or breaks the schema is refused in one line naming it."""
    import yaml

    path = Path(profile) if Path(profile).suffix else Path("config") / f"{profile}.yaml"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise NausError(f"{path}: cannot read the profile's configuration ({err})") from None
    check_unique_keys(text, str(path))
    return resolved(yaml.safe_load(text) or {}, str(path))
