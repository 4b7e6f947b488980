METRICS = f"{RESULTS}/metrics"


rule lead:
    input:
        f"{DATA}/test/article.txt",
    output:
        f"{BUILD}/baseline/test/lead-{{length}}.txt",
    log:
        f"logs/{PROFILE}/baseline/lead-{{length}}.log",
    benchmark:
        f"logs/{PROFILE}/benchmark/baseline/lead-{{length}}.tsv"
    conda:
        "../../envs/naus-cpu.yaml"
    threads: 1
    shell:
        "{NAUS} lead --input {input} --length {wildcards.length} --out {output} > {log} 2>&1"


rule evaluate_test:
    """Gigaword-style ROUGE F1 of any system's test output against the test titles."""
    input:
        hyp=f"{BUILD}/{{system}}.txt",
        ref=f"{DATA}/test/title.txt",
    output:
        f"{METRICS}/{{system}}.json",
    log:
        f"logs/{PROFILE}/evaluate/{{system}}.log",
    benchmark:
        f"logs/{PROFILE}/benchmark/evaluate/{{system}}.tsv"
    conda:
        "../../envs/naus-cpu.yaml"
    threads: 1
    shell:
        "{NAUS} evaluate --hyp {input.hyp} --ref {input.ref} --metric f1 --json --out {output} > {log} 2>&1"


if config["data"].get("published_dir"):

    rule published_reorder:
        """The NAUS authors' released test outputs, put back in test-set order for rescoring."""
        input:
            hyp=lambda w: str(data_dir() / config["data"]["published_dir"] / f"gigaword/{w.label}.txt"),
            index=lambda w: str(data_dir() / config["data"]["published_dir"] / "gigaword/line_to_test_index.txt"),
        output:
            f"{BUILD}/published/{{label}}.txt",
        log:
            f"logs/{PROFILE}/published/{{label}}.log",
        benchmark:
            f"logs/{PROFILE}/benchmark/published/{{label}}.tsv"
        conda:
            "../../envs/naus-cpu.yaml"
        threads: 1
        shell:
            "{NAUS} reorder --input {input.hyp} --index {input.index} --out {output} > {log} 2>&1"


rule stage_evaluate:
    """Every metric the report reads (a target for `dvc repro`; decoding runs as part of it)."""
    input:
        metric_files(),
