# coulomb — convenience targets. Everything goes through CMake + Ninja in ./build.
#   make deps    install the Debian and npm packages (scripts/install-deps.sh; quiet if present)
#   make build   configure (Release) and build everything
#   make demo    deps + build + simulate the embedded default scene (coulomb simulate)
#   make test    deps + build + every ctest test (unit, oracle, install, browser, fidelity), then the
#                Python package's pytest suite (make python-test)
#   make python-test  pip install . into build/python-venv (incremental build in build-python) and
#                run pytest python/tests (scripts/python_test.sh)
#   make bench   deps + build + run the benchmarks (console): coulomb_bench, then coulomb_id_bench
#                (inverse dynamics against the number of contacts; ID_BENCH_ARGS)
#   make bench-peers   coulomb against MuJoCo 4, Drake and Pinocchio, same scenes, same run, in
#                its own venv (build/bench-venv): rewrites docs/benchmarks-peers.md and its plots
#                (scripts/bench_peers.sh; PEERS_SEEDS, PEERS_STEPS_SCALE, PEERS_SCENES)
#   make bench-instructions  instructions per step, coulomb SAP against MuJoCo 4 (Newton, CG), counted by
#                callgrind (exact from run to run, unlike the timings on a shared machine):
#                rewrites docs/benchmarks-instructions.md (scripts/bench_instructions.sh;
#                INSTR_SCENES, INSTR_STEPS_SCALE, INSTR_SEED; ~15 minutes)
#   make bench-report  rerun the benchmarks and rewrite docs/benchmarks.md (and docs/fidelity.md)
#   make fidelity-report  run the analytic checks (coulomb_fidelity) and rewrite docs/fidelity.md
#   make experiments  deps + build + Zapolsky & Drumwright's controller experiments (coulomb
#                experiment id-tables): tables and figures in experiments-out/ (EXPERIMENT_ARGS)
#   make test-sanitize  the C++ tests (and every example scene) under ASan + UBSan, in ./build-sanitize
#   make fuzz    the libFuzzer harnesses of fuzz/ (URDF, scene, MJCF, SDF loaders) with ASan + UBSan, built
#                with clang in ./build-fuzz, FUZZ_SECONDS each (default 3600; scripts/fuzz.sh,
#                docs/reliability.md)
#   make clean   remove ./build (and ./build-python, the Python package's build), ./build-fuzz

SHELL := /bin/bash
BUILD_DIR ?= build
BUILD_TYPE ?= Release
SHARED_DIR ?= ../shared
CTEST_JOBS ?= 2
# Seconds per harness of `make fuzz` (scripts/fuzz.sh; CI runs 60).
FUZZ_SECONDS ?= 3600
# coulomb_id_bench's arguments in `make bench` (~160 benchmarks: short runs).
ID_BENCH_ARGS ?= --benchmark_min_time=0.05
# Extra arguments of `make experiments` (e.g. --duration 10 --jobs 4).
EXPERIMENT_ARGS ?=

# The demo: the main job, `coulomb simulate` on the embedded default scene (the project's
# quadruped standing under PD control with 40 objects dropped around it), outputs in coulomb-out/.
DEMO_ARGS ?= simulate -o coulomb-out

.PHONY: all deps configure build demo test test-sanitize python-test fuzz bench bench-peers bench-instructions \
        bench-report fidelity-report experiments clean

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
	BUILD_DIR=$(BUILD_DIR) bash scripts/python_test.sh

