# What the data step writes under build/{profile}/data: the LM's headlines (data.lm_titles: by default no title of
# an article any search labels, so the data step reads search.pool_limit), pool, dev and test pairs, and the
# second dev split and DUC2004 where the profile has them.
SPLITS = [*layout.SPLITS] + ([layout.SELECT] if config["data"]["select_size"] else [])
DATA_OUTPUTS = {
    f"{split}_{side}": f"{BUILD}/{layout.split_file(split, side)}" for split in SPLITS for side in ("article", "title")
}
DATA_OUTPUTS.update(
    stats=f"{BUILD}/{layout.DATA_STATS}", lm=f"{BUILD}/{layout.LM_CORPUS}", inputs=f"{BUILD}/{layout.DATA_INPUTS}"
)
DUC_FILES = ("input", "ref0", "ref1", "ref2", "ref3") if config["data"].get("duc_dir") else ()
DATA_OUTPUTS.update({f"duc_{name}": f"{BUILD}/{layout.duc_file(name)}" for name in DUC_FILES})
SEARCHED = {"searched": config["search"]["pool_limit"]}  # the searched pool articles, whose titles the LM never reads


if config["data"]["source"] == tables.TEXT:

    rule data_text:
        """Your own raw text (data.sentences, data.headlines; a labelled test set where data.test_article names
        one), normalised as `naus summarize` reads it, in the corpus layout."""
        input:
            sentences=lambda w: external("sentences"),
            headlines=lambda w: external("headlines"),
            test=lambda w: [external(k) for k in ("test_article", "test_title") if config["data"].get(k)],
        output:
            **DATA_OUTPUTS,
        params:
            flags=flags({k: config["data"][k] for k in ("dev_size", "seed")}),
            test=lambda w, input: (
                f"--test-article {shlex.quote(input.test[0])} --test-title {shlex.quote(input.test[1])}"
                if input.test
                else ""
            ),
            out=lambda w, output: os.path.dirname(output.stats),
        log:
            f"{LOGS}/data.log",
        benchmark:
            f"{LOGS}/benchmark/data.tsv"
        conda:
            "../../envs/naus-cpu.yaml"
        shell:
            "python -m naus data text --sentences {input.sentences:q} --headlines {input.headlines:q} {params.test} "
            "{params.flags} --out {params.out} > {log} 2>&1 "
            "&& tail -n 1 {log}"

elif config["data"]["source"] == "demo":

    rule data_demo:
        output:
            **DATA_OUTPUTS,
        params:
            flags=flags(
                {
                    k: config["data"][k]
                    for k in ("dev_size", "select_size", "test_size", "max_article_words", "seed", "lm_titles")
                }
                | SEARCHED
            ),
            cache=os.path.expanduser("~/.cache/naus"),
            out=lambda w, output: os.path.dirname(output.stats),
        log:
            f"{LOGS}/data.log",
        benchmark:
            f"{LOGS}/benchmark/data.tsv"
        conda:
            "../../envs/naus-cpu.yaml"
        threads: max(1, workflow.cores - 1)  # sentence splitting in parallel, beside export_onnx (it needs no data)
        shell:
            "python -m naus --threads {threads} data demo --out {params.out} --cache {params.cache} {params.flags} "
            "> {log} 2>&1 "
            "&& tail -n 1 {log}"

else:

    if DOWNLOAD:

        rule download_gigaword:
            """The Rush-format Gigaword release, verified against the sha256 pinned in the config. The archive is not
            an output (Snakemake would delete it before the job, a copy saved by hand too): `naus download` keeps one
            whose sha256 is the pinned one and fetches it otherwise; only what it unpacks is the rule's."""
            output:
                files=[f"{BUILD}/{layout.DOWNLOAD_DIR}/{config['data'][k]}" for k in GIGAWORD_KEYS],
            params:
                url=DOWNLOAD["url"],
                sha256=DOWNLOAD["sha256"],
                unpack=lambda w, output: unpacked_into(output.files[0]),
                archive=lambda w, output: unpacked_into(output.files[0]).removesuffix(layout.DOWNLOAD_DIR)
                + layout.DOWNLOAD_ARCHIVE,
            log:
                f"{LOGS}/download.log",
            benchmark:
                f"{LOGS}/benchmark/download.tsv"
            conda:
                "../../envs/naus-cpu.yaml"
            shell:
                "python -m naus download --url {params.url:q} --sha256 {params.sha256} --out {params.archive:q} "
                "--unpack {params.unpack:q} > {log} 2>&1"

    rule data_gigaword:
        input:
            pool_article=lambda w: external("pool_article"),
            pool_title=lambda w: external("pool_title"),
            test_article=lambda w: external("test_article"),
            test_title=lambda w: external("test_title"),
            extra=lambda w: [str(data_dir() / p) for p in config["data"].get("extra_headlines", [])],
        output:
            **DATA_OUTPUTS,
        params:
            flags=flags({k: config["data"][k] for k in ("dev_size", "select_size", "seed", "lm_titles")} | SEARCHED),
            duc=lambda w: (
                f"--duc-dir {shlex.quote(str(data_dir() / config['data']['duc_dir']))}"
                if config["data"].get("duc_dir")
                else ""
            ),
            extra=lambda w, input: f"--extra-headlines {' '.join(map(shlex.quote, input.extra))}" if input.extra else "",
            out=lambda w, output: os.path.dirname(output.stats),
        log:
            f"{LOGS}/data.log",
        benchmark:
            f"{LOGS}/benchmark/data.tsv"
        conda:
            "../../envs/naus-cpu.yaml"
        shell:
            "python -m naus data gigaword --pool-article {input.pool_article:q} --pool-title {input.pool_title:q} "
            "--test-article {input.test_article:q} --test-title {input.test_title:q} {params.extra} {params.duc} "
            "{params.flags} --out {params.out} > {log} 2>&1 "
            "&& tail -n 1 {log}"


rule stage_data:
    """The corpus the later steps read (a target for `dvc repro`: its command names no path)."""
    input:
        f"{BUILD}/{layout.DATA_STATS}",
