DECODE_CFG = config["decode"]


wildcard_constraints:
    method="|".join(CTC_METHODS),
    target=r"\d+|r0\.\d+|c\d+",
    beam=r"\d+",


DECODE_COMMAND = (
    "python -m naus --threads {threads} decode --checkpoint {input.checkpoint} --input {input.source} "
    "{params.target} --method {wildcards.method} --beam-size {params.beam} "
    "--batch-size {params.batch} --batch1-samples {params.batch1} --out {output.summaries} "
    "--timing {output.timing} > {log} 2>&1"
)
# The sentences each split decodes: the Gigaword test set, or DUC2004 with digits masked as in training.
DECODE_SOURCE = {"test": f"{DATA}/test/article.txt", "duc": f"{SEARCH}/duc/source.txt"}
DECODE_INPUT = dict(checkpoint=f"{BUILD}/{layout.student_dir('{model}')}/best.pt", source=lambda w: DECODE_SOURCE[w.split])


rule decode:
    """Summaries of a split (test, or DUC2004 for Table 3) by model {model} for a target length or
    ratio, and their timing."""
    wildcard_constraints:
        split="test|duc",
    input:
        **DECODE_INPUT,
    output:
        summaries=f"{BUILD}/{layout.decoded('{split}', '{model}', '{method}', '{target}')}.txt",
        timing=f"{BUILD}/{layout.decoded('{split}', '{model}', '{method}', '{target}')}.timing.json",
    params:
        target=lambda w: layout.target_option(w.target),
        beam=DECODE_CFG["beam_size"],
        batch=DECODE_CFG["batch_size"],
        batch1=DECODE_CFG["batch1_samples"],
    log:
        f"logs/{PROFILE}/decode/{{split}}-{{model}}-{{method}}-{{target}}.log",
    benchmark:
        f"logs/{PROFILE}/benchmark/decode/{{split}}-{{model}}-{{method}}-{{target}}.tsv"
    conda:
        "../../envs/naus.yaml"
    resources:
        gpu=1,
    shell:
        DECODE_COMMAND


rule decode_beam:
    """The beam-size sweep of the paper's Figure 4 (length control and CTC beam search)."""
    input:
        checkpoint=DECODE_INPUT["checkpoint"],
        source=DECODE_SOURCE["test"],
    output:
        summaries=f"{BUILD}/{layout.decoded('test', '{model}', '{method}', '{target}', '{beam}')}.txt",
        timing=f"{BUILD}/{layout.decoded('test', '{model}', '{method}', '{target}', '{beam}')}.timing.json",
    params:
        target=lambda w: layout.target_option(w.target),
        beam=lambda w: w.beam,
        batch=DECODE_CFG["batch_size"],
        batch1=0,
    log:
        f"logs/{PROFILE}/decode/{{model}}-{{method}}-{{target}}-b{{beam}}.log",
    benchmark:
        f"logs/{PROFILE}/benchmark/decode/{{model}}-{{method}}-{{target}}-b{{beam}}.tsv"
    conda:
        "../../envs/naus.yaml"
    resources:
        gpu=1,
    shell:
        DECODE_COMMAND


rule stage_decode:
    """Every test-set output of the students that a table or figure needs (a target for `dvc repro`)."""
    input:
        [f"{BUILD}/{s}.txt" for s in systems() + duc_systems() if s.startswith("decode/")],
