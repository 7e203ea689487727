# Rivulet: the two commands a new user runs are `make demo` and `make test`.
# Everything installs from PyPI into .venv; nothing outside it is required.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# pytest-xdist workers; the suite is sized for 2 cores.
JOBS   ?= auto

export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: all install demo test lint formal bench bitstream clean distclean help
all: demo

help:
	@echo "make demo      set up .venv and run the main job"
	@echo "make test      lint and run the whole suite (cocotb+Verilator, Amaranth sim, formal)"
	@echo "make bench     FPGA area/Fmax and throughput benchmarks -> bench/results/"
	@echo "make bitstream BOARD=icebreaker|ulx3s-25f|ulx3s-85f [FABRIC=file.toml]"
	@echo "               fabric + UART bridge -> build/boards/BOARD/top.bin|.bit and report.txt"
	@echo "make clean     remove build outputs (keeps .venv)"

$(STAMP): pyproject.toml
	@echo "== creating $(VENV) with $(PYTHON) and installing pinned dependencies"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $@

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m rivulet.demo

lint: $(STAMP)
	$(BIN)/ruff check .

test: lint
	$(BIN)/python -m pytest -n $(JOBS) --dist worksteal

formal: $(STAMP)
	$(BIN)/python -m pytest -n $(JOBS) -m formal

bench: $(STAMP)
	$(BIN)/python -m bench.run
	$(BIN)/python -m bench.cycle_model
	$(BIN)/python -m bench.rsn_phases
	$(BIN)/python -m bench.faults --rtl 12
	$(BIN)/python -m bench.snn
	$(BIN)/python -m bench.ripple
	$(BIN)/python -m bench.ripple --rtl
	$(BIN)/python -m bench.ripple --rtl --option bypass:2:1
	$(BIN)/python -m bench.ripple --rtl --option bypass:3:2
	$(BIN)/python -m bench.ripple --rtl --fabric examples/fabrics/ripple_large.toml --name ripple_rtl_shared
	$(BIN)/python -m bench.ripple_suite
	$(BIN)/python -m bench.ripple_suite --fabric examples/fabrics/ripple_large.toml --name ripple_suite_shared
	$(BIN)/python -m bench.fuzz
	$(BIN)/python -m bench.lang_fuzz
	$(BIN)/python -m bench.sim_speed
	$(BIN)/python -m bench.random_rtl
	$(BIN)/python -m bench.lang_vs_riptide
	$(BIN)/python -m bench.ripple9 --rtl
	$(BIN)/python -m bench.ripple_density
	$(BIN)/python -m bench.sam
	$(BIN)/python -m bench.queue_bypass
	$(BIN)/python -m bench.register_every
	$(BIN)/python -m bench.ripple --options ripple_rtl ripple_rtl_bypass_every2_lanes1 ripple_rtl_bypass_every3_lanes2
	$(BIN)/python -m bench.pe_fmax
	$(BIN)/python -m bench.sweep

BOARD  ?=
FABRIC ?=
bitstream: $(STAMP)
	@test -n "$(BOARD)" || { echo "make bitstream: say which board, e.g. make bitstream BOARD=icebreaker" \
		"(boards: icebreaker, ulx3s-25f, ulx3s-85f)"; exit 2; }
	$(BIN)/rivulet build --board $(BOARD) $(if $(FABRIC),--fabric $(FABRIC))

clean:
	rm -rf build .pytest_cache .ruff_cache
	find . -name __pycache__ -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV) *.egg-info
