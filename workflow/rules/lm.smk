rule train_lm:
    input:
        f"{DATA}/lm.txt",
    output:
        f"{BUILD}/lm/lm.bin",
    params:
        cfg=config["lm"],
    log:
        f"logs/{PROFILE}/lm.log",
    benchmark:
        f"logs/{PROFILE}/benchmark/lm.tsv"
    conda:
        "../../envs/naus-cpu.yaml"
    threads: 1
    shell:
        "{NAUS} train-lm --corpus {input} --order {params.cfg[order]} --memory {params.cfg[memory]} "
        "--out {output} > {log} 2>&1"
