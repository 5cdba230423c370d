# llmsim — the two commands: `make run` (build + main job) and `make test` (build + every test).
# Both install missing Debian packages first (scripts/setup.sh) and are quiet when all is in place.
BUILD  ?= build
PYTHON ?= /usr/bin/python3
JOBS   ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE=$(PYTHON)

.PHONY: all setup setup-test configure build build-main run test test-sanitize fuzz bench validate calibrate check-install clean error-bands

all: build

setup:
	@scripts/setup.sh

# ccache (installed by setup) makes rebuilds of an unchanged tree, and CI re-runs, take seconds.
configure: setup
	@test -f $(BUILD)/CMakeCache.txt || { mkdir -p $(BUILD) && cmake -S . -B $(BUILD) $(CMAKE_FLAGS) \
	  $$(command -v ccache >/dev/null && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache) > $(BUILD)/configure.log 2>&1 || { cat $(BUILD)/configure.log; rm -f $(BUILD)/CMakeCache.txt; exit 1; }; }

setup-test:
	@scripts/setup.sh test

build: configure
	@cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory -s

# The main job needs the CLI and the Python module (its plots) only; the tests and benchmarks build in `make test`,
# so a fresh machine prints the first table sooner (issue 30).
build-main: configure
	@cmake --build $(BUILD) -j $(JOBS) --target llmsim_cli llmsim_python_core -- --no-print-directory -s

run: build-main
	@scripts/main_job.sh $(BUILD)

test: setup-test build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Predictions against the public measurements in ../shared/reference (skips when it is absent).
validate: build
	@scripts/validate.sh $(BUILD)

# The C++ tests under AddressSanitizer + UndefinedBehaviorSanitizer (clang; build-san, shared with `make fuzz`).
test-sanitize:
	@scripts/setup.sh fuzz
	@scripts/test_sanitize.sh

# libFuzzer harnesses over every loader and the CLI parser, FUZZ_SECONDS each, one per core at a time (build-san).
FUZZ_SECONDS ?= 60
fuzz:
	@scripts/setup.sh fuzz
	@scripts/fuzz.sh $(FUZZ_SECONDS)

# Rewrites data/error_bands.json from the validation residuals (then rebuild: it is compiled in).
error-bands: build
	@$(BUILD)/bin/test_validation "[.write_error_bands]"
	@cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory -s

# The benchmarks are not in the default build (bench/CMakeLists.txt): this builds them, and the Python module.
bench: build
	@cmake --build $(BUILD) -j $(JOBS) --target benchmarks -- --no-print-directory -s
	@scripts/bench.sh $(BUILD)

# Measure a real card: make calibrate GPU=rtx4090-24gb OUT=raw.json (then: llmsim calibrate-fit raw.json -o profile.json)
# The calibration programs for every architecture (LLMSIM_CUDA_ARCHITECTURES): the default build of a tree with the tests
# compiles them for the first only, as a check (calibration/CMakeLists.txt).
calibrate: build
	@cmake --build $(BUILD) -j $(JOBS) --target calibration_programs -- --no-print-directory -s
	@calibration/run_all.sh $(BUILD) $(GPU) $(OUT)

# A fresh clone of the committed tree, pip-installed offline into a venv and imported (minutes; see the script).
check-install: setup
	@PYTHON=$(PYTHON) scripts/check_fresh_install.sh

clean:
	rm -rf $(BUILD) out build-san
