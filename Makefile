# dynscope: the two commands a fresh Debian 12 machine needs are `make run` and `make test`.
# Both install missing packages, configure meson into build/ and compile first.

BUILD ?= build
MESON_OPTS ?=
DYNSCOPE := $(BUILD)/app/dynscope
SAMPLE := data/sample

.PHONY: all deps configure build run test bench clean

all: build

deps:
	@./tools/install-deps.sh

$(BUILD)/build.ninja:
	meson setup $(BUILD) $(MESON_OPTS)

configure: deps $(BUILD)/build.ninja

build: configure
	ninja -C $(BUILD)

# The main job: run the bundled sample model headless and print the per-node table.
run: build
	$(DYNSCOPE) --run $(SAMPLE)/sample-symbol.json --params $(SAMPLE)/sample.params \
	  --input data=$(SAMPLE)/sample-input.npy --repeat 10

# Everything: the normal tree (valgrind pass included), the AddressSanitizer + UBSan tree, and
# each fuzz target for 60 s; ends with "N passed, N failed".
test: build
	./tools/run-tests.sh $(BUILD)

bench: build
	/usr/bin/python3 tools/make_bench_models.py $(BUILD)/bench-models
	DS_BENCH_MODELS=$(BUILD)/bench-models $(BUILD)/bench/ds-bench
	/usr/bin/python3 bench/onnx_peer.py $(BUILD)

clean:
	rm -rf $(BUILD) $(BUILD)-*
