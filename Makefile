# capwin — Cluster API providers for Windows worker nodes on vCenter and Hyper-V.
SHELL := /usr/bin/env bash -o pipefail -e
GO ?= go
CONTROLLER_GEN := $(GO) tool controller-gen
export GOTOOLCHAIN := local

.PHONY: all
all: generate lint test

## generate: regenerate deepcopy, CRDs, RBAC and webhook manifests (checked in).
.PHONY: generate
generate:
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/...
	$(CONTROLLER_GEN) crd paths=./api/bootstrap/... output:crd:artifacts:config=bootstrap/config/crd/bases
	$(CONTROLLER_GEN) crd paths=./api/infrastructure/... output:crd:artifacts:config=infrastructure/config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=manager-role paths=./bootstrap/... output:rbac:artifacts:config=bootstrap/config/rbac
	$(CONTROLLER_GEN) webhook paths=./bootstrap/... output:webhook:artifacts:config=bootstrap/config/webhook
	$(CONTROLLER_GEN) rbac:roleName=manager-role paths=./infrastructure/... output:rbac:artifacts:config=infrastructure/config/rbac
	$(CONTROLLER_GEN) webhook paths=./infrastructure/webhooks/... output:webhook:artifacts:config=infrastructure/config/webhook

## verify-generate: fail when generated files are stale.
.PHONY: verify-generate
verify-generate: generate
	@git diff --exit-code -- api bootstrap/config infrastructure/config || \
	  { echo "generated files are stale: run 'make generate' and commit"; exit 1; }

## envtest: build kube-apiserver, etcd, kube-scheduler and kube-controller-manager from source once (cached in ~/.cache/capwin).
.PHONY: envtest
envtest:
	@scripts/envtest-assets.sh --workload >/dev/null

## npm: install the PowerShell parser used by the tests (from the committed lock file).
.PHONY: npm
npm:
	@test -d hack/pscheck/node_modules || (cd hack/pscheck && npm ci --no-audit --no-fund --loglevel=error)

## lint: gofmt and go vet.
.PHONY: lint
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); [ -z "$$out" ] || { echo "gofmt needed:"; echo "$$out"; exit 1; }
	$(GO) vet ./...

## test: unit, envtest and PowerShell parse tests; installs what it needs.
.PHONY: test
test: envtest npm
	KUBEBUILDER_ASSETS=$$(scripts/envtest-assets.sh) $(GO) test ./... -count=1 -timeout 30m

## fuzz: run the user data fuzzer (FUZZTIME=10m for a long run).
FUZZTIME ?= 60s
.PHONY: fuzz
fuzz: npm
	$(GO) test ./bootstrap/pkg/userdata -run '^$$' -fuzz FuzzRender -fuzztime $(FUZZTIME) -timeout 0
	$(GO) test ./bootstrap/webhooks -run '^$$' -fuzz FuzzValidateSpec -fuzztime $(FUZZTIME) -timeout 0

## bench: render benchmarks.
.PHONY: bench
bench:
	$(GO) test ./bootstrap/pkg/userdata -run '^$$' -bench . -benchmem

## demo: the whole flow on the local harness: create -> scale -> blue/green 2022->2025 -> delete (DEMO=hyperv for Hyper-V); ends with one JSON line.
DEMO ?= vcenter
.PHONY: demo
demo:
	@scripts/envtest-assets.sh --workload --check >/dev/null || \
	  echo "First run: building kube-apiserver, etcd, kube-scheduler and kube-controller-manager from source (about 10 minutes on 2 cores; cached in ~/.cache/capwin)"
	@scripts/envtest-assets.sh --workload >/dev/null
	@$(MAKE) --no-print-directory npm
	@echo "Building the demo (the first build of CAPI and Kubernetes packages takes a few minutes)"
	@KUBEBUILDER_ASSETS=$$(scripts/envtest-assets.sh --workload) $(GO) build -o bin/demo ./test/demo
	@KUBEBUILDER_ASSETS=$$(scripts/envtest-assets.sh --workload) DEMO=$(DEMO) bin/demo
