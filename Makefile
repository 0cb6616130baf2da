# sigproc build, test and GPU targets. `make help` lists them.
GO        ?= go
BUILD     ?= build
VERSION   ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X main.version=$(VERSION)
FUZZTIME  ?= 5s

# CUDA: on x86_64 the pinned CUDA 11.8 driver headers and libcuda stub from
# Debian's nvidia-cuda-dev (gorgonia.org/cu does not compile against CUDA 13
# headers); on a Jetson (aarch64) JetPack's own toolkit.
ARCH      := $(shell uname -m)
CUDA_DIR  ?= .cuda
ifeq ($(ARCH),aarch64)
CUDA_HOME    ?= /usr/local/cuda
CUDA_INCLUDE ?= $(CUDA_HOME)/include
CUDA_LIB     ?= $(CUDA_HOME)/lib64/stubs
CUDA_DEPS    :=
else
CUDA_INCLUDE ?= $(CURDIR)/$(CUDA_DIR)/usr/include
CUDA_LIB     ?= $(CURDIR)/$(CUDA_DIR)/usr/lib/x86_64-linux-gnu/stubs
CUDA_DEPS    := cuda-headers
endif
CUDA_ENV  := CGO_ENABLED=1 CGO_CFLAGS="-I$(CUDA_INCLUDE)" CGO_LDFLAGS="-L$(CUDA_LIB)"
NVCC      ?= nvcc

# Cross-build for a Jetson (linux/arm64) on an x86_64 machine: Debian's
# aarch64 cross compiler, the same pinned headers and the arm64 libcuda stub.
ARM64_CC        ?= aarch64-linux-gnu-gcc
CUDA_ARM64_DIR  ?= .cuda-arm64
CUDA_ARM64_ENV  := GOOS=linux GOARCH=arm64 CGO_ENABLED=1 CC=$(ARM64_CC) \
                   CGO_CFLAGS="-I$(CURDIR)/$(CUDA_ARM64_DIR)/usr/include" \
                   CGO_LDFLAGS="-L$(CURDIR)/$(CUDA_ARM64_DIR)/usr/lib/aarch64-linux-gnu/stubs"
PTX_ARCH  ?= compute_75

.PHONY: help build run test test-race test-arm64 test-arm64-deps fuzz vet fmt-check ci scipy-deps gr-deps chromium-deps kernel-sim-ci cuda cuda-headers cuda-vet cuda-test-bin cuda-arm64 cuda-arm64-deps ptx ptx-check ptx-deps kernel-sim bench clean

help:
	@echo "make build          pure-Go binary ($(BUILD)/sigproc), no cgo"
	@echo "make run            run the default config (synthetic source, CPU backend)"
	@echo "make test           unit tests, race tests, short fuzz runs (what CI runs)"
	@echo "make test-arm64     the pure-Go tests for linux/arm64 (Jetson), run under qemu-user"
	@echo "make ci             what CI runs (.ci/run): scipy and GNU Radio for the reference and interop tests, test, arm64 tests, vet, gofmt, the cuda compile check, the kernel simulator, arm64 builds, the PTX check"
	@echo "make gr-deps        install GNU Radio (Debian) for the zmq interop tests, when missing"
	@echo "make chromium-deps  install Debian's chromium for the control page's browser test, when missing"
	@echo "make cuda           $(BUILD)/sigproc-cuda (+ $(BUILD)/sigproc beside it for the CPU fallback)"
	@echo "make cuda-test-bin  GPU test binaries $(BUILD)/{cuda,gpubench,cudrv}.test (+ $(BUILD)/COMMIT) for scripts/gpu-check.sh on a GPU machine"
	@echo "make cuda-arm64     cross-build $(BUILD)/sigproc-cuda-linux-arm64 (+ pure $(BUILD)/sigproc-linux-arm64) for a Jetson"
	@echo "make ptx            rebuild kernels/*.ptx from kernels/*.cu (needs nvcc; the committed PTX is Debian's nvidia-cuda-toolkit 11.8)"
	@echo "make ptx-check      check that kernels/*.ptx is what kernels/*.cu builds to (installs Debian's nvcc when root and missing)"
	@echo "make kernel-sim     check the persistent kernel's compute phase, the filter bank kernel and the zero-copy FIR and chain kernels (their threads as coroutines) in host simulators (needs g++, all but the first built with ASan; no GPU)"
	@echo "make bench          CPU benchmarks"

