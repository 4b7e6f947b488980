# naus pipeline: data -> lm -> search -> train -> decode -> evaluate -> report.
# `snakemake --cores 1 --report results/<profile>/report.html` bundles the tables and figures with captions.
# `snakemake --cores all` runs the demo profile; `--configfile config/<profile>.yaml` picks another.
include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/lm.smk"
include: "workflow/rules/search.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/decode.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/report.smk"


rule all:
    input:
        all_targets(),
    default_target: True
