rule train_lm:
    input:
        f"{BUILD}/{layout.LM_CORPUS}",
    output:
        f"{BUILD}/{layout.LM_MODEL}",
    params:
        flags=flags(config["lm"]),
    log:
        f"{LOGS}/lm.log",
    benchmark:
        f"{LOGS}/benchmark/lm.tsv"
    conda:
        "../../envs/naus-cpu.yaml"
    shell:
        "python -m naus train-lm --corpus {input} {params.flags} --out {output} > {log} 2>&1"


rule stage_lm:
    """The language model (a target for `dvc repro`: its command names no path)."""
    input:
        f"{BUILD}/{layout.LM_MODEL}",
