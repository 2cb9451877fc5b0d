# `make demo` and `make test` work on a fresh clone: the first target they need creates a
# virtual environment and builds the package (Rust core included) into it.
VENV   ?= .venv
PYTHON ?= python3
PY      = $(VENV)/bin/python
LS      = $(VENV)/bin/liquidsched
OUT    ?= out
STAMP   = $(VENV)/.installed

.PHONY: install demo test test-rust test-python fuzz bench bench-emulated pmpi docs clean

install: $(STAMP)

# Every Rust source below the core and the binding, sub-modules (liquid/, …) included.
$(STAMP): pyproject.toml Cargo.toml crates/core/Cargo.toml $(shell find crates/core/src src -name "*.rs")
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"
	touch $(STAMP)

demo: $(STAMP)
	@mkdir -p $(OUT)
	@echo "== two-switch example (paper 000 Fig. 2): bound, round-robin, then the liquid schedule =="
	$(LS) bound --topology two-switch --traffic half-all-to-all
	$(LS) plan --topology two-switch --algorithm round-robin --output $(OUT)/two-switch-round-robin.json
	$(LS) check $(OUT)/two-switch-round-robin.json
	$(LS) plan --topology two-switch --algorithm liquid --output $(OUT)/two-switch-liquid.json --plot $(OUT)/two-switch-liquid.png
	$(LS) check $(OUT)/two-switch-liquid.json
	@echo "== swiss-t1 sub-topology 4,0,4,0,4,0,4,0 (16 nodes on the four odd switches) =="
	$(LS) bound --topology swiss-t1 --alloc 4,0,4,0,4,0,4,0
	$(LS) plan --topology swiss-t1 --alloc 4,0,4,0,4,0,4,0 --algorithm round-robin --output $(OUT)/t1-round-robin.json
	$(LS) plan --topology swiss-t1 --alloc 4,0,4,0,4,0,4,0 --algorithm liquid --output $(OUT)/t1-liquid.json --plot $(OUT)/t1-liquid.png
	@echo "== paper 002's hierarchy: 100 Mbit/s hosts, 1 Gbit/s uplinks with 10 slots; all-to-all of 4 x 2 hosts =="
	$(LS) bound --topology hierarchical:d1=4,d2=2 --traffic all-to-all
	$(LS) plan --topology hierarchical:d1=4,d2=2 --traffic all-to-all --algorithm liquid --output $(OUT)/hierarchical-liquid.json --plot $(OUT)/hierarchical-liquid.png
	$(LS) check $(OUT)/hierarchical-liquid.json
	@echo "== swiss-t1 sweep: all 5^8 allocations =="
	$(LS) sweep --topology swiss-t1 --output $(OUT)/t1-classes.json --plot $(OUT)/t1-sweep.png

test: test-rust test-python

test-rust:
	cargo test --quiet -p liquidsched-core -p liquidsched-capi

test-python: $(STAMP)
	$(PY) -m pytest

# The long fuzz run: every hostile input of every class (special files, encodings, document
# bombs, field values, numbers in options, specs, host files and maps, output paths, option
# parsing, mutations, closed pipes) through every reader and command; prints the count per class and writes
# $(OUT)/fuzz.json with the counts and every failure. `make test` runs a sample (tests/test_fuzz.py).
FUZZ_JOBS ?= 2
fuzz: $(STAMP)
	@mkdir -p $(OUT)
	$(PY) -m tests.fuzz --jobs $(FUZZ_JOBS) --report $(OUT)/fuzz.json --markdown $(OUT)/fuzz-failures.md