build:
	CGO_ENABLED=0 $(GO) build -ldflags '$(LDFLAGS)' -o $(BUILD)/sigproc ./cmd/sigproc

run:
	$(GO) run ./cmd/sigproc run -c configs/synthetic-cpu.yaml

# The README's test command; .ci/run calls it.
test:
	$(GO) test -count=1 ./...
	$(GO) test -count=1 -race ./pipeline/... ./probe/... ./capture/... ./sink/... ./metrics/... ./control/... ./backend/cpu/... ./cmd/...
	CGO_ENABLED=0 $(GO) test -count=1 -tags purego ./filter/... ./mixer/...
	$(MAKE) --no-print-directory fuzz

# Short fuzz runs of every Fuzz target. Minimizing a new input may take a
# second, not the default minute: the minute outlasted a short run, whose
# workers then sat minimizing (0 execs/s) until the deadline failed it. A
# failing run prints its log; one that left no crasher in testdata/fuzz
# (the fuzzer's own worker hiccup on a loaded 2-core box) is retried once,
# and a crasher always fails.
fuzz:
	@set -e; log=$$(mktemp); for pkg in ./config ./capture ./filter ./internal/zmq; do \
	  for fz in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "fuzz $$pkg $$fz ($(FUZZTIME))"; \
	    if ! $(GO) test -run '^$$' -fuzz "^$$fz$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 1s $$pkg >$$log 2>&1; then \
	      cat $$log; \
	      if ls $$pkg/testdata/fuzz/$$fz/* >/dev/null 2>&1 && [ -n "$$(git status --porcelain -- $$pkg/testdata/fuzz/$$fz)" ]; then \
	        echo "fuzz $$pkg $$fz: new crasher in $$pkg/testdata/fuzz/$$fz"; exit 1; fi; \
	      echo "fuzz $$pkg $$fz: failed without a crasher; retrying once"; \
	      $(GO) test -run '^$$' -fuzz "^$$fz$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 1s $$pkg || exit 1; \
	    fi; \
	  done; \
	done; rm -f $$log

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# The pure-Go tests built for linux/arm64 (what ships to a Jetson) and run
# under qemu-user, so the parsers, IIO and ALSA decoding, the generic FIR
# kernel and the sinks are executed, not only compiled. cmd/ is left out: its
# tests build and run a host binary. About a minute on 2 cores.
QEMU_ARM64 ?= qemu-aarch64-static
ARM64_PKGS ?= ./capture/... ./config/... ./filter/... ./sink/... ./pipeline/... ./metrics/... ./probe/... ./internal/...
test-arm64: test-arm64-deps
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) test -count=1 -exec $(QEMU_ARM64) $(ARM64_PKGS)

# qemu-user-static comes from apt when missing and we are root (CI).
test-arm64-deps:
	@command -v $(QEMU_ARM64) >/dev/null || { \
	  if [ "$$(id -u)" != 0 ]; then \
	    echo "test-arm64: $(QEMU_ARM64) missing; run: sudo apt-get install -y qemu-user-static" >&2; exit 1; \
	  fi; \
	  echo "apt-get install qemu-user-static"; \
	  apt-get install -y -qq --no-install-recommends qemu-user-static >/dev/null || \
	    { apt-get update -qq && apt-get install -y -qq --no-install-recommends qemu-user-static >/dev/null; }; }


# CI (.ci/run calls this, on a machine without a GPU): the README's test
# command, the arm64 tests under qemu, vet and gofmt, the cuda build tag compiled against the pinned
# CUDA 11.8 headers (fetched from Debian non-free; CI runs as root), the
# zero-copy kernel's compute phase in the host simulator, the linux/arm64
# builds a Jetson runs, and the committed PTX against its sources (ptx-check).
ci: scipy-deps gr-deps chromium-deps test test-arm64 vet fmt-check cuda-vet cuda cuda-test-bin kernel-sim-ci cuda-arm64 ptx-check

# In CI a test whose external reference is missing fails instead of skipping.
ci: export CI = true

