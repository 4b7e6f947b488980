rule report:
    """Every table and figure the metrics allow, and results/{profile}/README.md."""
    input:
        metrics=metric_files(),
        histories=expand(f"{BUILD}/train/L{{n}}/history.json", n=config["search"]["lengths"])
        + expand(f"{BUILD}/train/{{a}}-L{{n}}/history.json", a=ARCHITECTURES, n=ANALYSIS_LENGTHS),
    output:
        readme=f"{RESULTS}/README.md",
        metrics=f"{RESULTS}/metrics.json",
        table2=report(f"{RESULTS}/tables/table2.md", caption="../report/table2.rst", category="Tables"),
        table3=[report(f"{RESULTS}/tables/table3.md", caption="../report/table3.rst", category="Tables")]
        if DUC_LENGTH else [],
        table4=[report(f"{RESULTS}/tables/table4.md", caption="../report/table4.rst", category="Tables")]
        if ANALYSIS_LENGTHS else [],
        table6=[report(f"{RESULTS}/tables/table6.md", caption="../report/table6.rst", category="Tables")]
        if config["decode"].get("transfer") else [],
        figures=[
            report(path, caption="../report/figures.rst", category="Figures")
            for path in expand(f"{RESULTS}/figures/{{kind}}-L{{n}}.png", kind=["loss", "lengths"], n=config["search"]["lengths"])
            + ([f"{RESULTS}/figures/training-size.png"] if config["train"].get("fractions") else [])
            + ([f"{RESULTS}/figures/beam-size.png"] if config["decode"].get("beam_sweep") else [])
        ],
    params:
        lengths=" ".join(str(n) for n in config["search"]["lengths"]),
        fractions=" ".join(str(f) for f in config["train"].get("fractions", [])),
        beams=" ".join(str(b) for b in config["decode"].get("beam_sweep", [])),
        transfer=" ".join(f"{m}:{t}" for m, t in config["decode"].get("transfer", [])),
        analysis=" ".join(str(n) for n in ANALYSIS_LENGTHS),
        duc=f"--duc-length {DUC_LENGTH}" if DUC_LENGTH else "",
    log:
        f"logs/{PROFILE}/report.log",
    benchmark:
        f"logs/{PROFILE}/benchmark/report.tsv"
    conda:
        "../../envs/naus-cpu.yaml"
    threads: 1
    shell:
        "{NAUS} report --profile {PROFILE} --metrics {RESULTS}/metrics --build {BUILD} --lengths {params.lengths} "
        "--fractions {params.fractions} --beams {params.beams} --transfer {params.transfer} --analysis {params.analysis} {params.duc} --out {RESULTS} > {log} 2>&1"
