# Two commands on a fresh machine (README "Quickstart"):
#   make demo   set up .venv, build, and run the main job (rtsched demo)
#   make test   set up .venv, build, and run every test (tools/test_all.py: stages, at once where
#               they can be, real runs alone at the end; a table of wall times at its end)
# Needs: cargo (Rust >= 1.85), python3 (>= 3.10) with venv. Everything else is installed here.

VENV    := .venv
PY      := $(VENV)/bin/python
PIP     := $(PY) -m pip
MATURIN := $(VENV)/bin/maturin
export VIRTUAL_ENV := $(abspath $(VENV))
export CARGO_TERM_COLOR ?= never
export MPLBACKEND ?= Agg

PY_DEPS   := "maturin>=1.5,<2" "numpy>=1.24" "pandas>=2.0" "matplotlib>=3.7" "pyyaml>=6" "pyarrow>=12" "dask[distributed]>=2023.1" "tqdm>=4.64" "pydantic>=2.6" "scipy>=1.10" "rich>=13"
TEST_DEPS := "pytest>=7" "pytest-xdist>=3" "hypothesis>=6" "simso==0.8.5" "nbclient>=0.7" "nbformat>=5" "ipykernel>=6" "ruff>=0.17,<0.18"
# The Cargo profile of everything `make test` builds (Cargo.toml [profile.ci]: release without
# LTO or debug info), shared by the test binaries, the extension and the sched_ext loader.
TEST_PROFILE := ci
RUST_TESTS := cargo test --workspace --exclude rtsched-py --exclude rtsched-scx --profile $(TEST_PROFILE)
# The loom model test: feature `loom` of rtsched-policies, in the same target directory (only
# that crate and its dependents are built again; built by build-rust-tests).
LOOM_TEST := cargo test --profile $(TEST_PROFILE) -p rtsched-policies --features loom --test loom_cpudl
PYTEST := $(PY) -m pytest -q -p no:cacheprovider
# The simulator-only Python tests run without CAP_SYS_NICE (as root: setpriv), so none can
# start a real-time thread beside the others; tests that make real runs carry the `real` mark.
NO_RT := $(shell [ "$$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 && echo setpriv --inh-caps=-sys_nice --bounding-set=-sys_nice)
# The extension the Python tests need: built by `build-test`, unless tools/test_all.py built it
# already (RTSCHED_TEST_BUILT=1: maturin would package and install it again for each stage).
BUILT_TEST := $(if $(RTSCHED_TEST_BUILT),,build-test)
GUEST_DEBS := $(shell sed -n 's/^DEBS="\(.*\)"/\1/p' crates/scx/guest/test.sh)

.PHONY: all setup system-deps build build-test build-rust-tests demo lint test test-rust test-loom test-kernel test-python test-real test-cache-interference test-hostile test-fuzz test-soak soak bench prediction-linux chain-tightness global-tests locking-tightness locking-sweep clean

all: demo

$(VENV)/.deps: pyproject.toml Makefile
	python3 -m venv $(VENV)
	$(PIP) install -q --disable-pip-version-check $(PY_DEPS) $(TEST_DEPS)
	touch $@

setup: $(VENV)/.deps

# Debian packages the tests use, installed as root (CI) when missing; elsewhere the tests that
# need them skip and say so. rt-tests: the real cyclictest, beside the latency probe; rt-app
# and trace-cmd: real runs of exported rt-app files and `rtsched record --from FILE.dat`; the
# kernel guest's (crates/scx/guest/test.sh DEBS), early, so `make test` fetches them while it
# compiles.
system-deps:
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		missing=""; for p in rt-tests rt-app trace-cmd $(GUEST_DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
		if [ -n "$$missing" ]; then \
			echo "system-deps: installing$$missing"; \
			(apt-get install -y -q --no-install-recommends $$missing >/dev/null 2>&1 \
				|| (apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends $$missing >/dev/null)) \
			|| echo "warning: could not install$$missing; the tests that need them will say so and skip"; \
		fi; \
	fi

# The extension, built with profile-guided optimisation (tools/pgo_build.py: an instrumented
# build, a training run, then the optimised build; the plain release build when no
# llvm-profdata here reads rustc's profiles, or with RTSCHED_PGO=0).
build: setup
	$(PY) tools/pgo_build.py

# The extension as the tests use it: one plain build in the test profile (no second,
# profile-guided build: only speed differs, not output), sharing the crates the Rust tests built.
build-test: setup
	$(MATURIN) develop --profile $(TEST_PROFILE) --quiet

build-rust-tests:
	$(RUST_TESTS) --no-run
	$(LOOM_TEST) --no-run

demo: build
	$(VENV)/bin/rtsched demo

# Lint, part of `make test`: rustfmt's layout (the workspace and the fuzz targets), clippy with
# every warning an error on every target of the workspace (libraries, binaries, tests, benches;
# the loom feature too), ruff on the Python (rules: pyproject.toml [tool.ruff]).
lint: setup
	cargo fmt --all --check
	cd fuzz && cargo fmt --check
	cargo clippy --workspace --all-targets --profile $(TEST_PROFILE) -- -D warnings
	cargo clippy -p rtsched-policies --features loom --all-targets --profile $(TEST_PROFILE) -- -D warnings
	$(VENV)/bin/ruff check python tests tools benchmarks fuzz

# rtsched-scx (the sched_ext scheduler) needs clang-19, libelf and a sched_ext kernel's
# vmlinux.h: it is built and tested by test-kernel. The tests that make real runs are
# #[ignore]d here ("real run: ..."): test-real runs them alone.
test-rust:
	$(RUST_TESTS)

# The concurrent cpudl under loom: every interleaving of a few threads (bounded preemptions).
test-loom:
	$(LOOM_TEST)

# The sched_ext kernel driver, in a QEMU guest booting a kernel with sched_ext (installs qemu,
# clang-19 and the pinned kernel as root; says why it skips elsewhere).
test-kernel:
	RTSCHED_CARGO_PROFILE=$(TEST_PROFILE) bash crates/scx/guest/test.sh

# Every Python test but those that make real runs (mark `real`) and the soak, on two workers
# (a test file's tests stay on one worker, so a module's fixture is made once).
test-python: $(BUILT_TEST)
	$(NO_RT) $(PYTEST) -n 2 --dist loadfile -m "not real and not slow"

# The tests that make real runs (real-time threads on every CPU), one at a time and alone on
# the machine: the Rust ones (#[ignore]d elsewhere), then the Python ones (mark `real`). Without
# real-time privilege each says that it did not run.
test-real: $(BUILT_TEST)
	rc=0; $(RUST_TESTS) --lib --tests -- --ignored --skip readings_measured --test-threads=1 --nocapture || rc=1; \
	$(PYTEST) -m "real and not slow and not hostcache" -rs || rc=1; exit $$rc

# Cache interference between two tasks' buffers on this host's real cores (tests/test_memory_real.py,
# mark `hostcache`): whether it shows depends on the host's shared cache, so it is not part of
# `make test`; run it, as root and alone, on the machine you want to know about (about 2 min).
test-cache-interference: $(BUILT_TEST)
	$(PYTEST) -m hostcache -rs -s tests/test_memory_real.py

# Every hostile input of tests/hostile.py (about 80, by class: outputs, sweeps, reading, time,
# messages), the heavy ones too (a 30 MB file of TUF points, a 9.9-million-job --jobs-csv) and,
# as root, those a real run checks; prints the table of cases tried and handled (about 2 min).
# make test runs all but the heavy ones (tests/test_hostile_inputs.py).
test-hostile: $(BUILT_TEST)
	$(PY) tests/hostile.py

# libFuzzer targets (fuzz/: task-set reader YAML and JSON, generators, simulator) sharing
# FUZZ_BUDGET seconds (default 60) from their committed corpora, on stable Rust without a
# sanitizer; prints executions and crashes per target and fails on a crash (docs/hardening.md
# "Fuzzing": FUZZ_SECONDS=600 for a longer run per target). Installs cargo-fuzz when missing.
test-fuzz:
	bash fuzz/run.sh

# Soak (tests/test_soak.py, docs/real-runs.md "Soak"), as root, at 0.5 m. CI (`make test`)
# soaks the testbed, kernel:fifo and kernel:deadline for SOAK_CI_SECONDS each, one after the
# other: long enough for every rule (accounting, misses against steal and outages, memory
# growth between the first and last quarter), and checks the outage rule on a spin made on
# purpose (about 4¼ minutes in all). `make soak` is the full soak: 10 minutes on every kernel
# backend this host has without sched_ext (about 41 minutes); run it after a change to the
# real backends, the ledger's memory or the probe. RTSCHED_SOAK_SECONDS sets the length.
SOAK_CI := testbed:gedf,kernel:fifo,kernel:deadline
SOAK_CI_SECONDS := 60
test-soak: $(BUILT_TEST)
	RTSCHED_SOAK_SECONDS=$${RTSCHED_SOAK_SECONDS:-$(SOAK_CI_SECONDS)} RTSCHED_SOAK_BACKENDS=$(SOAK_CI) $(PYTEST) -m slow -rs -s tests/test_soak.py

soak: build
	$(PYTEST) -m slow -rs -s tests/test_soak.py

test:
	python3 tools/test_all.py

bench: build
	$(PY) benchmarks/sim_throughput.py

# Issue 52's prediction table: simulate -s linux (with a calibrate -b kernel profile, measured
# first) against run -b kernel:linux on four mixed sets of 2 CPUs, written to
# docs/linux-prediction.md (about 1 min; root; run it alone on a quiet machine).
prediction-linux: build
	$(PY) benchmarks/linux_prediction.py

# Issue 53's tightness figure: chain bounds over the simulated maxima on seeded random chain
# sets per utilisation point (docs/chains.md, "Tightness"), docs/img/chain_tightness.png.
chain-tightness: build
	$(PY) benchmarks/chain_tightness.py

locking-tightness: build
	$(PY) benchmarks/locking_tightness.py

# Schedulability by locking protocol: the two example sweeps of a `locking` axis (docs/locking.md,
# "Schedulability by protocol: a sweep"), docs/img/locking_sweep.png; a few minutes on 2 cores;
# not part of `make test`.
locking-sweep: build
	$(PY) benchmarks/locking_sweep.py

# Every global schedulability test on 4 and 8 CPUs beside gedf / gfp:rm simulated: acceptance,
# weighted schedulability and the tightness of the per-task bounds (docs/generators.md, "Global
# tests compared"; under a minute; not part of `make test`).
global-tests: build
	$(PY) benchmarks/global_tests.py

clean:
	rm -rf $(VENV) target out
