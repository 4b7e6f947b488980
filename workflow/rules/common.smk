import os
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config/demo.yaml"


localrules:
    all,
    stage_search,
    stage_train,
    stage_decode,
    stage_evaluate,


validate(config, "../schemas/config.schema.yaml")

# The naus command line, importable from this checkout inside any environment (venv or conda).
NAUS = f"PYTHONPATH={workflow.basedir}${{PYTHONPATH:+:$PYTHONPATH}} python -m naus"

PROFILE = config["profile"]
BUILD = f"build/{PROFILE}"
RESULTS = f"results/{PROFILE}"
DATA = f"{BUILD}/data"


def data_dir() -> Path:
    """The external data directory: config key data.data_dir, else the environment variable NAUS_DATA."""
    value = config["data"].get("data_dir") or os.environ.get("NAUS_DATA")
    if not value:
        raise WorkflowError(
            f"profile {PROFILE}: set config key data.data_dir or the environment variable NAUS_DATA "
            "to the directory holding gigaword/ and duc2004/"
        )
    return Path(value)


PUBLISHED_LABELS = [
    f"HC_{n}_{kind}" for n in config["search"]["lengths"] if n in (8, 10) for kind in ("truncating", "length_control")
] if config["data"].get("published_dir") else []


ANALYSIS_LENGTHS = config.get("analysis", {}).get("lengths", [])
if set(ANALYSIS_LENGTHS) - set(config["search"]["lengths"]):
    raise WorkflowError(
        f"config key analysis.lengths {ANALYSIS_LENGTHS}: every length needs search output, "
        f"so it must be one of search.lengths {config['search']['lengths']}"
    )
DUC_LENGTH = config.get("duc", {}).get("length")
if DUC_LENGTH and not config["data"].get("duc_dir"):
    raise WorkflowError(f"config key duc.length {DUC_LENGTH}: Table 3 needs data.duc_dir (the DUC2004 files)")

# Table 4: each encoder-decoder student and the decoding methods it supports.
ARCHITECTURES = {"ar": ("greedy", "beam"), "nar": ("greedy",), "nar-ctc": ("truncate", "length-control")}


def systems() -> list[str]:
    """Every evaluated output, as a path under build/{profile}/ without `.txt`."""
    lengths, decode = config["search"]["lengths"], config["decode"]
    first = lengths[0]
    systems = [f"baseline/test/lead-{n}" for n in lengths] + [f"search/test/L{n}" for n in lengths]
    systems += [f"decode/test/L{n}/{method}-{n}" for n in lengths for method in decode["methods"]]
    systems += [f"published/{label}" for label in PUBLISHED_LABELS]
    systems += [
        f"decode/test/L{first}-f{f}/{method}-{first}"
        for f in config["train"].get("fractions", []) for method in ("truncate", "length-control")
    ]
    systems += [
        f"decode/test/L{first}/beams/{method}-{first}-b{b}"
        for b in decode.get("beam_sweep", []) for method in ("length-control", "beam")
    ]
    systems += [
        f"decode/test/L{model}/{method}-{target}"
        for model, target in decode.get("transfer", []) if model in lengths for method in ("truncate", "length-control")
    ]
    systems += [
        f"decode/test/{arch}-L{n}/{method}-{n}"
        for n in ANALYSIS_LENGTHS for arch, methods in ARCHITECTURES.items() for method in methods
    ]
    return list(dict.fromkeys(systems))


def duc_systems() -> list[str]:
    """Table 3's outputs on DUC2004, as paths under build/{profile}/ without `.txt`."""
    if not DUC_LENGTH:
        return []
    n = DUC_LENGTH
    systems = ["baseline/duc/lead", f"search/duc/L{n}"]
    systems += [f"decode/duc/L{n}/{method}-{n}" for method in config["decode"]["methods"]]
    if config["data"].get("published_dir") and n == 13:
        systems += [f"published/duc/HC_13_{kind}" for kind in ("truncating", "length_control")]
    return systems


def metric_files() -> list[str]:
    """The metrics every table and figure needs."""
    return [f"{RESULTS}/metrics/{s}.json" for s in systems()] + [
        f"{RESULTS}/metrics/duc2004/{s}.json" for s in duc_systems()
    ]


def all_targets() -> list[str]:
    return [f"{DATA}/stats.json", f"{RESULTS}/README.md"] + metric_files()
