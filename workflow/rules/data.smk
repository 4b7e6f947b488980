DATA_OUTPUTS = {
    "stats": f"{DATA}/stats.json",
    "lm": f"{DATA}/lm.txt",
    **{f"{split}_{side}": f"{DATA}/{split}/{side}.txt" for split in ("pool", "dev", "test") for side in ("article", "title")},
    **({f"duc_{name}": f"{DATA}/duc2004/{name}.txt" for name in ("input", "ref0", "ref1", "ref2", "ref3")}
       if config["data"].get("duc_dir") else {}),
    **({f"select_{side}": f"{DATA}/select/{side}.txt" for side in ("article", "title")}
       if config["data"]["select_size"] else {}),
}


if config["data"]["source"] == "demo":

    rule data_demo:
        output:
            **DATA_OUTPUTS,
        params:
            flags=flags({k: config["data"][k] for k in ("dev_size", "select_size", "test_size", "max_article_words", "seed")}),
            cache=os.path.expanduser("~/.cache/naus"),
            out=lambda w, output: os.path.dirname(output.stats),
        log:
            f"logs/{PROFILE}/data.log",
        benchmark:
            f"logs/{PROFILE}/benchmark/data.tsv"
        conda:
            "../../envs/naus-cpu.yaml"
        threads: workflow.cores  # sentence splitting in parallel; nothing else can run before the data
        shell:
            "python -m naus --threads {threads} data demo --out {params.out} --cache {params.cache} {params.flags} "
            "> {log} 2>&1 "
            "&& tail -n 1 {log}"

else:

    if DOWNLOAD:

        rule download_gigaword:
            """The Rush-format Gigaword release, verified against the sha256 pinned in the config."""
            output:
                archive=f"{BUILD}/download/gigaword.archive",
                files=[f"{BUILD}/download/gigaword/{config['data'][k]}" for k in GIGAWORD_KEYS],
            params:
                url=DOWNLOAD["url"],
                sha256=DOWNLOAD["sha256"],
                unpack=f"{BUILD}/download/gigaword",
            log:
                f"logs/{PROFILE}/download.log",
            benchmark:
                f"logs/{PROFILE}/benchmark/download.tsv"
            conda:
                "../../envs/naus-cpu.yaml"
            shell:
                "python -m naus download --url {params.url:q} --sha256 {params.sha256} --out {output.archive} "
                "--unpack {params.unpack} > {log} 2>&1"

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
            flags=flags({k: config["data"][k] for k in ("dev_size", "select_size", "seed")}),
            duc=lambda w: f"--duc-dir {shlex.quote(str(data_dir() / config['data']['duc_dir']))}" if config["data"].get("duc_dir") else "",
            extra=lambda w, input: f"--extra-headlines {' '.join(map(shlex.quote, input.extra))}" if input.extra else "",
            out=lambda w, output: os.path.dirname(output.stats),
        log:
            f"logs/{PROFILE}/data.log",
        benchmark:
            f"logs/{PROFILE}/benchmark/data.tsv"
        conda:
            "../../envs/naus-cpu.yaml"
        shell:
            "python -m naus data gigaword --pool-article {input.pool_article:q} --pool-title {input.pool_title:q} "
            "--test-article {input.test_article:q} --test-title {input.test_title:q} {params.extra} {params.duc} "
            "{params.flags} --out {params.out} > {log} 2>&1 "
            "&& tail -n 1 {log}"
