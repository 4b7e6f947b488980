DECODE_CFG = config["decode"]
LIBRARY_DECODING = library_decoding()


wildcard_constraints:
    method=layout.METHOD_PATTERN,
    target=layout.TARGET_PATTERN,


DECODE_SOURCE = {split: f"{BUILD}/{path}" for split, path in layout.DECODE_SOURCES.items()}
DECODE_INPUT = {
    "checkpoint": f"{BUILD}/{layout.student_checkpoint('{model}')}",
    "source": lambda w: DECODE_SOURCE[w.split],
    "states": lambda w: frozen_states(w.model, w.split),
}
DECODE_PARAMS = dict(
    target=lambda w: layout.target_option(w.target),
    beam=DECODE_CFG["beam_size"],
    batch=DECODE_CFG["batch_size"],
    library=LIBRARY_DECODING,
)
STEM = layout.decoded("{split}", "{model}", "{method}", "{target}")


# The decodings the tables and figures read, by split and student: each student's are made in one process;
# those whose time they show, timed in one job, and in that job the searches whose time they show.
PLANNED, TIMED = PLAN.decodings_by_student(), timed_decodings(SPEC.timed())
TIME_LOG = f"{LOGS}/time/decodings.log"
TIMED_TEACHERS = timed_teachers()


rule decode_student:
    """Every decoding of split {split} by student {model} that a table or figure reads, one after another in one
    process (a process started per decoding spent longer starting Python, PyTorch and numba than decoding); a
    student on frozen states: `decode_student_on_states`."""
    wildcard_constraints:
        split="test|duc",
        model=GPU_STUDENTS,
    input:
        **DECODE_INPUT,
    output:
        temp(f"{BUILD}/{layout.decoded_bundle('{split}', '{model}')}"),
    params:
        decodings=lambda w: " ".join(f"--decoding {decoding_args(d)}" for d in PLANNED[(w.split, w.model)]),
        batch=DECODE_CFG["batch_size"],
        library=LIBRARY_DECODING,
        states=lambda w, input: f"--states {input.states}" if input.states else "",
    log:
        f"{LOGS}/decode/{{split}}-{{model}}.log",
    benchmark:
        f"{LOGS}/benchmark/decode/{{split}}-{{model}}.tsv"
    conda:
        "../../envs/naus.yaml"
    resources:
        gpu=1,
    shell:
        "python -m naus --threads {threads} decode-all --checkpoint {input.checkpoint} --source {input.source} "
        "{params.states} --batch-size {params.batch} {params.library} {params.decodings} --out {output} > {log} 2>&1"


use rule decode_student as decode_student_on_states with:
    # a student on frozen states decodes from them on a CPU core (a cluster's CPU partition)
    wildcard_constraints:
        split="test|duc",
        model=CPU_STUDENTS,
    resources:
        gpu=0,


rule decoding:
    """A decoding a table or figure reads, written out of its student's `decode_student` file with what made it
    (the input's and the student's sha256: `python -m scripts.lease import-run` checks a GPU run's decodings against this machine's
    files with it)."""
    wildcard_constraints:
        stem="|".join(re.escape(stem) for stem in PLAN.decodings),
    input:
        lambda w: bundle_of(w.stem),
    output:
        summaries=f"{BUILD}/{{stem}}.txt",
        provenance=f"{BUILD}/{{stem}}.provenance.json",
    log:
        f"{LOGS}/decode/{{stem}}.log",
    conda:
        "../../envs/naus-cpu.yaml"
    priority: BOOKKEEPING
    shell:
        "python -m naus unbundle --bundle {input} --stem {wildcards.stem} --out {output.summaries} "
        "--provenance {output.provenance} > {log} 2>&1"


