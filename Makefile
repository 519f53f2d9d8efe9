# kubectl-hami build, test and benchmark entry points.
GO        ?= go
BIN       ?= bin/kubectl-hami
PKG       := github.com/kubectl-hami/kubectl-hami
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo v0.0.0-dev)
COMMIT    ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
DATE      ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS   := -X $(PKG)/internal/version.Version=$(VERSION) -X $(PKG)/internal/version.Commit=$(COMMIT) -X $(PKG)/internal/version.Date=$(DATE)
BENCHTIME ?= 1s
BENCHCOUNT ?= 1

.PHONY: all build test unit lint bench fuzz clean k8s-binaries demo tools

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/kubectl-hami

# demo: the main job on the embedded demo cluster, no cluster needed.
demo:
	@$(GO) run ./cmd/kubectl-hami top --demo
	@echo
	@echo '$$ kubectl hami why-pending llm-serve-2 -n inference --demo'
	@$(GO) run ./cmd/kubectl-hami why-pending llm-serve-2 -n inference --demo

# test: lint, then every package's tests (fuzz seed corpora run as plain tests).
test: lint unit

unit: k8s-binaries tools
	KUBECTL_HAMI_K8S_BIN=$$(bash hack/k8s-binaries.sh | tail -1) $(GO) test -count=1 ./...

# k8s-binaries: build (once, cached outside the repo) the kube-apiserver, kube-scheduler and etcd that
# internal/testenv runs; the first build takes about 15-20 minutes.
k8s-binaries:
	bash hack/k8s-binaries.sh

# tools: kubectl for the plugin test (`kubectl hami ...`), from Debian's kubernetes-client when missing.
tools:
	bash hack/ensure-kubectl.sh

lint:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# bench: the engine benchmarks of docs/benchmarks.md. BENCHCOUNT=10 for benchstat input.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) -count $(BENCHCOUNT) ./internal/engine/...

# fuzz: run each fuzz target for FUZZTIME (the seed corpora already run in `make test`).
FUZZTIME ?= 20s
fuzz:
	@for pkg in ./internal/engine/codec ./internal/snapshot; do \
		for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "== $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

clean:
	rm -rf bin dist