bench: $(STAMP)
	@mkdir -p $(OUT)
	$(PY) benchmarks/startup.py --output $(OUT)/startup.json
	$(PY) benchmarks/sweep_t1.py --output $(OUT)/bench-sweep-t1.json
	$(PY) benchmarks/t1_schedules.py --output $(OUT)/bench-t1-schedules.json --plot $(OUT)/bench-t1-schedules.png \
		--cpsat-time-limit 10 --jobs 2 --reduction-node-limit 500000
	$(PY) benchmarks/predict_t1.py --output $(OUT)/predict-t1.json --plot $(OUT)/predict-t1.png
	$(PY) benchmarks/heterogeneous.py --output $(OUT)/heterogeneous.json --plot $(OUT)/heterogeneous.png
	$(PY) benchmarks/kpbs.py --output $(OUT)/kpbs.json --plot $(OUT)/kpbs.png
	$(PY) benchmarks/scale.py --output $(OUT)/scale.json --plot $(OUT)/scale.png
	$(PY) benchmarks/search_scale.py --output $(OUT)/search-scale.json --plot $(OUT)/search-scale.png
	$(PY) benchmarks/budgeted_search.py --output $(OUT)/budgeted-search.json --plot $(OUT)/budgeted-search.png
	$(PY) benchmarks/shuffle.py --part fluid --output $(OUT)/shuffle-fluid.json
	$(PY) benchmarks/steady_state.py --output $(OUT)/steady-state.json --plot $(OUT)/steady-state.png
	$(PY) benchmarks/moe.py --output $(OUT)/moe.json --plot $(OUT)/moe.png
	$(PY) benchmarks/planning_time.py --output $(OUT)/planning-time.json --plot $(OUT)/planning-time.png
	taskset -c 0 $(PY) benchmarks/simgrid_compare.py --output $(OUT)/simgrid-compare.json --plot $(OUT)/simgrid-compare.png

bench-emulated: $(STAMP)
	@mkdir -p $(OUT)
	$(MAKE) pmpi
	$(PY) benchmarks/win_when_run.py --repeats 7 --c-tables $(OUT)/tables --output $(OUT)/win-when-run.json --plot $(OUT)/win-when-run.png
	$(PY) benchmarks/tcp_settings.py --repeats 7 --output $(OUT)/tcp-settings.json --plot $(OUT)/tcp-settings.png
	$(PY) benchmarks/emulated_exchange.py --output $(OUT)/emulated-exchange.json --plot $(OUT)/emulated-exchange.png
	$(PY) benchmarks/shuffle.py --output $(OUT)/shuffle.json --plot $(OUT)/shuffle.png
	$(PY) benchmarks/moe_emulated.py --repeats 7 --output $(OUT)/moe-emulated.json --plot $(OUT)/moe-emulated.png
	# Message sizes as the OSU benchmarks sweep them: two-switch (senders and receivers apart, so no
	# MPI_Alltoall), then two switches of five full-duplex hosts with MPI_Alltoall.
	$(LS) run --topology two-switch:capacity_Bps=100Mbit/s --traffic all-to-all --algorithm liquid --emulate \
		--sizes 1KiB:4MiB:x4 --modes frames,barrier-free,all-at-once,alltoallv --repeats 10 \
		--output $(OUT)/sizes-two-switch.json --plot $(OUT)/sizes-two-switch.png
	$(LS) run --topology hierarchical:d1=5,d2=2,c1=100Mbit/s,c2=100Mbit/s --traffic all-to-all --algorithm liquid \
		--emulate --sizes 1KiB:1MiB:x4 --modes frames,barrier-free,all-at-once,alltoallv,alltoall --repeats 5 \
		--output $(OUT)/sizes-two-switches-full-duplex.json --plot $(OUT)/sizes-two-switches-full-duplex.png
	# An unmodified MPI application with and without the interposition library.
	$(PY) benchmarks/pmpi.py --sizes 64KiB,256KiB,1MiB,4MiB --output $(OUT)/pmpi.json --plot $(OUT)/pmpi.png

# The documentation site (mkdocs.yml, docs/, API pages from the docstrings) into $(OUT)/site:
# open $(OUT)/site/index.html. --strict fails the build on a broken link, anchor or API reference.
docs: $(STAMP)
	$(VENV)/bin/mkdocs build --strict --site-dir $(OUT)/site

# The MPI interposition library (pmpi/build/libliquidsched_pmpi.so) and its test program.
pmpi:
	$(MAKE) -C pmpi

clean:
	rm -rf $(VENV) target $(OUT) pmpi/build
