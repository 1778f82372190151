# nnx: the two commands a new user runs are `make run` and `make test`.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
PY := /usr/bin/python3
# Extra configure arguments, e.g. CMAKE_ARGS="-DMLIR_DIR=... -DCUDAToolkit_ROOT=...".
CMAKE_ARGS ?=
# The compiler of a new build directory: clang-22 (scripts/setup.sh installs
# it) where present, with which a cold build takes less than half of g++'s
# time (README); CC=... CXX=... on the command line or in the environment
# pick another. Looked for when configuring, after the setup.
PICK_CLANG := $(if $(filter default,$(origin CXX)),yes,no)
CLANG_FORMAT ?= clang-format-22
# Every C/C++ source and header of the project (not build/, not TableGen).
FORMAT_SOURCES = $(shell find lib include tools unittests fuzz python/src -type f \
  \( -name '*.c' -o -name '*.cpp' -o -name '*.h' -o -name '*.hpp' \) | sort)

.PHONY: setup configure build run test test-zoo check-lit check-unit check-python bench clean \
  format-check format length-check surgery-at-scale setup-sanitizers \
  build-sanitizers test-sanitizers fuzz fuzz-corpus

setup:
	./scripts/setup.sh

$(BUILD_DIR)/build.ninja:
	cc='$(CC)' cxx='$(CXX)'; \
	if [ $(PICK_CLANG) = yes ] && command -v clang++-22 >/dev/null; then \
	  cc=clang-22 cxx=clang++-22; \
	fi; \
	CC=$$cc CXX=$$cxx cmake -G Ninja -S . -B $(BUILD_DIR) \
	  -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS)

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

# Formatting (.clang-format, LLVM style): check without changing anything,
# or rewrite the files in place.
format-check: setup
	$(CLANG_FORMAT) --dry-run --Werror $(FORMAT_SOURCES)

format: setup
	$(CLANG_FORMAT) -i $(FORMAT_SOURCES)

# Functions that fit on a screen: lists any function in lib/, tools/ or
# python/src longer than 100 lines (signature to closing brace) and fails.
length-check:
	$(PY) utils/nnx-function-length.py

# The format check first: it fails in seconds, the build takes minutes.
# ctest runs JOBS tests at a time (each suite is single-threaded; the
# longest start first: their COST in python/CMakeLists.txt).
test: format-check length-check build
	ninja -C $(BUILD_DIR) check-nnx
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

# The whole model zoo (python/tests/test_zoo.py; `make test` runs one
# model per family; and test_torchvision_modules.py, the uncalled modules
# of GoogLeNet, Inception v3 and EfficientNet): every torchvision
# classification and segmentation
# model and pytorch/examples' models, one at a time, compiled without the
# compile cache (the compile times are measured), each model's record in
# $(BUILD_DIR)/zoo; then docs/Python.md's table is rewritten from them
# (utils/zoo-table.py; all records in $(BUILD_DIR)/zoo.json), whether or
# not every model passed.
ZOO_RESULTS = $(abspath $(BUILD_DIR))/zoo
test-zoo: build
	rm -rf $(ZOO_RESULTS) && mkdir -p $(ZOO_RESULTS)
	cd python && env -u NNX_CACHE_DIR NNX_ZOO=all NNX_ZOO_TIMEOUT=1200 \
	  NNX_ZOO_RESULTS=$(ZOO_RESULTS) NNX_BUILD_DIR=$(abspath $(BUILD_DIR)) \
	  OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONDONTWRITEBYTECODE=1 \
	  PYTHONPATH=. $(PY) -m pytest -q -rfxX -p no:cacheprovider \
	  tests/test_zoo.py tests/test_torchvision_modules.py \
	  tests/test_channel_groups_all.py; status=$$?; \
	  $(PY) ../utils/zoo-table.py $(ZOO_RESULTS) --update ../docs/Python.md \
	    --json $(ZOO_RESULTS).json; exit $$status

# The sanitizer build (docs/Reliability.md): clang-22 with ASan + UBSan on
# every nnx source, and the libFuzzer harnesses of fuzz/, in its own directory.
SAN_BUILD_DIR ?= build-sanitizers
SAN_CC ?= clang-22
SAN_CXX ?= clang++-22
# Seconds each harness runs under `make fuzz`, and which harnesses.
FUZZ_SECONDS ?= 600
FUZZERS ?= ir-text ir-bytecode surgery family npy safetensors aot-weights
# Symbolizes ASan's and UBSan's stack traces.
SYMBOLIZER ?= /usr/lib/llvm-22/bin/llvm-symbolizer

setup-sanitizers:
	./scripts/setup.sh --sanitizers

$(SAN_BUILD_DIR)/build.ninja:
	CC=$(SAN_CC) CXX=$(SAN_CXX) cmake -G Ninja -S . -B $(SAN_BUILD_DIR) \
	  -DCMAKE_BUILD_TYPE=Release -DNNX_ENABLE_SANITIZERS=ON \
	  -DNNX_ENABLE_FUZZERS=ON $(CMAKE_ARGS)

build-sanitizers: setup-sanitizers $(SAN_BUILD_DIR)/build.ninja
	ninja -C $(SAN_BUILD_DIR) -j $(JOBS)

# The lit suite and the GoogleTest binaries, built with ASan + UBSan. The
# pytest suites are left out: the bindings are not built (an ASan module
# does not load into an uninstrumented python).
test-sanitizers: build-sanitizers
	ASAN_SYMBOLIZER_PATH=$(SYMBOLIZER) ninja -C $(SAN_BUILD_DIR) check-nnx
	cd $(SAN_BUILD_DIR) && ASAN_SYMBOLIZER_PATH=$(SYMBOLIZER) \
	  ctest --output-on-failure -E '^python-'

# Each harness for FUZZ_SECONDS, one at a time; the new corpus and any
# crash stay in $(SAN_BUILD_DIR)/fuzz/, a line per run in its summary.txt.
fuzz: build-sanitizers
	./fuzz/run-fuzzers.sh $(SAN_BUILD_DIR) $(FUZZ_SECONDS) $(FUZZERS)

# Rewrites the seed corpora of fuzz/corpus/ from the test inputs.
fuzz-corpus: build
	$(PY) fuzz/make-corpus.py --nnx-opt $(BUILD_DIR)/bin/nnx-opt

bench: build
	$(PY) bench/run_all.py --build $(BUILD_DIR)

# Differential surgery at scale (long-running; `make test` runs 60 nets):
# NETS random nets x random widen/deepen/low-rank/drop-layer sequences,
# preservation checked by execution, refusals checked byte-identical.
NETS ?= 1000
SEED ?= 1
surgery-at-scale: build
	$(PY) test/Dialect/NNX/Transforms/preservation/random-edits.py \
	  --opt $(BUILD_DIR)/bin/nnx-opt --run $(BUILD_DIR)/bin/nnx-run \
	  --nets $(NETS) --seed $(SEED) --quiet

clean:
	rm -rf $(BUILD_DIR)
