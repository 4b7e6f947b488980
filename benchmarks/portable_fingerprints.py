"""The same commit, the same bytes on another CPU: a profile's fingerprints (every search output's, student's and
decoding's SHA-256) from a build made on this machine against those committed from another, with both machines'
instruction sets, so that a difference reads as a kernel's and not as a change of code or settings.

Build the profile on this machine in a clone of the commit (`make demo` there), then compare its fingerprints with
the committed ones, naming the machine that made them (their file does not record it):

    python -m benchmarks.portable_fingerprints --profile demo --built ../clone/results/demo/fingerprints.json --built-commit 7c99808 \
        --reference-machine "AMD EPYC (Zen 3), avx2 only" --built-metrics ../clone/results/demo/metrics.json --results

Writes results/benchmarks/portable_fingerprints.json (one entry per profile and pair of machines; with
`--built-metrics`, the tables' scores compared as well).

Findings (the JSON's numbers, as read when it was written; Markdown):

## The demo's bytes on an AVX-512 CPU and an AVX2-only one (`portable_fingerprints.json`)

`python -m benchmarks.portable_fingerprints --profile demo --built ../clone/results/demo/fingerprints.json
--built-commit 7c99808 --reference-machine ... --results`: the demo built (`snakemake --cores 1`, a fresh clone of
7c99808) on a 2-core AMD EPYC (Zen 4) with AVX-512, VNNI and bf16, against the fingerprints committed from
b15f8f2's `make demo` on a 2-core AMD EPYC (Zen 3) with AVX2 only. The commits between them changed the report
alone. All 36 are equal: 6 search outputs, 5 students (the `best.pt` bytes), 25 decodings. So the pinned kernels
(`MKL_CBWR=AVX2`, PyTorch's AVX2 kernels, the written-out Softmax of the int8 MiniLM) hold across these ISAs for
the students as for the teacher. Only the settings (the report's new key) and the times differ.

## The demo's bytes on an Intel CPU: the students differ

The demo built by `benchmarks/pipeline_time.py --setup` (a fresh clone of 3da96b1, 5 December 2026) on a 2-core
Intel Xeon (Sapphire Rapids: AVX-512, VNNI, AMX), against the fingerprints committed from the AMD EPYC Zen 4 (the
ones a Zen 3 with AVX2 only made too): the 6 search outputs and all 27 decodings are equal, and so are the tables'
scores; **none of the 5 students' `best.pt` is**. Their weights differ, but not by enough to change a headline.
The two trained without MiniLM's states (`ar-L10`, `nar-ctc-L10`) differ too, so it is the training, not the
states. On the Xeon, MKL runs its SGEMMs with `CNR:AVX2` (`MKL_VERBOSE`), and oneDNN runs only the GELU
(`jit:avx2`). Trained again there under each of MKL_CBWR's other branches (COMPATIBLE, SSE2, SSE4_2, AVX, AUTO,
AVX512, AVX2 with STRICT), or with oneDNN or ATen at another ISA, `ar-L10` and `L8` gave other bytes each time, and
never the AMD ones. oneMKL's developer guide ("Getting Started with Conditional Numerical Reproducibility") says
why: on a CPU not made by Intel, `MKL_CBWR=AVX2` is not honoured and MKL runs its AUTO branch. So the AMD machines ran
AUTO's code for their CPU, and the Xeon ran the AVX2 branch. AUTO on the Xeon is Intel's code again, which is why it
gave other bytes. The students are therefore byte-identical across the AMD CPUs measured, not across vendors.
Of the branches, COMPATIBLE (SSE2 without rcpps/rsqrtps) is the one to try on both vendors. Trained under it here,
the demo's L8 student took 21.8 s against 14.7 s (one run each, start-up included). Whether it gives AMD's bytes
needs an AMD machine to check, and adopting it would change every student.

Two more manual checks on the same Xeon (5 December 2026, `ar-L10` of a fresh clone's demo searches, one run
each): with `MKL_CBWR=AUTO MKL_ENABLE_INSTRUCTIONS=AVX2` (MKL's AVX2 kernels, no CNR branch) its `best.pt` is the
one `MKL_CBWR=AVX2` gives (`4ab52a26…`). With MKL made to take its path for CPUs not made by Intel (a preloaded
library answering 0 from `mkl_serv_intel_cpu` and `mkl_serv_intel_cpu_true`, which libtorch_cpu exports), MKL
reports `CNR:AUTO` and ignores `MKL_ENABLE_INSTRUCTIONS`, as the guide says it does on AMD, and the bytes are
`daef1bcb…`: neither the Xeon's nor the AMD machines' (`cb35d23e…`). So MKL's non-Intel path picks its kernels by
more than the vendor check, and what the AMD CPUs ran cannot be reproduced here.

## gigaword-sample's bytes and scores on the Intel Xeon

gigaword-sample built from an empty build on a fresh clone of c62ec26 on the same Xeon (`pipeline_time.py --profile
gigaword-sample --clone ...`, PyTorch, oneDNN, MKL and numba pinned to AVX2, nothing else running; 5 December
2026), against the fingerprints and scores committed from ab53ee6's run on the AMD EPYC Zen 4 (`--built-metrics`):
all 9 search outputs are equal, none of the 100 students, 474 of the 553 decodings; of the 1,710 scores both
metrics files hold, 1,649 are equal and the largest difference is 0.03 (35 outputs differ at all). The run took
5640.4 s (10321.2 job-seconds: students 5248.7, searches 2613.7, decodings 1782.8) against the Zen 4's 4903.3;
its timing JSON was not kept, since `results/gigaword-sample` stays the Zen 4's run.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from naus.device import cpu_name, isa
from naus.plumbing.files import read_json
from naus.plumbing.outputs import write_json

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results/benchmarks/portable_fingerprints.json"
SECTIONS = ("search", "students", "decodings")  # what the bytes of a build are; settings and times are not


def compare(built: dict, committed: dict) -> dict:
    """Per section, how many outputs each side has, how many agree, and the names of those that differ."""
    out = {}
    for section in SECTIONS:
        ours, theirs = built.get(section, {}), committed.get(section, {})
        names = sorted(set(ours) | set(theirs))
        differ = [n for n in names if json.dumps(ours.get(n), sort_keys=True) != json.dumps(theirs.get(n), sort_keys=True)]
        out[section] = {"built": len(ours), "committed": len(theirs), "equal": len(names) - len(differ),
                        "differ": differ}
    return out


def compare_scores(built: dict, committed: dict) -> dict:
    """Every score both metrics files hold (output and measure): how many agree, the largest difference, and the
    outputs whose scores differ. Outputs with other bytes may still score the same: the tables are what a reader
    sees."""
    def leaves(metrics: dict) -> dict:
        return {(name, measure): value for name, scores in metrics.items() if isinstance(scores, dict)
                for measure, value in scores.items() if isinstance(value, (int, float))}

    ours, theirs = leaves(built), leaves(committed)
    shared = sorted(set(ours) & set(theirs))
    differ = [key for key in shared if ours[key] != theirs[key]]
    return {"compared": len(shared), "equal": len(shared) - len(differ),
            "largest_difference": round(max((abs(ours[k] - theirs[k]) for k in differ), default=0.0), 4),
            "outputs_that_differ": sorted({name for name, _ in differ})}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="demo")
    parser.add_argument("--built", type=Path, required=True, help="fingerprints.json of a build made on this machine")
    parser.add_argument("--built-commit", required=True, help="the commit the build on this machine was made from")
    parser.add_argument("--reference-machine", required=True, help="the machine that made the committed fingerprints")
    parser.add_argument("--built-metrics", type=Path, help="that build's metrics.json: its tables' scores compared too")
    parser.add_argument("--results", action="store_true", help=f"write {RESULTS.relative_to(ROOT)}")
    args = parser.parse_args()
    built = read_json(args.built, ("search", "students", "decodings"))
    committed = read_json(ROOT / f"results/{args.profile}/fingerprints.json", ("search", "students", "decodings"))
    entry = {"profile": args.profile, "built_on": {"cpu": cpu_name(), "isa": isa(), "commit": args.built_commit},
             "committed_from": args.reference_machine, **compare(built, committed)}
    entry["identical"] = not any(entry[s]["differ"] for s in SECTIONS)
    if args.built_metrics:
        entry["scores"] = compare_scores(read_json(args.built_metrics),
                                         read_json(ROOT / f"results/{args.profile}/metrics.json"))
    print(json.dumps(entry, indent=1))
    if args.results:
        previous = read_json(RESULTS) if RESULTS.is_file() else {"runs": []}
        runs = [r for r in previous["runs"] if (r["profile"], r["built_on"], r["committed_from"]) !=
                (entry["profile"], entry["built_on"], entry["committed_from"])]
        write_json(RESULTS, {"runs": runs + [entry]})


if __name__ == "__main__":
    main()
