DECODE_CFG = config["decode"]


wildcard_constraints:
    method=layout.METHOD_PATTERN,
    target=layout.TARGET_PATTERN,
    beam=r"\d+",


DECODE = (
    "python -m naus --threads {threads} decode --checkpoint {input.checkpoint} --input {input.source} "
    "{params.target} --method {wildcards.method} --beam-size {params.beam} --batch-size {params.batch} "
)
# Beside the summaries, what made them (the input's and the student's sha256): `naus import-run` checks
# a GPU run's decodings against this machine's files with it.
DECODE_COMMAND = f"{DECODE}--out {{output.summaries}} --provenance {{output.provenance}} > {{log}} 2>&1"
TIME_COMMAND = (
    f"python -m naus --threads {{threads}} time --build {BUILD} --beam-size {{params.beam}} --batch-size {{params.batch}} "
    "--batch1-samples {params.batch1} --timing-passes {params.passes} {params.stems} > {log} 2>&1"
)
DECODE_SOURCE = {split: f"{BUILD}/{path}" for split, path in layout.DECODE_SOURCES.items()}
DECODE_INPUT = {
    "checkpoint": f"{BUILD}/{layout.student_dir('{model}')}/best.pt",
    "source": lambda w: DECODE_SOURCE[w.split],
}
DECODE_PARAMS = dict(
    target=lambda w: layout.target_option(w.target), beam=DECODE_CFG["beam_size"], batch=DECODE_CFG["batch_size"]
)
BEAM_PARAMS = {**DECODE_PARAMS, "beam": lambda w: w.beam}
STEM = layout.decoded("{split}", "{model}", "{method}", "{target}")
BEAM_STEM = layout.decoded("test", "{model}", "{method}", "{target}", "{beam}")


rule decode:
    """Summaries of a split (test, DUC2004 for Table 3, or dev to choose a recipe) by model {model} for a
    target length or ratio."""
    wildcard_constraints:
        split="|".join(layout.DECODE_SOURCES),
    input:
        **DECODE_INPUT,
    output:
        summaries=f"{BUILD}/{STEM}.txt",
        provenance=f"{BUILD}/{STEM}.provenance.json",
    params:
        **DECODE_PARAMS,
    log:
        f"{LOGS}/decode/{{split}}-{{model}}-{{method}}-{{target}}.log",
    benchmark:
        f"{LOGS}/benchmark/decode/{{split}}-{{model}}-{{method}}-{{target}}.tsv"
    conda:
        "../../envs/naus.yaml"
    resources:
        gpu=1,
    shell:
        DECODE_COMMAND


rule time_decode:
    """The times the tables and figures show: their decodings again, one after another in one process (a process
    started per decoding took longer than the decoding), summaries discarded, at the batch size and at batch 1.
    It holds every core, so nothing runs beside it: the times are what a user with the machine to themselves
    would measure."""
    input:
        **timed_inputs(SPEC.timed()),
    output:
        [f"{BUILD}/{stem}.timing.json" for stem in SPEC.timed()],
    params:
        stems=SPEC.timed(),
        beam=DECODE_CFG["beam_size"],
        batch=DECODE_CFG["batch_size"],
        batch1=DECODE_CFG["batch1_samples"],
        passes=DECODE_CFG["timing_passes"],
    log:
        f"{LOGS}/time/decodings.log",
    benchmark:
        f"{LOGS}/benchmark/time/decodings.tsv"
    conda:
        "../../envs/naus.yaml"
    threads: workflow.cores
    resources:
        gpu=1,
    shell:
        TIME_COMMAND


rule decode_beam:
    """The beam-size sweep of the paper's Figure 4 (length control and CTC beam search)."""
    input:
        checkpoint=DECODE_INPUT["checkpoint"],
        source=DECODE_SOURCE["test"],
    output:
        summaries=f"{BUILD}/{BEAM_STEM}.txt",
        provenance=f"{BUILD}/{BEAM_STEM}.provenance.json",
    params:
        **BEAM_PARAMS,
    log:
        f"{LOGS}/decode/{{model}}-{{method}}-{{target}}-b{{beam}}.log",
    benchmark:
        f"{LOGS}/benchmark/decode/{{model}}-{{method}}-{{target}}-b{{beam}}.tsv"
    conda:
        "../../envs/naus.yaml"
    resources:
        gpu=1,
    shell:
        DECODE_COMMAND


rule stage_decode:
    """Every test-set output of the students that a table or figure needs, and the times the tables show
    (a target for `dvc repro`)."""
    input:
        [f"{BUILD}/{s}.txt" for s in systems() + duc_systems() if s.startswith("decode/")],
        [f"{BUILD}/{s}.timing.json" for s in SPEC.timed()],
