rule train_lm:
    input:
        f"{DATA}/lm.txt",
    output:
        f"{BUILD}/lm/lm.bin",
    params:
        flags=flags(config["lm"]),
    log:
        f"logs/{PROFILE}/lm.log",
    benchmark:
        f"logs/{PROFILE}/benchmark/lm.tsv"
    conda:
        "../../envs/naus-cpu.yaml"
    shell:
        "python -m naus train-lm --corpus {input} {params.flags} --out {output} > {log} 2>&1"