# The C++ test suite (unit, oracle, examples; every example scene through the CLI) against the
# library and the CLI built with AddressSanitizer + UndefinedBehaviorSanitizer (gcc, -O1) in their
# own build directory. The test programs are linked there from the object files of $(BUILD_DIR)
# (built first; COULOMB_TEST_OBJECTS_FROM, tests/CMakeLists.txt): the library and the CLI are
# instrumented, the test code is not, and the tests run the instrumented CLI (COULOMB_CLI). Left
# out: the browser tests (node and Chromium, not our code), the install/downstream test (an
# uninstrumented program linking the instrumented library), and the heap-counting suites
# AllocationTest and SimulatorMemoryTest (they interpose malloc, which ASan owns;
# tests/heap_counter.cc), and SANITIZE_SKIP: the long acceptance runs, each 20 s to 3 min under the
# sanitizers (15–50 times their normal time), whose code the shorter tests run as well. The sweeps
# over every example scene run 0.05 s per scene instead of 0.5 s (COULOMB_TEST_SHORT=1,
# tests/cli_runner.h). Any sanitizer report fails its test. In CI (.ci/run) after `make test`.
SANITIZE_DIR ?= build-sanitize
SANITIZE_SKIP ?= ^(AllocationTest|SimulatorMemoryTest)\.|^ControlAcceptanceTest\.(QpMuWalksEveryPlanarTerrainWithoutFalling|QpMuTrotsStraightAtTheCommandedSpeed|TouchdownConsistencyRemovesThePredictedLiftOffSpikes|WithoutTorqueFeedbackTheNormalForceIsPredictedWithinAFewPercent)$$|^IdForwardCheckTest\.(NearRigidContactMatchesWithinTwoPercent|OtherModelsAreReported)$$|^ClutterAcceptanceTest\.BlockSparsePathMatchesTheDensePathAcrossRegimes$$|^Mindiff\.(ThreeContactsOnAPointMassTimed|TwoContactCoulombLcpHas4096Leaves)$$|^LStableSimulation\.A1StandsOnItsFeetLikeUnderSap$$|^LStablePaper\.FrictionalStackOfHundredSpheresSettles$$|^IdChatterTest\.SlowMotionTorquesAreSmoothUpToTheNoise$$|^TrackingControllerTest\.A1StandsUnderEveryController$$|^(mutate_cli_xml|fidelity_quick)$$
test-sanitize: deps
	@$(MAKE) --no-print-directory configure
	cmake --build $(BUILD_DIR) --target coulomb_tests coulomb_oracle_tests
	cmake -S . -B $(SANITIZE_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release -DCOULOMB_SANITIZE=address,undefined \
	  -DCOULOMB_BUILD_BENCH=OFF -DCOULOMB_TEST_OBJECTS_FROM=$(abspath $(BUILD_DIR))
	cmake --build $(SANITIZE_DIR)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/scripts/lsan.supp:print_suppressions=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 COULOMB_TEST_SHORT=1 \
	  ctest --test-dir $(SANITIZE_DIR) --output-on-failure -j$(CTEST_JOBS) -LE 'browser|install' \
	    -E '$(SANITIZE_SKIP)'

# The libFuzzer harnesses (clang, ASan + UBSan) in their own build directory, FUZZ_SECONDS each.
fuzz: deps
	SHARED_DIR=$(SHARED_DIR) bash scripts/fuzz.sh $(FUZZ_SECONDS)

# The Python package alone (needs the coulomb tool of `make build` for the bitwise comparison).
python-test: deps
	@$(MAKE) --no-print-directory configure
	cmake --build $(BUILD_DIR) --target coulomb_cli
	BUILD_DIR=$(BUILD_DIR) bash scripts/python_test.sh

bench: deps
	@$(MAKE) --no-print-directory build
	$(BUILD_DIR)/bin/coulomb_bench
	$(BUILD_DIR)/bin/coulomb_id_bench $(ID_BENCH_ARGS)
	@$(MAKE) --no-print-directory bench-peers

# The peers (MuJoCo 4, Drake, Pinocchio) from their Python packages in build/bench-venv; builds
# only what it needs (libcoulomb, coulomb_peer_bench, the Pinocchio bench).
bench-peers: deps
	@$(MAKE) --no-print-directory configure
	BUILD_DIR=$(BUILD_DIR) bash scripts/bench_peers.sh docs/benchmarks-peers.md

# Callgrind's instruction counts inside the step call, coulomb against MuJoCo 4 (the same venv).
bench-instructions: deps
	@$(MAKE) --no-print-directory configure
	BUILD_DIR=$(BUILD_DIR) bash scripts/bench_instructions.sh docs/benchmarks-instructions.md

bench-report: deps
	@$(MAKE) --no-print-directory build
	bash scripts/bench_report.sh $(BUILD_DIR)/bin/coulomb_bench docs/benchmarks.md
	bash scripts/fidelity_report.sh $(BUILD_DIR)/bin/coulomb_fidelity docs/fidelity.md

# Only coulomb_fidelity is built (it needs libcoulomb alone), then docs/fidelity.md is rewritten.
fidelity-report: deps
	@$(MAKE) --no-print-directory configure
	cmake --build $(BUILD_DIR) --target coulomb_fidelity
	bash scripts/fidelity_report.sh $(BUILD_DIR)/bin/coulomb_fidelity docs/fidelity.md

# Every controller on every terrain for 30 simulated seconds (about 20 minutes on 2 cores); nothing
# is committed: the results stay in experiments-out/ (ignored by git).
experiments: deps
	@$(MAKE) --no-print-directory build
	$(BUILD_DIR)/bin/coulomb experiment id-tables -o experiments-out $(EXPERIMENT_ARGS)

clean:
	rm -rf $(BUILD_DIR) $(BUILD_DIR)-python build-fuzz $(SANITIZE_DIR)
