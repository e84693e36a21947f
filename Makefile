# Two commands on a fresh machine (README "Quickstart"):
#   make demo   set up .venv, build, and run the main job (rtsched demo)
#   make test   set up .venv, build, and run every test (Rust and Python)
# Needs: cargo (Rust >= 1.85), python3 (>= 3.10) with venv. Everything else is installed here.

VENV    := .venv
PY      := $(VENV)/bin/python
PIP     := $(PY) -m pip
MATURIN := $(VENV)/bin/maturin
export VIRTUAL_ENV := $(abspath $(VENV))
export CARGO_TERM_COLOR ?= never
export MPLBACKEND ?= Agg

PY_DEPS   := "maturin>=1.5,<2" "numpy>=1.24" "pandas>=2.0" "matplotlib>=3.7" "pyyaml>=6" "pyarrow>=12" "dask[distributed]>=2023.1"
TEST_DEPS := "pytest>=7" "hypothesis>=6" "simso==0.8.5" "nbclient>=0.7" "nbformat>=5" "ipykernel>=6"

.PHONY: all setup build demo test test-rust test-python bench clean

all: demo

$(VENV)/.deps: pyproject.toml Makefile
	python3 -m venv $(VENV)
	$(PIP) install -q --disable-pip-version-check $(PY_DEPS) $(TEST_DEPS)
	touch $@

setup: $(VENV)/.deps

build: setup
	$(MATURIN) develop --release --quiet

demo: build
	$(VENV)/bin/rtsched demo

test-rust:
	cargo test --workspace --exclude rtsched-py --release

test-python: build
	$(PY) -m pytest -q -p no:cacheprovider

test: setup test-rust test-python

bench: build
	$(PY) benchmarks/sim_throughput.py

clean:
	rm -rf $(VENV) target out
