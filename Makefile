# kubectl-hami build, test and benchmark entry points.
GO        ?= go
BIN       ?= bin/kubectl-hami
PKG       := github.com/kubectl-hami/kubectl-hami
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo v0.0.0-dev)
COMMIT    ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
# DATE is the commit's date, not the clock's: the same tree links to the same binary, so `make demo` and
# `make build` reuse Go's build cache instead of relinking the 120 MB binary on every run (reproducible builds).
DATE      ?= $(shell TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null || date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS   := -X $(PKG)/internal/version.Version=$(VERSION) -X $(PKG)/internal/version.Commit=$(COMMIT) -X $(PKG)/internal/version.Date=$(DATE)
BENCHTIME ?= 1s
BENCHCOUNT ?= 1

.PHONY: all build test unit vet lint bench bench-compare bench-instr fuzz clean k8s-binaries demo tools soak soak-extender soak-worlds soak-oracle soak-hamioracle
.PHONY: dist krew-manifest test-release test-helm completion

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/kubectl-hami

# demo: the main job on the embedded demo cluster, no cluster needed.
# (the terminal UI on a terminal; the tables when stdout is not one)
demo:
	@test -x $(BIN) || echo "building $(BIN) first (several minutes on a new machine: every dependency compiles once; later runs reuse the build)..."
	@$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/kubectl-hami
	@$(BIN) top --demo

# test: vet and gofmt, then every package's tests (fuzz seed corpora run as plain tests). golangci-lint is
# `make lint`, kept out of `make test` and .ci/run for their time.
test: vet unit

unit: k8s-binaries tools
	KUBECTL_HAMI_K8S_BIN=$$(bash hack/k8s-binaries.sh | tail -1) $(GO) test -count=1 ./...
	# The engine's shared state under concurrent evaluations (the extender's reader lock, parallel node ranges);
	# the UI's node views read while the world applies changes.
	$(GO) test -race -count=1 -run 'Concurrent|Parallel' ./internal/engine/ ./internal/tui/

# k8s-binaries: build (once, cached outside the repo) the kube-apiserver, kube-scheduler and etcd that
# internal/testenv runs; the first build takes about 15-20 minutes.
k8s-binaries:
	bash hack/k8s-binaries.sh

# tools: kubectl for the plugin test (`kubectl hami ...`), from Debian's kubernetes-client when missing.
tools:
	bash hack/ensure-kubectl.sh
	bash hack/ensure-tmux.sh

# vet: go vet and the gofmt check (part of `make test`).
vet:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# lint: vet and gofmt, then golangci-lint with .golangci.yml. GOLANGCI_LINT names an installed binary; without
# it, bin/golangci-lint is installed once from its Go module (GOLANGCI_LINT_VERSION) by `go install`.
GOLANGCI_LINT_VERSION ?= v2.15.0
GOLANGCI_LINT ?= bin/golangci-lint
lint: vet $(GOLANGCI_LINT)
	$(GOLANGCI_LINT) run ./...

bin/golangci-lint:
	GOBIN=$(CURDIR)/bin $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

# bench: the engine benchmarks of docs/benchmarks.md. BENCHCOUNT=10 for benchstat input.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) -count $(BENCHCOUNT) ./internal/engine/... ./internal/snapshot/ ./internal/tui/

# bench-compare: the regression gate. BASE's and the working tree's benchmark binaries run interleaved on one
# core (engine, read path, extender round trip, TUI first frame); benchstat's table goes to stdout and
# bin/bench-compare/. make bench-compare BASE=<commit> [COUNT=6] [SETS=regex]; see docs/benchmarks.md.
bench-compare:
	BASE='$(BASE)' GO='$(GO)' bash hack/bench-compare.sh

# bench-instr: instructions per operation of the engine's small benchmarks, BASE against the working tree, by
# valgrind's cachegrind (not moved by the machine's load). make bench-instr BASE=<commit>; see docs/benchmarks.md.
bench-instr:
	GO='$(GO)' bash hack/bench-instr.sh '$(BASE)'

# fuzz: run each fuzz target for FUZZTIME (the seed corpora already run in `make test`).
FUZZTIME ?= 20s
fuzz:
	@for pkg in ./internal/codec ./internal/engine ./internal/snapshot ./internal/extender; do \
		for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "== $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

# soak: the long runs kept out of `make test`: fault runs on the real control plane and generated worlds.
soak: soak-extender soak-worlds soak-oracle

# soak-extender: the shipped serve-extender behind kube-scheduler, a burst of GPU pods and mid-burst a
# SIGKILL of the extender or a kube-apiserver restart; with the Deployment's flags, a 200-pod burst and a
# SIGKILL of the leader; see docs/benchmarks.md (fault recovery).
soak-extender: k8s-binaries
	KUBECTL_HAMI_K8S_BIN=$$(bash hack/k8s-binaries.sh | tail -1) KUBECTL_HAMI_SOAK=1 \
		$(GO) test -count=1 -v -timeout 30m -run '^TestSoak' ./internal/extender/ ./internal/agent/deviceplugin/

# soak-worlds: WORLDS generated clusters (from WORLD_SEED) through every surface: the commands, the terminal
# UI's views and drills, the extender's filter/prioritize/bind. A failure names its seed: rerun it with
# WORLD_SEED=<seed> WORLDS=1.
WORLDS ?= 10000
WORLD_SEED ?= 1
soak-worlds:
	@mkdir -p bin
	@WORLDS=$(WORLDS) WORLD_SEED=$(WORLD_SEED) $(GO) test -count=1 -timeout 0 -v -run 'TestGeneratedWorlds' \
		./internal/cli/ ./internal/tui/ ./internal/extender/ > bin/soak-worlds.log 2>&1; status=$$?; \
		grep -E '^(--- |ok|FAIL)|worlds from seed|seed [0-9]+' bin/soak-worlds.log; exit $$status

# soak-oracle: the real kube-scheduler as the oracle of what-if's verdict (internal/oracle, docs/engine.md): WORLDS
# generated worlds with kube constraints (700 unless given, 2,197 pending pods, 17 minutes) from WORLD_SEED on
# one control plane of deploy/extender. It fails on any disagreement; ORACLE_REPORT=1 only prints the table. The
# table goes to bin/soak-oracle.txt, the log to bin/soak-oracle.log.
soak-oracle: ORACLE_WORLDS = $(if $(filter command line environment,$(origin WORLDS)),$(WORLDS),700)
soak-oracle: k8s-binaries
	@mkdir -p bin
	@KUBECTL_HAMI_K8S_BIN=$$(bash hack/k8s-binaries.sh | tail -1) WORLDS=$(ORACLE_WORLDS) WORLD_SEED=$(WORLD_SEED) \
		ORACLE_REPORT_FILE=$(CURDIR)/bin/soak-oracle.txt $(GO) test -count=1 -timeout 0 -v -run '^TestOracle$$' \
		./internal/oracle/ > bin/soak-oracle.log 2>&1; status=$$?; \
		cat bin/soak-oracle.txt 2>/dev/null; grep -E '^(--- |ok|FAIL)' bin/soak-oracle.log; exit $$status

# soak-hamioracle: HAMi v2.10.0's own scheduler beside what-if (hack/hamioracle, docs/compatibility.md): every unit
# of issue 27's table, SCENARIOS each (500 unless given) with and without a ResourceQuota, 2 batches at a time;
# needs a git mirror of HAMi (HAMI_MIRROR) and downloads HAMi's modules on the first run. Reports and each
# disagreement class's smallest example (SHRINK=1: made smaller) go to bin/hamioracle/, the table to
# bin/hamioracle/table.md. It reports; it does not fail on disagreements.
SCENARIOS ?= 500
soak-hamioracle:
	hack/hamioracle/soak.sh $(SCENARIOS) bin/hamioracle 2

clean:
	rm -rf bin dist

# dist: release archives for linux/amd64 (cgo, for the node agent), linux/arm64, darwin/amd64, darwin/arm64 and
# windows/amd64 (CGO off), each with the binary, LICENSE and kubectl_complete-hami, plus SHA256SUMS and, when
# VERSION is vX.Y.Z, the krew manifest of these archives (dist/hami.yaml). See hack/dist.sh.
DIST_DIR ?= dist
dist:
	VERSION='$(VERSION)' LDFLAGS='$(LDFLAGS)' GO='$(GO)' DIST_DIR='$(DIST_DIR)' bash hack/dist.sh

# krew-manifest: render krew.yaml from hack/krew.yaml.tmpl with the sha256 of each archive of `make dist` and
# its GitHub release download URL. VERSION must be vX.Y.Z: make krew-manifest VERSION=v0.1.0
krew-manifest: dist
	$(GO) run ./hack/release manifest -template hack/krew.yaml.tmpl -version '$(VERSION)' -dist '$(DIST_DIR)' -out krew.yaml

# test-release: build krew from its Go module (cached), validate the manifest with krew's validate-krew-manifest
# (which installs every platform's archive), install the linux/amd64 archive into a temporary krew root and run
# `kubectl hami version` and completion through kubectl. See hack/test-release.sh. Then the Helm chart's checks
# (helm built once from its Go module, cached): lint, helm template = kustomize build, helm install on a real
# kube-apiserver with the attack probes, the take-over from HAMi. See hack/test-helm.sh.
test-release: tools k8s-binaries
	GO='$(GO)' bash hack/test-release.sh
	GO='$(GO)' bash hack/test-helm.sh

# test-helm: the Helm chart's checks alone (part of test-release).
test-helm: k8s-binaries
	GO='$(GO)' bash hack/test-helm.sh

# completion: the shell completion scripts of kubectl-hami into bin/completion (bash, zsh, fish, powershell);
# `kubectl hami <TAB>` uses hack/kubectl_complete-hami instead (docs/install.md).
completion:
	@mkdir -p bin/completion
	CGO_ENABLED=0 $(GO) build -o bin/completion/.kubectl-hami ./cmd/kubectl-hami
	@for sh in bash zsh fish powershell; do bin/completion/.kubectl-hami completion $$sh > bin/completion/kubectl-hami.$$sh || exit 1; done
	@rm -f bin/completion/.kubectl-hami
	@ls bin/completion
