TRAIN_CFG, MODEL_CFG = config["train"], config["model"]


rule train:
    """One student per target length, trained on the pool's search output (GPU on a cluster)."""
    input:
        source=f"{SEARCH}/pool/source.txt",
        target=f"{SEARCH}/pool/L{{length}}.txt",
        dev_source=f"{SEARCH}/dev/source.txt",
        dev_target=f"{SEARCH}/dev/L{{length}}.txt",
    output:
        best=f"{BUILD}/train/L{{length}}/best.pt",
        history=f"{BUILD}/train/L{{length}}/history.json",
    params:
        m=MODEL_CFG,
        t=TRAIN_CFG,
        out=lambda w, output: os.path.dirname(output.best),
    log:
        f"logs/{PROFILE}/train/L{{length}}.log",
    benchmark:
        f"benchmarks/{PROFILE}/train/L{{length}}.tsv"
    threads: workflow.cores
    resources:
        gpu=1,
    shell:
        "naus --threads {threads} train --train-source {input.source} --train-target {input.target} "
        "--dev-source {input.dev_source} --dev-target {input.dev_target} --min-count {params.t[min_count]} "
        "--layers {params.m[layers]} --d-model {params.m[d_model]} --heads {params.m[heads]} "
        "--ffn {params.m[ffn]} --dropout {params.m[dropout]} --max-len {params.m[max_len]} "
        "--max-steps {params.t[max_steps]} --max-tokens {params.t[max_tokens]} --lr {params.t[lr]} "
        "--warmup {params.t[warmup]} --weight-decay {params.t[weight_decay]} --clip {params.t[clip]} "
        "--smoothing {params.t[smoothing]} --eval-every {params.t[eval_every]} "
        "--checkpoint-every {params.t[checkpoint_every]} --seed {params.t[seed]} --resume "
        "--out {params.out} > {log} 2>&1"
