TRAIN_CFG, MODEL_CFG = config["train"], config["model"]

wildcard_constraints:
    fraction=r"0\.\d+",
    arch="ar|nar|nar-ctc",


def train_command(fraction: str, arch: str = "") -> str:
    """The `naus train` call of the training rules; `fraction` < 1 trains on the first part of the pool."""
    return (
        "{NAUS} --threads {threads} train --train-source {input.source} --train-target {input.target} "
        "--dev-source {input.dev_source} --dev-target {input.dev_target} --min-count {params.t[min_count]} "
        "--layers {params.m[layers]} --d-model {params.m[d_model]} --heads {params.m[heads]} "
        "--ffn {params.m[ffn]} --dropout {params.m[dropout]} --max-len {params.m[max_len]} "
        "--max-steps {params.t[max_steps]} --max-tokens {params.t[max_tokens]} --lr {params.t[lr]} "
        "--warmup {params.t[warmup]} --weight-decay {params.t[weight_decay]} --clip {params.t[clip]} "
        "--smoothing {params.t[smoothing]} --eval-every {params.t[eval_every]} "
        f"--checkpoint-every {{params.t[checkpoint_every]}} --seed {{params.t[seed]}} --fraction {fraction} --resume "
        f"{f'--arch {arch} ' if arch else ''}--out {{params.out}} --timing {{output.timing}} > {{log}} 2>&1"
    )


TRAIN_INPUT = dict(
    source=f"{SEARCH}/pool/source.txt",
    target=f"{SEARCH}/pool/L{{length}}.txt",
    dev_source=f"{SEARCH}/dev/source.txt",
    dev_target=f"{SEARCH}/dev/L{{length}}.txt",
)
TRAIN_PARAMS = dict(
    m=MODEL_CFG,
    t={k: v for k, v in TRAIN_CFG.items() if k != "fractions"},
    out=lambda w, output: os.path.dirname(output.best),
)


rule train:
    """One student per target length, trained on the pool's search output (GPU on a cluster)."""
    input:
        **TRAIN_INPUT,
    output:
        best=f"{BUILD}/train/L{{length}}/best.pt",
        history=f"{BUILD}/train/L{{length}}/history.json",
        timing=f"{BUILD}/timing/train/L{{length}}.json",
    params:
        **TRAIN_PARAMS,
    log:
        f"logs/{PROFILE}/train/L{{length}}.log",
    benchmark:
        f"logs/{PROFILE}/benchmark/train/L{{length}}.tsv"
    conda:
        "../../envs/naus.yaml"
    threads: workflow.cores
    resources:
        gpu=1,
    shell:
        train_command("1.0")


rule train_fraction:
    """The training-size sweep of the paper's Figure 3: the same student on the first part of the pool."""
    input:
        **TRAIN_INPUT,
    output:
        best=f"{BUILD}/train/L{{length}}-f{{fraction}}/best.pt",
        history=f"{BUILD}/train/L{{length}}-f{{fraction}}/history.json",
        timing=f"{BUILD}/timing/train/L{{length}}-f{{fraction}}.json",
    params:
        **TRAIN_PARAMS,
    log:
        f"logs/{PROFILE}/train/L{{length}}-f{{fraction}}.log",
    benchmark:
        f"logs/{PROFILE}/benchmark/train/L{{length}}-f{{fraction}}.tsv"
    conda:
        "../../envs/naus.yaml"
    threads: workflow.cores
    resources:
        gpu=1,
    shell:
        train_command("{wildcards.fraction}")


rule train_arch:
    """Table 4: an AR, vanilla NAR or NAR-CTC encoder-decoder student on the same search output as NAUS."""
    input:
        **TRAIN_INPUT,
    output:
        best=f"{BUILD}/train/{{arch}}-L{{length}}/best.pt",
        history=f"{BUILD}/train/{{arch}}-L{{length}}/history.json",
        timing=f"{BUILD}/timing/train/{{arch}}-L{{length}}.json",
    params:
        **TRAIN_PARAMS,
    log:
        f"logs/{PROFILE}/train/{{arch}}-L{{length}}.log",
    benchmark:
        f"logs/{PROFILE}/benchmark/train/{{arch}}-L{{length}}.tsv"
    conda:
        "../../envs/naus.yaml"
    threads: workflow.cores
    resources:
        gpu=1,
    shell:
        train_command("1.0", "{wildcards.arch}")


rule stage_train:
    """Every student: one per length and the training-size sweep (a target for `dvc repro`)."""
    input:
        expand(f"{BUILD}/train/L{{n}}/best.pt", n=config["search"]["lengths"] + ([DUC_LENGTH] if DUC_LENGTH else [])),
        expand(f"{BUILD}/train/L{config['search']['lengths'][0]}-f{{f}}/best.pt", f=TRAIN_CFG.get("fractions", [])),
        expand(f"{BUILD}/train/{{a}}-L{{n}}/best.pt", a=ARCHITECTURES, n=ANALYSIS_LENGTHS),
