GIGAWORD, DUC2004 = PROTOCOLS["test"], PROTOCOLS["duc"]  # how each collection is scored


# Lead's input per split: the test articles, or DUC2004's raw input (digits kept; cut by DUC2004's protocol).
LEAD_SOURCE = {"test": f"{BUILD}/{layout.DECODE_SOURCES['test']}", "duc": f"{BUILD}/{layout.duc_file('input')}"}


rule lead:
    """The Lead baseline: the first L words of each input (`lead-all`: all of it, for DUC2004)."""
    wildcard_constraints:
        split="test|duc",
        length=r"\d+|all",
    input:
        lambda w: LEAD_SOURCE[w.split],
    output:
        f"{BUILD}/{layout.lead('{split}', '{length}')}.txt",
    params:
        length=lambda w: 0 if w.length == "all" else w.length,
    log:
        f"{LOGS}/baseline/{{split}}-lead-{{length}}.log",
    conda:
        "../../envs/naus-cpu.yaml"
    priority: BOOKKEEPING
    shell:
        "python -m naus lead --input {input} --length {params.length} --out {output} > {log} 2>&1"


rule evaluate_test:
    """Gigaword-style ROUGE of any system's test output against the test titles (a student's dev output,
    `decode/dev/...`, against the dev titles: a recipe is chosen on them)."""
    wildcard_constraints:
        system=rf"(?!{DUC2004.folder}/).+",
    input:
        hyp=f"{BUILD}/{{system}}.txt",
        ref=lambda w: f"{BUILD}/{layout.split_file('dev' if w.system.startswith('decode/dev/') else 'test', 'title')}",
        lines=lambda w: peer_subset_index(w.system),
    output:
        f"{RESULTS}/{layout.metrics_file('{system}')}",
    params:
        lines=lambda w, input: f"--lines {shlex.quote(input.lines[0])}" if input.lines else "",
    log:
        f"{LOGS}/evaluate/{{system}}.log",
    conda:
        "../../envs/naus-cpu.yaml"
    priority: BOOKKEEPING
    shell:
        f"python -m naus evaluate --hyp {{input.hyp}} --ref {{input.ref}} {GIGAWORD.options()} --json {{params.lines}} "
        "--out {output} > {log} 2>&1"


if config["data"].get("published_dir"):

    rule published_reorder:
        """The NAUS authors' released outputs (test, or DUC2004 as `duc/...`), put back in input order for rescoring."""
        wildcard_constraints:
            label=r"(duc/)?[^/]+",
        input:
            hyp=lambda w: published_file(w, 0),
            index=lambda w: published_file(w, 1),
        output:
            f"{BUILD}/{layout.published('{label}')}.txt",
        log:
            f"{LOGS}/published/{{label}}.log",
        conda:
            "../../envs/naus-cpu.yaml"
        priority: BOOKKEEPING
        shell:
            "python -m naus reorder --input {input.hyp:q} --index {input.index:q} --out {output} > {log} 2>&1"


if config["data"].get("peers"):

    rule peer_output:
        """A peer's released output (naus.data.peers), checked against its sha256 and the collection's inputs."""
        wildcard_constraints:
            collection="test|duc",
            length=r"\d+",
        input:
            hyp=lambda w: str(
                data_dir() / config["data"]["peers"][w.peer] / PEERS[w.peer].files[(w.collection, int(w.length))][0]
            ),
            source=lambda w: LEAD_SOURCE[w.collection],
            index=lambda w: [
                str(data_dir() / config["data"]["peers"][w.peer] / PEERS[w.peer].index[key])
                for key in [(w.collection, int(w.length))]
                if key in PEERS[w.peer].index
            ],
        output:
            f"{BUILD}/{layout.peer('{peer}', '{collection}', '{length}')}.txt",
        params:
            index=lambda w, input: f"--index {shlex.quote(input.index[0])}" if input.index else "",
        log:
            f"{LOGS}/peers/{{peer}}-{{collection}}-L{{length}}.log",
        conda:
            "../../envs/naus-cpu.yaml"
        priority: BOOKKEEPING
        shell:
            "python -m naus peer --peer {wildcards.peer} --collection {wildcards.collection} --length {wildcards.length} "
            "--input {input.hyp:q} --source {input.source} {params.index} --out {output} > {log} 2>&1"

    rule peer_cut:
        """A peer's output cut at L words, where it does not keep the budget (naus.data.peers: its `cut`)."""
        wildcard_constraints:
            collection="test|duc",
            length=r"\d+",
        input:
            f"{BUILD}/{layout.peer('{peer}', '{collection}', '{length}')}.txt",
        output:
            f"{BUILD}/{layout.peer('{peer}', '{collection}', '{length}', cut=True)}.txt",
        log:
            f"{LOGS}/peers/{{peer}}-{{collection}}-L{{length}}-cut.log",
        conda:
            "../../envs/naus-cpu.yaml"
        priority: BOOKKEEPING
        shell:
            "python -m naus lead --input {input} --length {wildcards.length} --out {output} > {log} 2>&1"


if DUC_LENGTH:

    rule duc_restore:
        """Masked digits (#) back to the input's digits, so outputs compare with DUC2004's references."""
        input:
            hyp=f"{BUILD}/{{system}}.txt",
            source=f"{BUILD}/{layout.duc_file('input')}",
        output:
            f"{BUILD}/{DUC2004.folder}/{{system}}.txt",
        log:
            f"{LOGS}/duc/{{system}}-restore.log",
        conda:
            "../../envs/naus-cpu.yaml"
        priority: BOOKKEEPING
        shell:
            "python -m naus digits --input {input.hyp} --restore-from {input.source} --out {output} > {log} 2>&1"

    rule evaluate_duc:
        """DUC2004's ROUGE (naus.pipeline.declarations.PROTOCOLS: recall of the output cut to 75 bytes, averaged over the four
        references)."""
        input:
            hyp=f"{BUILD}/{DUC2004.folder}/{{system}}.txt",
            refs=[f"{BUILD}/{ref}" for ref in DUC2004.references],
        output:
            f"{RESULTS}/{layout.metrics_file('{system}', DUC2004.folder)}",
        log:
            f"{LOGS}/evaluate/{DUC2004.folder}/{{system}}.log",
        conda:
            "../../envs/naus-cpu.yaml"
        priority: BOOKKEEPING
        shell:
            f"python -m naus evaluate --hyp {{input.hyp}} --ref {{input.refs}} {DUC2004.options()} --json "
            "--out {output} > {log} 2>&1"


rule stage_evaluate:
    """Every metric the report reads (a target for `dvc repro`; decoding runs as part of it)."""
    input:
        metric_files(),
