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

PY_DEPS   := "maturin>=1.5,<2" "numpy>=1.24" "pandas>=2.0" "matplotlib>=3.7" "pyyaml>=6" "pyarrow>=12" "dask[distributed]>=2023.1" "tqdm>=4.64" "pydantic>=2.6"
TEST_DEPS := "pytest>=7" "hypothesis>=6" "simso==0.8.5" "nbclient>=0.7" "nbformat>=5" "ipykernel>=6"

.PHONY: all setup system-deps build demo test test-rust test-loom test-kernel test-python test-fuzz test-soak soak bench clean

all: demo

$(VENV)/.deps: pyproject.toml Makefile
	python3 -m venv $(VENV)
	$(PIP) install -q --disable-pip-version-check $(PY_DEPS) $(TEST_DEPS)
	touch $@

setup: $(VENV)/.deps

# Real-run tests validate the latency probe against the real cyclictest (Debian rt-tests).
# As root (CI), install it when missing; elsewhere those tests skip.
system-deps:
	@if ! command -v cyclictest >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		(apt-get install -y -q rt-tests >/dev/null 2>&1 || (apt-get update -q >/dev/null && apt-get install -y -q rt-tests >/dev/null)) \
		|| echo "warning: could not install rt-tests; the cyclictest comparison will be skipped"; \
	fi

# The extension, built with profile-guided optimisation (tools/pgo_build.py: an instrumented
# build, a training run, then the optimised build; the plain release build when no
# llvm-profdata here reads rustc's profiles, or with RTSCHED_PGO=0).
build: setup
	$(PY) tools/pgo_build.py

demo: build
	$(VENV)/bin/rtsched demo

# rtsched-scx (the sched_ext scheduler) needs clang-19, libelf and a sched_ext kernel's
# vmlinux.h: it is built and tested by test-kernel.
test-rust:
	cargo test --workspace --exclude rtsched-py --exclude rtsched-scx --release

# The concurrent cpudl under loom: every interleaving of a few threads (bounded preemptions).
test-loom:
	RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test --release -p rtsched-policies --test loom_cpudl

# The sched_ext kernel driver, in a QEMU guest booting a kernel with sched_ext (installs qemu,
# clang-19 and the pinned kernel as root; says why it skips elsewhere).
test-kernel:
	bash crates/scx/guest/test.sh

test-python: build
	$(PY) -m pytest -q -p no:cacheprovider

# libFuzzer targets (fuzz/: task-set reader YAML and JSON, generators, simulator), each for
# FUZZ_SECONDS (default 60) from its committed corpus, on stable Rust without a sanitizer;
# prints executions and crashes per target and fails on a crash (docs/hardening.md "Fuzzing").
# Installs cargo-fuzz from crates.io when missing.
test-fuzz:
	bash fuzz/run.sh

# Soak (tests/test_soak.py, docs/real-runs.md "Soak"): 10 minutes at 0.5 m per backend, as
# root. CI (`make test`) soaks the testbed, kernel:fifo and kernel:deadline, one after the
# other, and checks the soak's outage rule on a spin made on purpose (31 minutes);
# `make soak` every kernel backend this host has without sched_ext (40 minutes).
# RTSCHED_SOAK_SECONDS shortens them.
SOAK_CI := testbed:gedf,kernel:fifo,kernel:deadline
test-soak: build
	RTSCHED_SOAK_BACKENDS=$(SOAK_CI) $(PY) -m pytest -q -p no:cacheprovider -m slow -rs -s tests/test_soak.py

soak: build
	$(PY) -m pytest -q -p no:cacheprovider -m slow -rs -s tests/test_soak.py

test: setup system-deps test-rust test-loom test-kernel test-python test-fuzz test-soak

bench: build
	$(PY) benchmarks/sim_throughput.py

clean:
	rm -rf $(VENV) target out
