# The HTML report opens on this page (written by `naus report`): the profile's headline numbers beside the paper's.
report: os.path.abspath(f"{RESULTS}/report.rst")


rule report:
    """Every table and figure the metrics allow, results/{profile}/README.md, and the captions of the HTML report."""
    input:
        metrics=metric_files(),
        stats=f"{DATA}/stats.json",
        histories=[f"{BUILD}/{layout.student_dir(model)}/history.json" for model in students()],
        timings=timing_files(),
    output:
        readme=f"{RESULTS}/README.md",
        landing=f"{RESULTS}/report.rst",
        metrics=f"{RESULTS}/metrics.json",
        fingerprints=f"{RESULTS}/fingerprints.json",
        table2=report(f"{RESULTS}/tables/table2.md", caption=os.path.abspath(f"{RESULTS}/tables/table2.rst"), category="Tables"),
        table3=[report(f"{RESULTS}/tables/table3.md", caption=os.path.abspath(f"{RESULTS}/tables/table3.rst"), category="Tables")]
        if DUC_LENGTH else [],
        table4=[report(f"{RESULTS}/tables/table4.md", caption=os.path.abspath(f"{RESULTS}/tables/table4.rst"), category="Tables")]
        if ANALYSIS_LENGTHS else [],
        browser=report(f"{RESULTS}/browse.html", caption=os.path.abspath(f"{RESULTS}/browse.rst"), category="Outputs"),
        case_study=report(f"{RESULTS}/tables/case-study.md", caption=os.path.abspath(f"{RESULTS}/tables/case-study.rst"),
                          category="Tables"),
        table6=[report(f"{RESULTS}/tables/table6.md", caption=os.path.abspath(f"{RESULTS}/tables/table6.rst"), category="Tables")]
        if config["decode"].get("transfer") else [],
        figures=[
            report(path, caption=os.path.abspath(f"{RESULTS}/figures/captions.rst"), category="Figures")
            for path in [f"{RESULTS}/figures/{layout.figure(kind, n)}.png" for kind in ("loss", "lengths", "source-length")
                         for n in config["search"]["lengths"]]
            + ([f"{RESULTS}/figures/training-size.png"] if config["train"].get("fractions") else [])
            + ([f"{RESULTS}/figures/beam-size.png"] if config["decode"].get("beam_sweep") else [])
            + ([f"{RESULTS}/figures/char-budget.png"] if config["decode"].get("char_sweep") else [])
        ],
    params:
        config=json.dumps(config),
        build=lambda w, input: Path(input.stats).parent.parent,
        results=lambda w, output: os.path.dirname(output.readme),
    log:
        f"logs/{PROFILE}/report.log",
    benchmark:
        f"logs/{PROFILE}/benchmark/report.tsv"
    conda:
        "../../envs/naus-cpu.yaml"
    shell:
        "python -m naus report --config {params.config:q} --metrics {params.results}/metrics --build {params.build} "
        "--out {params.results} > {log} 2>&1"