# The filter tests compare against scipy.signal (Debian's python3-scipy in
# /usr/bin/python3); CI runs as root and installs it when it is missing.
scipy-deps:
	@if /usr/bin/python3 -c 'import numpy, scipy.signal' 2>/dev/null; then :; \
	elif [ "$$(id -u)" != 0 ]; then \
	  echo "scipy-deps: /usr/bin/python3 lacks scipy; run: sudo apt-get install -y python3-scipy" >&2; exit 1; \
	else \
	  echo "apt-get install python3-scipy"; \
	  apt-get install -y -qq --no-install-recommends python3-scipy >/dev/null || \
	    { apt-get update -qq && apt-get install -y -qq --no-install-recommends python3-scipy >/dev/null; }; \
	fi

# kernel-sim needs a C++ compiler; a machine without one skips it, saying so.
kernel-sim-ci:
	@if command -v $(CXX) >/dev/null; then $(MAKE) --no-print-directory kernel-sim; else echo "no C++ compiler: kernel-sim skipped"; fi

# GNU Radio 3.10 (Debian) for the ZeroMQ interop tests, which fail rather
# than skip under CI=true when it is missing. Installed when root.
GR_PYTHON ?= /usr/bin/python3
gr-deps:
	@if ! $(GR_PYTHON) -c 'from gnuradio import zeromq' >/dev/null 2>&1; then \
	  if [ "$$(id -u)" != 0 ]; then \
	    echo "gr-deps: GNU Radio missing; run: sudo apt-get install -y --no-install-recommends gnuradio" >&2; exit 1; \
	  fi; \
	  echo "apt-get install gnuradio"; \
	  apt-get install -y -qq --no-install-recommends gnuradio >/dev/null || \
	    { apt-get update -qq && apt-get install -y -qq --no-install-recommends gnuradio >/dev/null; }; \
	fi
	@$(GR_PYTHON) -c 'from gnuradio import gr; print("GNU Radio", gr.version())'

# The control page's browser test drives Debian's chromium headless
# (chromedp); CI runs as root and installs it when it is missing.
chromium-deps:
	@if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" != 0 ]; then \
	  echo "chromium-deps: chromium missing; run: sudo apt-get install -y --no-install-recommends chromium" >&2; exit 1; \
	else \
	  echo "apt-get install chromium"; \
	  apt-get install -y -qq --no-install-recommends chromium >/dev/null || \
	    { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null; }; \
	fi

cuda-headers:
	./scripts/fetch-cuda-headers.sh $(CUDA_DIR)

cuda: $(CUDA_DEPS) build
	$(CUDA_ENV) $(GO) build -tags cuda -ldflags '$(LDFLAGS)' -o $(BUILD)/sigproc-cuda ./cmd/sigproc

cuda-vet: $(CUDA_DEPS)
	$(CUDA_ENV) $(GO) vet -tags cuda ./...

# One test binary per package with GPU tests, to copy to a GPU machine;
# build/COMMIT names the build for scripts/gpu-check.sh, which runs them
# there without git.
GPU_TEST_PKGS := backend/cuda bench/gpubench internal/cudrv
cuda-test-bin: $(CUDA_DEPS)
	@mkdir -p $(BUILD) && echo $(VERSION) > $(BUILD)/COMMIT
	@for p in $(GPU_TEST_PKGS); do \
	  echo "go test -c -tags cuda -o $(BUILD)/$$(basename $$p).test ./$$p"; \
	  $(CUDA_ENV) $(GO) test -c -tags cuda -ldflags '-s -w' -o $(BUILD)/$$(basename $$p).test ./$$p || exit 1; \
	done

# The cross compiler, its libc headers and file(1) come from apt when missing
# and we are root (gcc-aarch64-linux-gnu only recommends the libc headers).
cuda-arm64-deps:
	@need=; echo '#include <stdio.h>' | $(ARM64_CC) -E -x c - >/dev/null 2>&1 || \
	  need="$$need gcc-aarch64-linux-gnu libc6-dev-arm64-cross"; \
	command -v file >/dev/null || need="$$need file"; \
	if [ -n "$$need" ]; then \
	  if [ "$$(id -u)" != 0 ]; then \
	    echo "cuda-arm64: missing$$need; run: sudo apt-get install -y$$need (or set ARM64_CC)" >&2; exit 1; \
	  fi; \
	  echo "apt-get install$$need"; \
	  apt-get install -y -qq --no-install-recommends $$need >/dev/null || \
	    { apt-get update -qq && apt-get install -y -qq --no-install-recommends $$need >/dev/null; }; \
	fi
	./scripts/fetch-cuda-headers.sh $(CUDA_ARM64_DIR) arm64

