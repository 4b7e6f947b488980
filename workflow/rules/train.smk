rule distil:
    """The smaller MiniLM the frozen states come from (model.distilled_states), trained once on the pool's searched
    sources (no title), on one thread: the same bytes on any machine."""
    input:
        f"{BUILD}/{layout.STATES_SOURCES['pool']}",
    output:
        f"{BUILD}/{layout.DISTILLED_ENCODER}",
    log:
        f"{LOGS}/states/distil.log",
    benchmark:
        f"{LOGS}/benchmark/states/distil.tsv"
    conda:
        "../../envs/naus.yaml"
    threads: 1
    priority: STUDENT_CHAIN
    shell:
        "python -m naus --threads {threads} distil --input {input} --out {output} > {log} 2>&1"


rule encode_states:
    """A split's frozen MiniLM states (one vector per word): computed once, read by every student that learns on
    them (model.arch naus-copy), whatever its length, seed or share of the pool."""
    input:
        source=lambda w: f"{BUILD}/{layout.STATES_SOURCES[w.split]}",
        encoder=STATES_ENCODER,
    output:
        f"{BUILD}/{layout.frozen_states('{split}')}",
    log:
        f"{LOGS}/states/{{split}}.log",
    benchmark:
        f"{LOGS}/benchmark/states/{{split}}.tsv"
    conda:
        "../../envs/naus.yaml"
    threads: 1  # on one core it runs as soon as one is free: a job on every core waits for both, behind the rest
    priority: lambda w: chain_priority(w.split)
    params:
        encoder=lambda w, input: encoder_flag(input),
    shell:
        "python -m naus --threads {threads} encode-states --input {input.source} {params.encoder} --out {output} "
        "> {log} 2>&1"


rule train:
    """A student on the pool's search output for its length: NAUS per length and seed, on a fraction of
    the pool (Figure 3), or a Table 3 encoder-decoder (on a GPU where a cluster has one); a later generation on
    the previous one's length-control summaries (its `teacher`, naus.pipeline.plan). Students on frozen states: `train_on_states`."""
    wildcard_constraints:
        model=GPU_TRAINED,
    input:
        unpack(lambda w: {role: f"{BUILD}/{path}" for role, path in PLAN.student(w.model).inputs.items()}),
    output:
        best=f"{BUILD}/{layout.student_checkpoint('{model}')}",
        history=f"{BUILD}/{layout.student_dir('{model}')}/history.json",
        timing=f"{BUILD}/{layout.train_timing('{model}')}",
    params:
        flags=lambda w: train_flags(w.model),
        arch=lambda w: PLAN.student(w.model).arch,
        fraction=lambda w: PLAN.student(w.model).fraction,
        seed=lambda w: PLAN.student(w.model).seed,
        out=lambda w, output: os.path.dirname(output.best),
        states=lambda w, input: (
            f"--train-states {input.train_states} --dev-states {input.dev_states}"
            if "train_states" in input.keys()
            else ""
        ),
    log:
        f"{LOGS}/train/{{model}}.log",
    benchmark:
        f"{LOGS}/benchmark/train/{{model}}.tsv"
    conda:
        "../../envs/naus.yaml"
    threads: 1  # students train side by side: at these sizes that beats one student on every core (benchmarks/train_speed.py)
    resources:
        gpu=1,
    priority: STUDENT_CHAIN
    shell:
        "python -m naus --threads {threads} train --arch {params.arch} --train-source {input.train_source} "
        "--train-target {input.train_target} --dev-source {input.dev_source} --dev-target {input.dev_target} "
        "{params.states} {params.flags} --fraction {params.fraction} --seed {params.seed} --resume --restart --out {params.out} --timing {output.timing} "
        "> {log} 2>&1"


use rule train as train_on_states with:
    # a student on frozen MiniLM states: one CPU core, no GPU (a cluster's CPU partition)
    wildcard_constraints:
        model=CPU_TRAINED,
    resources:
        gpu=0,


rule ensemble:
    """The profile's seeds of a student as one model (`naus ensemble`: each slot's distribution the mean of theirs),
    whose length-control summaries of the pool and of dev the next generation learns from."""
    wildcard_constraints:
        model=layout.ENSEMBLE_PATTERN,
    input:
        lambda w: [f"{BUILD}/{layout.student_checkpoint(m)}" for m in PLAN.student(w.model).members],
    output:
        f"{BUILD}/{layout.student_checkpoint('{model}')}",
    log:
        f"{LOGS}/train/{{model}}.log",
    conda:
        "../../envs/naus-cpu.yaml"
    priority: STUDENT_CHAIN
    shell:
        "python -m naus ensemble --members {input} --out {output} > {log} 2>&1"


rule stage_states:
    """The frozen states every student that learns on them reads: the pool's and dev's it trains on, those of the
    splits it decodes (a target for `dvc repro`; none when no student is of such an architecture)."""
    input:
        sorted({path for model in students() for split in ("pool", "dev") for path in frozen_states(model, split)}),
        sorted({path for split, model in PLAN.decodings_by_student() for path in frozen_states(model, split)}),


rule stage_train:
    """Every student: one per length, the training-size sweep and Table 3's (a target for `dvc repro`)."""
    input:
        [f"{BUILD}/{layout.student_checkpoint(model)}" for model in students()],
