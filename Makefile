# nnx: the two commands a new user runs are `make run` and `make test`.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
PY := /usr/bin/python3
# Extra configure arguments, e.g. CMAKE_ARGS="-DMLIR_DIR=... -DCUDAToolkit_ROOT=...".
CMAKE_ARGS ?=

.PHONY: setup configure build run test check-lit check-unit check-python bench clean

setup:
	./scripts/setup.sh

$(BUILD_DIR)/build.ninja:
	cmake -G Ninja -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS)

configure: setup $(BUILD_DIR)/build.ninja

build: configure
	ninja -C $(BUILD_DIR) -j $(JOBS)

# The main job: the bundled example model, compiled and run on CPU.
run: build
	./examples/run-example.sh $(BUILD_DIR)

check-lit: build
	ninja -C $(BUILD_DIR) check-nnx

check-unit: build
	cd $(BUILD_DIR) && ctest --output-on-failure

# The Python suites alone (torch reference, export, bindings).
check-python: build
	cd $(BUILD_DIR) && ctest --output-on-failure -R '^python-'

test: build
	ninja -C $(BUILD_DIR) check-nnx
	cd $(BUILD_DIR) && ctest --output-on-failure

bench: build
	$(PY) bench/run_all.py --build $(BUILD_DIR)

clean:
	rm -rf $(BUILD_DIR)
