# llmsim — the two commands: `make run` (build + main job) and `make test` (build + every test).
# Both install missing Debian packages first (scripts/setup.sh) and are quiet when all is in place.
BUILD  ?= build
PYTHON ?= /usr/bin/python3
JOBS   ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE=$(PYTHON)

.PHONY: all setup configure build run test bench validate calibrate install clean

all: build

setup:
	@scripts/setup.sh

configure: setup
	@test -f $(BUILD)/CMakeCache.txt || { mkdir -p $(BUILD) && cmake -S . -B $(BUILD) $(CMAKE_FLAGS) > $(BUILD)/configure.log 2>&1 || { cat $(BUILD)/configure.log; rm -f $(BUILD)/CMakeCache.txt; exit 1; }; }

build: configure
	@cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory -s

run: build
	@scripts/main_job.sh $(BUILD)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	@scripts/bench.sh $(BUILD)

# Measure a real card: make calibrate GPU=rtx4090-24gb OUT=raw.json (then: llmsim calibrate-fit raw.json -o profile.json)
calibrate: build
	@calibration/run_all.sh $(BUILD) $(GPU) $(OUT)

clean:
	rm -rf $(BUILD) out