rule decode:
    """Any other decoding of a split (the dev split's, to choose a recipe) by model {model} for a target length or
    ratio, in a process of its own; by a student on frozen states: `decode_on_states`."""
    wildcard_constraints:
        split="|".join(layout.DECODE_SOURCES),
        model=GPU_STUDENTS,
    input:
        **DECODE_INPUT,
    output:
        summaries=f"{BUILD}/{STEM}.txt",
        provenance=f"{BUILD}/{STEM}.provenance.json",
    params:
        **DECODE_PARAMS,
        states=lambda w, input: f"--states {input.states}" if input.states else "",
    log:
        f"{LOGS}/decode/{{split}}-{{model}}-{{method}}-{{target}}.log",
    benchmark:
        f"{LOGS}/benchmark/decode/{{split}}-{{model}}-{{method}}-{{target}}.tsv"
    conda:
        "../../envs/naus.yaml"
    resources:
        gpu=1,
    priority: lambda w: chain_priority(w.split)
    shell:
        "python -m naus --threads {threads} decode --checkpoint {input.checkpoint} --input {input.source} "
        "{params.states} {params.target} --method {wildcards.method} --beam-size {params.beam} --batch-size {params.batch} "
        "{params.library} --out {output.summaries} --provenance {output.provenance} > {log} 2>&1"


ruleorder: decoding > decode
ruleorder: decoding > decode_on_states


use rule decode as decode_on_states with:
    # a student on frozen states decodes from them on a CPU core (a cluster's CPU partition)
    wildcard_constraints:
        split="|".join(layout.DECODE_SOURCES),
        model=CPU_STUDENTS,
    resources:
        gpu=0,


rule time_decode:
    """The times the tables and figures show: their decodings again, one after another in one process (a process
    started per decoding took longer than the decoding), summaries discarded, at the batch size and at batch 1;
    then the searches they show on the first test sentences, one thread (`teacher_timings`): the speedups divide
    times of one job.
    It holds every core, so nothing runs beside it: the times are what a user with the machine to themselves
    would measure."""
    input:
        **timed_inputs(TIMED),
        encoder=STATES_ENCODER,
        teacher_sources=sorted({f"{BUILD}/{layout.search_source(split)}" for split, _ in TIMED_TEACHERS}),
        lm=f"{BUILD}/{layout.LM_MODEL}",
        static=STATIC_TABLE,
        onnx=[ONNX_MODEL] if USE_ONNX and TIMED_TEACHERS else [],
        estimates=[ESTIMATE.format(length=length) for _, length in TIMED_TEACHERS] if ESTIMATE else [],
    output:
        [timed["out"] for timed in TIMED],
        [
            f"{BUILD}/{layout.teacher_time(split, length)}.{suffix}"
            for split, length in TIMED_TEACHERS
            for suffix in ("json", "jsonl")
        ],
    params:
        encoder=lambda w, input: encoder_flag(input),
        decodings=" ".join(
            f"--decoding {decoding_args(t['decoding'])} {t['checkpoint']} {t['source']} {t['out']} {' '.join(t['states'])}"
            for t in TIMED
        ),
        batch=DECODE_CFG["batch_size"],
        batch1=DECODE_CFG["batch1_samples"],
        passes=DECODE_CFG["timing_passes"],
        library=LIBRARY_DECODING,
        teachers=teacher_timings,
    log:
        TIME_LOG,
    benchmark:
        f"{LOGS}/benchmark/time/decodings.tsv"
    conda:
        "../../envs/naus.yaml"
    threads: workflow.cores
    resources:
        gpu=1,
    shell:
        "python -m naus --threads {threads} time --batch-size {params.batch} "
        "--batch1-samples {params.batch1} --timing-passes {params.passes} {params.library} {params.encoder} "
        "{params.decodings} "
        "> {log} 2>&1{params.teachers}"


rule stage_decode:
    """Every test-set output of the students that a table or figure needs, and the times the tables show
    (a target for `dvc repro`)."""
    input:
        [f"{BUILD}/{s}.txt" for s in systems() + duc_systems() if s.startswith("decode/")],
        [f"{BUILD}/{s}.timing.json" for s in SPEC.timed()],
