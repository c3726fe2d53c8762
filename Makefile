# coulomb — convenience targets. Everything goes through CMake + Ninja in ./build.
#   make deps    install the Debian packages (scripts/install-deps.sh; quiet if present)
#   make build   configure (Release) and build everything
#   make demo    deps + build + run the CLI on the KUKA iiwa model
#   make test    deps + build + every ctest test (unit, oracle, install)
#   make bench   deps + build + run the benchmarks (console)
#   make bench-report  rerun the benchmarks and rewrite docs/benchmarks.md
#   make clean   remove ./build

SHELL := /bin/bash
BUILD_DIR ?= build
BUILD_TYPE ?= Release
SHARED_DIR ?= ../shared
CTEST_JOBS ?= 2

# The demo: inverse dynamics of the KUKA iiwa at the README's state
# (q_i = 0.1·(i mod 7), v_i = 0.05·(i mod 5), a_i = 0.2·(i mod 3) − 0.1).
# Switch DEMO_ARGS to e.g. `simulate` once the simulator lands.
DEMO_MODEL ?= $(SHARED_DIR)/models/kuka_iiwa_robot.urdf
DEMO_ARGS ?= dynamics $(DEMO_MODEL) \
  --q 0,0.1,0.2,0.3,0.4,0.5,0.6 \
  --v 0,0.05,0.1,0.15,0.2,0,0.05 \
  --vdot -0.1,0.1,0.3,-0.1,0.1,0.3,-0.1

.PHONY: all deps configure build demo test bench bench-report clean

all: build

deps:
	@bash scripts/install-deps.sh

configure:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

build: configure
	cmake --build $(BUILD_DIR)

# deps first, then build (sequential even under make -j).
demo: deps
	@$(MAKE) --no-print-directory build
	$(BUILD_DIR)/bin/coulomb $(DEMO_ARGS)

test: deps
	@$(MAKE) --no-print-directory build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j$(CTEST_JOBS)

bench: deps
	@$(MAKE) --no-print-directory build
	$(BUILD_DIR)/bin/coulomb_bench

bench-report: deps
	@$(MAKE) --no-print-directory build
	bash scripts/bench_report.sh $(BUILD_DIR)/bin/coulomb_bench docs/benchmarks.md

clean:
	rm -rf $(BUILD_DIR)
