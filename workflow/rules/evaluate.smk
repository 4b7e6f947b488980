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
    wildcard_constraints:
        system=r"(?!duc2004/).+",
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
        wildcard_constraints:
            label=r"[^/]+",
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


if DUC_LENGTH:

    rule duc_article:
        """DUC2004 inputs with digits as #, the convention the LM and the students were trained in."""
        input:
            f"{DATA}/duc2004/input.txt",
        output:
            f"{BUILD}/search/duc/source.txt",
        log:
            f"logs/{PROFILE}/duc/article.log",
        benchmark:
            f"logs/{PROFILE}/benchmark/duc/article.tsv"
        conda:
            "../../envs/naus-cpu.yaml"
        threads: 1
        shell:
            "{NAUS} digits --input {input} --out {output} > {log} 2>&1"

    rule duc_lead:
        """The DUC2004 Lead baseline: the input itself, cut to 75 bytes by the evaluation."""
        input:
            f"{DATA}/duc2004/input.txt",
        output:
            f"{BUILD}/baseline/duc/lead.txt",
        log:
            f"logs/{PROFILE}/duc/lead.log",
        benchmark:
            f"logs/{PROFILE}/benchmark/duc/lead.tsv"
        conda:
            "../../envs/naus-cpu.yaml"
        threads: 1
        shell:
            "{NAUS} head --input {input} --lines 0 --out {output} > {log} 2>&1"

    rule decode_duc:
        """DUC2004 summaries of the L={DUC_LENGTH} student, and their timing."""
        input:
            checkpoint=f"{BUILD}/train/{{model}}/best.pt",
            source=f"{BUILD}/search/duc/source.txt",
        output:
            summaries=f"{BUILD}/decode/duc/{{model}}/{{method}}-{{target}}.txt",
            timing=f"{BUILD}/decode/duc/{{model}}/{{method}}-{{target}}.timing.json",
        params:
            target=lambda w: target_option(w.target),
            beam=DECODE_CFG["beam_size"],
            batch=DECODE_CFG["batch_size"],
            batch1=DECODE_CFG.get("batch1_samples", 0),
        log:
            f"logs/{PROFILE}/decode/duc-{{model}}-{{method}}-{{target}}.log",
        benchmark:
            f"logs/{PROFILE}/benchmark/decode/duc-{{model}}-{{method}}-{{target}}.tsv"
        conda:
            "../../envs/naus.yaml"
        threads: 1
        resources:
            gpu=1,
        shell:
            DECODE_COMMAND

    rule duc_restore:
        """Masked digits (#) back to the input's digits, so outputs compare with DUC2004's references."""
        input:
            hyp=f"{BUILD}/{{system}}.txt",
            source=f"{DATA}/duc2004/input.txt",
        output:
            f"{BUILD}/duc2004/{{system}}.txt",
        log:
            f"logs/{PROFILE}/duc/{{system}}-restore.log",
        benchmark:
            f"logs/{PROFILE}/benchmark/duc/{{system}}-restore.tsv"
        conda:
            "../../envs/naus-cpu.yaml"
        threads: 1
        shell:
            "{NAUS} digits --input {input.hyp} --restore-from {input.source} --out {output} > {log} 2>&1"

    rule evaluate_duc:
        """DUC2004 ROUGE recall of the output cut to 75 bytes, averaged over the four references."""
        input:
            hyp=f"{BUILD}/duc2004/{{system}}.txt",
            refs=expand(f"{DATA}/duc2004/ref{{i}}.txt", i=range(4)),
        output:
            f"{METRICS}/duc2004/{{system}}.json",
        log:
            f"logs/{PROFILE}/evaluate/duc2004/{{system}}.log",
        benchmark:
            f"logs/{PROFILE}/benchmark/evaluate/duc2004/{{system}}.tsv"
        conda:
            "../../envs/naus-cpu.yaml"
        threads: 1
        shell:
            "{NAUS} evaluate --hyp {input.hyp} --ref {input.refs} --metric recall --max-bytes 75 --json "
            "--out {output} > {log} 2>&1"


if DUC_LENGTH and config["data"].get("published_dir"):

    rule published_duc_reorder:
        """The NAUS authors' released DUC2004 outputs, put back in input order for rescoring."""
        input:
            hyp=lambda w: str(data_dir() / config["data"]["published_dir"] / f"duc2004/{w.label}.txt"),
            index=lambda w: str(data_dir() / config["data"]["published_dir"] / "duc2004/summary_index.txt"),
        output:
            f"{BUILD}/published/duc/{{label}}.txt",
        log:
            f"logs/{PROFILE}/published/duc-{{label}}.log",
        benchmark:
            f"logs/{PROFILE}/benchmark/published/duc-{{label}}.tsv"
        conda:
            "../../envs/naus-cpu.yaml"
        threads: 1
        shell:
            "{NAUS} reorder --input {input.hyp} --index {input.index} --out {output} > {log} 2>&1"


rule stage_evaluate:
    """Every metric the report reads (a target for `dvc repro`; decoding runs as part of it)."""
    input:
        metric_files(),
