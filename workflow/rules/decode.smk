DECODE_CFG = config["decode"]


wildcard_constraints:
    model=r"((ar|nar|nar-ctc)-)?L\d+(-f0\.\d+)?",
    method="greedy|truncate|beam|length-control",
    target=r"\d+|r0\.\d+",
    beam=r"\d+",


def target_option(target: str) -> str:
    """`10` → a fixed length; `r0.5` → a ratio of the source length."""
    return f"--ratio {target[1:]}" if target.startswith("r") else f"--length {target}"


DECODE_COMMAND = (
    "{NAUS} --threads {threads} decode --checkpoint {input.checkpoint} --input {input.source} "
    "{params.target} --method {wildcards.method} --beam-size {params.beam} "
    "--batch-size {params.batch} --batch1-samples {params.batch1} --out {output.summaries} "
    "--timing {output.timing} > {log} 2>&1"
)
DECODE_INPUT = dict(checkpoint=f"{BUILD}/train/{{model}}/best.pt", source=f"{DATA}/test/article.txt")


rule decode:
    """Test-set summaries of model {model} for a target length or ratio, and their timing."""
    input:
        **DECODE_INPUT,
    output:
        summaries=f"{BUILD}/decode/test/{{model}}/{{method}}-{{target}}.txt",
        timing=f"{BUILD}/decode/test/{{model}}/{{method}}-{{target}}.timing.json",
    params:
        target=lambda w: target_option(w.target),
        beam=DECODE_CFG["beam_size"],
        batch=DECODE_CFG["batch_size"],
        batch1=DECODE_CFG.get("batch1_samples", 0),
    log:
        f"logs/{PROFILE}/decode/{{model}}-{{method}}-{{target}}.log",
    benchmark:
        f"logs/{PROFILE}/benchmark/decode/{{model}}-{{method}}-{{target}}.tsv"
    conda:
        "../../envs/naus.yaml"
    threads: 1
    resources:
        gpu=1,
    shell:
        DECODE_COMMAND


rule decode_beam:
    """The beam-size sweep of the paper's Figure 4 (length control and CTC beam search)."""
    input:
        **DECODE_INPUT,
    output:
        summaries=f"{BUILD}/decode/test/{{model}}/beams/{{method}}-{{target}}-b{{beam}}.txt",
        timing=f"{BUILD}/decode/test/{{model}}/beams/{{method}}-{{target}}-b{{beam}}.timing.json",
    params:
        target=lambda w: target_option(w.target),
        beam=lambda w: w.beam,
        batch=DECODE_CFG["batch_size"],
        batch1=0,
    log:
        f"logs/{PROFILE}/decode/{{model}}-{{method}}-{{target}}-b{{beam}}.log",
    benchmark:
        f"logs/{PROFILE}/benchmark/decode/{{model}}-{{method}}-{{target}}-b{{beam}}.tsv"
    conda:
        "../../envs/naus.yaml"
    threads: 1
    resources:
        gpu=1,
    shell:
        DECODE_COMMAND


rule stage_decode:
    """Every test-set output of the students that a table or figure needs (a target for `dvc repro`)."""
    input:
        [f"{BUILD}/{s}.txt" for s in systems() + duc_systems() if s.startswith("decode/")],