cuda-arm64: cuda-arm64-deps
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build -ldflags '$(LDFLAGS)' -o $(BUILD)/sigproc-linux-arm64 ./cmd/sigproc
	$(CUDA_ARM64_ENV) $(GO) build -tags cuda -ldflags '$(LDFLAGS)' -o $(BUILD)/sigproc-cuda-linux-arm64 ./cmd/sigproc
	@for b in $(BUILD)/sigproc-linux-arm64 $(BUILD)/sigproc-cuda-linux-arm64; do \
	  out=$$(file -b $$b); echo "$$b: $$out"; \
	  case $$out in *"ARM aarch64"*) ;; *) echo "cuda-arm64: $$b is not an aarch64 ELF" >&2; exit 1;; esac; \
	done

# nvcc 13 stamps its PTX with ISA 9.0, which only a CUDA 13 driver can JIT.
# The kernels use nothing newer than ISA 7.0 (CUDA 11.0: volatile and
# shuffle, bar.red, nanosleep, %globaltimer), so the embedded PTX declares
# 7.0 and loads on older drivers too, JetPack 5 (CUDA 11.4) included.
PTX_ISA ?= 7.0
# Every kernels/*.cu is its own module and PTX file, embedded by kernels/embed.go.
KERNELS := $(wildcard kernels/*.cu)
# The committed PTX is Debian's nvcc 11.8 (nvidia-cuda-toolkit), and CI
# checks that it is what the sources build to (ptx-check).
#
# nvcc 11.8 is not deterministic on fir.cu: about 1 build in 5 differs
# (renumbered registers, and at times another choice of loads: 16 of 20
# builds agreed, the 4 others all differed from each other); the other
# kernels came out the same in 10 builds of 10. cicc's output depends on
# heap addresses (containers keyed by pointers), so on ASLR: with it off
# (setarch -R) 20 builds of 20 agree, but on one output per working
# directory and TMPDIR (another of either gave one of the rare outputs),
# so that would pin the answer to one machine's paths rather than to the
# source. No nvcc or cicc option orders it. What every machine shares is
# the most frequent output, so `make ptx` keeps the most frequent of
# PTX_BUILDS builds of each kernel, and ptx-check rebuilds a kernel up to
# PTX_TRIES times and passes on the first build equal to the committed
# file byte for byte (a false failure takes PTX_TRIES rare builds in a
# row: about 0.2^8, 3e-6, for fir.cu).
PTX_BUILDS ?= 5
PTX_TRIES  ?= 8
# nvcc_ptx builds $(1) into $(2) as the committed PTX is built, with Go's
# generated-file line first so that readers and tools skip it (the driver's
# PTX JIT takes // comments; nothing reads the first line).
nvcc_ptx = { $(NVCC) -ptx -arch=$(PTX_ARCH) -o $(2) $(1) || exit 1; }; \
  sed -i -e 's/^\.version .*/.version $(PTX_ISA)/' \
    -e "1i // Code generated by make ptx from $$(basename $(1)); DO NOT EDIT." $(2)
ptx:
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	for cu in $(KERNELS); do \
	  echo "$(NVCC) -ptx -arch=$(PTX_ARCH) -o $${cu%.cu}.ptx $$cu (the most frequent of $(PTX_BUILDS) builds)"; \
	  for i in $$(seq $(PTX_BUILDS)); do $(call nvcc_ptx,$$cu,$$tmp/$$i.ptx); done; \
	  best=$$(cd "$$tmp" && md5sum *.ptx | sort | uniq -c -w32 | sort -k1,1nr -s | awk 'NR == 1 {print $$3}'); \
	  cp "$$tmp/$$best" $${cu%.cu}.ptx; rm -f "$$tmp"/*.ptx; \
	done

# ptx-check (CI): every kernels/*.cu builds to its committed .ptx, and no
# .ptx is left without its source. Needs the nvcc that made them, named
# in each PTX's header (Debian's 11.8: ptx-deps installs it when root).
ptx-check: ptx-deps
	@set -e; want=$$(sed -n 's|^// \(Cuda compilation tools, .*\)|\1|p' kernels/fir.ptx); \
	have=$$($(NVCC) --version | grep '^Cuda compilation tools'); \
	if [ "$$want" != "$$have" ]; then \
	  echo "ptx-check: the committed PTX is from '$$want', $(NVCC) is '$$have' (Debian's nvidia-cuda-toolkit has it)" >&2; exit 1; fi; \
	tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; bad=0; \
	for ptx in kernels/*.ptx; do \
	  [ -f "$${ptx%.ptx}.cu" ] || { echo "ptx-check: $$ptx has no source $${ptx%.ptx}.cu; delete it" >&2; bad=1; }; \
	done; \
	for cu in $(KERNELS); do \
	  ptx=$${cu%.cu}.ptx; ok=; \
	  for i in $$(seq $(PTX_TRIES)); do \
	    $(call nvcc_ptx,$$cu,$$tmp/k.ptx); \
	    if cmp -s "$$tmp/k.ptx" $$ptx; then ok=$$i; break; fi; \
	  done; \
	  if [ -n "$$ok" ]; then echo "ptx-check: $$ptx is what $$cu builds to (build $$ok)"; \
	  else echo "ptx-check: $$ptx differs from $$cu in $(PTX_TRIES) builds; run make ptx and commit it. Last build against it:" >&2; \
	    diff $$ptx "$$tmp/k.ptx" | head -20 >&2 || true; bad=1; fi; \
	done; \
	exit $$bad

# Debian's nvcc 11.8 (nvidia-cuda-toolkit, in contrib/non-free, about 3
# minutes to fetch and install) comes from apt when nvcc is missing and we
# are root (CI).
ptx-deps:
	@command -v $(NVCC) >/dev/null || { \
	  if [ "$$(id -u)" != 0 ]; then \
	    echo "ptx-check: $(NVCC) missing; run: sudo apt-get install -y --no-install-recommends nvidia-cuda-toolkit (Debian contrib non-free)" >&2; exit 1; \
	  fi; \
	  ./scripts/apt-non-free.sh nvidia-cuda-toolkit; \
	  echo "apt-get install nvidia-cuda-toolkit"; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nvidia-cuda-toolkit >/dev/null || \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nvidia-cuda-toolkit >/dev/null; }; }

# The zero-copy kernel's compute helpers, extracted from kernels/fir.cu and
# run on the CPU with every shared-memory load bounds- and alignment-checked
# against a float64 convolution, the filter bank kernel of kernels/chain.cu
# against its definition, and the zero-copy FIR and chain kernels with their
# threads as coroutines, driven by backend/cuda's TestZCFIRSim and
# TestZCChainSim against the CPU backend (kernels/sim/README.md; -w: the
# kernels are CUDA, and their unroll pragmas and extern initialiser warn on
# the host; ASan warns once that swapcontext may confuse it, and found
# nothing).
CXX ?= g++
kernel-sim:
	mkdir -p $(BUILD)
	cd kernels/sim && sh gen.sh ../fir.cu && $(CXX) -O2 -o ../../$(BUILD)/kernel-sim sim.cpp
	@$(BUILD)/kernel-sim > $(BUILD)/kernel-sim.log || { grep -v '^ok' $(BUILD)/kernel-sim.log | tail -20; exit 1; }
	@tail -1 $(BUILD)/kernel-sim.log
	cd kernels/sim && $(CXX) -O2 -fsanitize=address,undefined -fno-sanitize-recover=undefined -w -o ../../$(BUILD)/bank-sim bank.cpp
	@$(BUILD)/bank-sim > $(BUILD)/bank-sim.log || { grep -v '^ok' $(BUILD)/bank-sim.log | tail -20; exit 1; }
	@tail -1 $(BUILD)/bank-sim.log
	cd kernels/sim && $(CXX) -O2 -fsanitize=address,undefined -fno-sanitize-recover=undefined -w -o ../../$(BUILD)/zchain-sim zchain.cpp
	cd kernels/sim && $(CXX) -O2 -fsanitize=address,undefined -fno-sanitize-recover=undefined -w -o ../../$(BUILD)/firp-sim firp.cpp
	SIGPROC_ZCHAIN_SIM=$(abspath $(BUILD)/zchain-sim) SIGPROC_FIRP_SIM=$(abspath $(BUILD)/firp-sim) \
	  $(GO) test -count=1 -run '^(TestZCChainSim|TestZCFIRSim)$$' ./backend/cuda

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./filter ./pipeline ./internal/... ./capture ./sink

clean:
	rm -rf $(BUILD)
