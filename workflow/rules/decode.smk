DECODE_CFG = config["decode"]


wildcard_constraints:
    method="greedy|truncate|beam|length-control",
    target=r"\d+|r0\.\d+",


def target_option(target: str) -> str:
    """`10` → a fixed length; `r0.5` → a ratio of the source length."""
    return f"--ratio {target[1:]}" if target.startswith("r") else f"--length {target}"


rule decode:
    input:
        checkpoint=f"{BUILD}/train/L{{model}}/best.pt",
        source=f"{DATA}/test/article.txt",
    output:
        summaries=f"{BUILD}/decode/test/L{{model}}/{{method}}-{{target}}.txt",
        timing=f"{BUILD}/decode/test/L{{model}}/{{method}}-{{target}}.timing.json",
    params:
        cfg={k: DECODE_CFG[k] for k in ("beam_size", "batch_size")},
        target=lambda w: target_option(w.target),
    log:
        f"logs/{PROFILE}/decode/L{{model}}-{{method}}-{{target}}.log",
    benchmark:
        f"benchmarks/{PROFILE}/decode/L{{model}}-{{method}}-{{target}}.tsv"
    threads: 1
    resources:
        gpu=1,
    shell:
        "naus --threads {threads} decode --checkpoint {input.checkpoint} --input {input.source} "
        "{params.target} --method {wildcards.method} --beam-size {params.cfg[beam_size]} "
        "--batch-size {params.cfg[batch_size]} --out {output.summaries} --timing {output.timing} > {log} 2>&1"
