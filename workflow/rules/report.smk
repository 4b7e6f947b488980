# The HTML report opens on this page (written by `naus report`): the profile's headline numbers beside the paper's.
report: os.path.abspath(f"{RESULTS}/{layout.LANDING_PAGE}")


rule report:
    """Every table and figure the metrics allow, results/{profile}/README.md, and the captions of the HTML report."""
    input:
        metrics=metric_files(),
        stats=f"{BUILD}/{layout.DATA_STATS}",
        histories=[f"{BUILD}/{layout.student_dir(model)}/history.json" for model in trained_students()],
        timings=timing_files(),
        earlier_runs=earlier_run_files(),
        released=released_files(),
    output:
        readme=f"{RESULTS}/{layout.README}",
        landing=f"{RESULTS}/{layout.LANDING_PAGE}",
        metrics=f"{RESULTS}/{layout.FLAT_METRICS}",
        headline=f"{RESULTS}/{layout.HEADLINE}",
        fingerprints=f"{RESULTS}/{layout.FINGERPRINTS}",
        tables=[
            report(
                f"{RESULTS}/{layout.table_file(name, 'md')}",
                caption=os.path.abspath(f"{RESULTS}/{layout.table_file(name, 'rst')}"),
                category="Tables",
            )
            for name in SPEC.table_names
        ],
        browser=report(
            f"{RESULTS}/{layout.BROWSER}",
            caption=os.path.abspath(f"{RESULTS}/{layout.BROWSER_CAPTION}"),
            category="Outputs",
        ),
        figures=[
            report(
                f"{RESULTS}/{layout.figure_file(f.name)}",
                caption=os.path.abspath(f"{RESULTS}/{layout.FIGURE_CAPTIONS}"),
                category="Figures",
            )
            for f in SPEC.figures
        ],
    params:
        config=config_json(),
        build=lambda w, input: Path(input.stats).parent.parent,
        results=lambda w, output: os.path.dirname(output.readme),
    log:
        f"{LOGS}/report.log",
    benchmark:
        f"{LOGS}/benchmark/report.tsv"
    conda:
        "../../envs/naus-cpu.yaml"
    shell:
        "python -m naus report --config {params.config:q} --metrics {params.results}/metrics --build {params.build} "
        "--released {input.released:q} --out {params.results} > {log} 2>&1"


rule ship:
    """A profile of your own text: each length's student as a file `Summarizer.from_pretrained` loads (a copy head's
    without its vocabulary), with a README of what it learned from, how it was chosen and, given a test set, its
    ROUGE beside the teacher's."""
    input:
        students=[f"{BUILD}/{layout.student_checkpoint(m)}" for m in SPEC.shipped],
        histories=[f"{BUILD}/{layout.student_dir(m)}/{layout.HISTORY}" for m in SPEC.shipped],
        stats=f"{BUILD}/{layout.DATA_STATS}",
        metrics=metric_files(),
    output:
        readme=f"{RESULTS}/{layout.SHIPPED}/{layout.README}",
        students=[f"{RESULTS}/{layout.shipped_student(PLAN.student(m).length)}" for m in SPEC.shipped],
    params:
        metrics=lambda w, input: f"--metrics {RESULTS}/{layout.METRICS}" if input.metrics else "",
        profile=PROFILE,
        out=lambda w, output: os.path.dirname(output.readme),
    log:
        f"{LOGS}/ship.log",
    conda:
        "../../envs/naus.yaml"
    shell:
        "python -m naus ship --students {input.students} --stats {input.stats} {params.metrics} "
        "--profile {params.profile} --out {params.out} > {log} 2>&1"


rule mark_stale:
    """Results made elsewhere (students of a GPU lease) compared with the configuration again, their captions' STALE
    sentence rewritten; run by name (`snakemake mark_stale`) when the configuration changed and they cannot be remade."""
    params:
        config=config_json(),
        results=RESULTS,
    log:
        f"{LOGS}/mark-stale.log",
    conda:
        "../../envs/naus-cpu.yaml"
    shell:
        "python -m naus mark-stale --config {params.config:q} --results {params.results} > {log} 2>&1"
