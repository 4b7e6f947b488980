METRICS = f"{RESULTS}/metrics"


rule lead:
    input:
        f"{DATA}/test/article.txt",
    output:
        f"{BUILD}/decode/test/lead-{{length}}.txt",
    log:
        f"logs/{PROFILE}/decode/lead-{{length}}.log",
    benchmark:
        f"benchmarks/{PROFILE}/decode/lead-{{length}}.tsv"
    threads: 1
    shell:
        "naus lead --input {input} --length {wildcards.length} --out {output} > {log} 2>&1"


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
        f"benchmarks/{PROFILE}/evaluate/{{system}}.tsv"
    threads: 1
    shell:
        "naus evaluate --hyp {input.hyp} --ref {input.ref} --metric f1 --json --out {output} > {log} 2>&1"
