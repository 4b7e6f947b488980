# naus pipeline: data -> lm -> search -> train -> decode -> evaluate -> report.
# `snakemake --cores all` runs the demo profile; `--configfile config/<profile>.yaml` picks another.
include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"


rule all:
    input:
        all_targets(),
    default_target: True
