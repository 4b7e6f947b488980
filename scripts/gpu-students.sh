#!/usr/bin/env bash
# A profile's GPU work on a borrowed GPU machine: every student trained and every decoding made by the
# pipeline's own rules (snakemake --allowed-rules train decode decode_beam) from the search output made
# here; ROUGE, the tables and the report then run here. The GPU machine has PyTorch but no snakemake,
# so the wheels travel with the inputs.
#
#   scripts/gpu-students.sh pack          # here: .dev/inputs.tar.gz (search output, test sources) and .dev/wheels
#   scripts/gpu-students.sh run OUT       # there: train, decode, write OUT/gpu-run.tar.gz and OUT/gpu.txt
#   scripts/gpu-students.sh finish TAR... # here: its histories, timings and decodings into build/, then
#                                         # ROUGE, tables, figures and report by the pipeline
#
# `run` trains all students at once (the train rule's one CPU thread each: the GPU does the work), plus the dev-loss sweep
# of SWEEP (learning rate and batch size at L=10, one variant profile each, ';'-separated), then decodes DECODE_JOBS
# at a time. PROFILE (default gigaword-sample) picks the profile; EXTRA_CONFIG names a YAML file
# merged over it (a smoke run here: fewer steps); TRAIN_LIMIT and DECODE_LIMIT (seconds, 0: none) cut
# the phases short so that what was made still comes back within a lease.
set -euo pipefail
profile=${PROFILE:-gigaword-sample}
build=build/$profile
config=(--configfile "config/$profile.yaml" ${EXTRA_CONFIG:+"$EXTRA_CONFIG"})
# The sweep: name and the training keys it changes (the profile's own values are the reference).
SWEEP=${SWEEP-"lr5e-4:{lr: 5.0e-4};lr2e-3:{lr: 2.0e-3};tokens4096:{max_tokens: 4096}"}
sweep_length=10

snake() { timeout "${TIMEOUT:-0}" python -m snakemake --cores "$(nproc)" --scheduler greedy --rerun-triggers mtime --rerun-incomplete --keep-going "$@"; }

case ${1:-} in
pack)
    mkdir -p .dev/wheels
    tar czf .dev/inputs.tar.gz "$build"/search/{pool,dev,duc}/*.txt "$build"/data/test/article.txt
    # snakemake and nltk (naus.text tokenizes with it) and what they need, less what the GPU image has:
    # wheels for its Python 3.12
    python - > .dev/needed.txt <<'PY'
import importlib.metadata as md
from packaging.requirements import Requirement
on_image = set("absl-py attrs certifi charset-normalizer click cloudpickle colorama idna jinja2 joblib markupsafe "
               "numpy packaging psutil pyyaml regex requests six tabulate tqdm urllib3 wrapt".split())
seen, todo = {}, ["snakemake", "nltk"]
while todo:
    requirement = Requirement(todo.pop())
    name = requirement.name.lower().replace("_", "-")
    marker = requirement.marker is None or requirement.marker.evaluate({"python_version": "3.12", "extra": ""})
    if marker and name not in seen and name not in on_image:
        seen[name] = md.version(name)
        todo += md.requires(name) or []
print("\n".join(f"{n}=={v}" for n, v in sorted(seen.items())))
PY
    platforms=(--platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64)
    while read -r spec; do
        python -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
            "${platforms[@]}" --platform any -d .dev/wheels "$spec" 2>/dev/null \
            || python -m pip wheel -q --no-deps -w .dev/wheels "$spec"   # an sdist: pure Python
    done < .dev/needed.txt
    du -sh .dev
    ;;
run)
    out=$2 logdir=logs/gpu-run
    mkdir -p "$logdir"
    if ! python3 -c 'import snakemake' 2>/dev/null; then
        python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .dev/wheels/*.whl
        export PYTHONPATH=/tmp/site
    fi
    export NAUS_DATA=${NAUS_DATA:-/nonexistent}   # read only by the search rules, which do not run
    command -v python >/dev/null || { mkdir -p /tmp/bin && ln -sf "$(command -v python3)" /tmp/bin/python; export PATH=/tmp/bin:$PATH; }
    tar xzf .dev/inputs.tar.gz
    { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || echo cpu; python -c 'import torch; print("torch", torch.__version__)'; } > "$out/gpu.txt"
    start=$(date +%s)
    pids=()
    IFS=';' read -ra variants <<< "$SWEEP"
    for variant in "${variants[@]}"; do
        name=${variant%%:*}
        mkdir -p "build/sweep-$name" && ln -sfn "../$profile/search" "build/sweep-$name/search"
        printf 'profile: sweep-%s\ntrain: %s\n' "$name" "${variant#*:}" > "/tmp/sweep-$name.yaml"
        timeout "${TRAIN_LIMIT:-0}" python -m snakemake --cores 1 --rerun-triggers mtime --nolock \
            "build/sweep-$name/train/L$sweep_length/best.pt" "${config[@]}" "/tmp/sweep-$name.yaml" \
            --allowed-rules train > "$logdir/sweep-$name.log" 2>&1 &
        pids+=($!)
    done
    TIMEOUT=${TRAIN_LIMIT:-0} snake stage_train "${config[@]}" --allowed-rules train stage_train \
        > "$logdir/train.log" 2>&1 || echo "training: some jobs failed"
    for pid in "${pids[@]}"; do wait "$pid" || echo "a sweep run failed"; done
    echo "trained in $(( $(date +%s) - start )) s"
    TIMEOUT=${DECODE_LIMIT:-0} snake stage_decode "${config[@]}" --allowed-rules decode decode_beam stage_decode \
        --resources gpu="${DECODE_JOBS:-4}" > "$logdir/decode.log" 2>&1 || echo "decoding: some jobs failed"
    echo "trained and decoded in $(( $(date +%s) - start )) s"
    tar czf "$out/gpu-run.tar.gz" --ignore-failed-read build/*/train/*/history.json build/*/timing/train \
        "$build/decode" logs/
    ;;
finish)
    # the GPU run's students replace this machine's; their checkpoints stayed there, so the rules that
    # would make them (train, decode, decode_beam) are left out and their outputs count as given
    rm -rf "$build/train" "$build/decode" "$build/timing/train" build/sweep-*
    for archive in "${@:2}"; do tar xzf "$archive"; done   # in order: a later run's files replace an earlier's
    rules=$(python -m snakemake --list-rules "${config[@]}" | grep -oE '^[a-z_]+' | grep -vxE 'train|decode|decode_beam')
    snake all "${config[@]}" --allowed-rules $rules
    python benchmarks/dev_sweep.py --profile "$profile"
    ;;
*)
    sed -n '2,16p' "$0"
    exit 2
    ;;
esac
