# capwin — Cluster API providers for Windows worker nodes on vCenter and Hyper-V.
SHELL := /usr/bin/env bash -o pipefail -e
GO ?= go
comma := ,
space := $(empty) $(empty)
CONTROLLER_GEN := $(GO) tool controller-gen
export GOTOOLCHAIN := local
# One build configuration for everything make runs, the one the release builds with (static,
# trimmed paths: ko, the Dockerfile, the envtest binaries): the Go build cache then compiles a
# package once for the tests, vet, the generators, the demo and the manager images.
export CGO_ENABLED := 0
export GOFLAGS := -trimpath $(filter-out -trimpath,$(GOFLAGS))

.PHONY: all
all: generate lint test

## generate: regenerate deepcopy, CRDs, RBAC, webhook manifests, the cluster templates and docs/variables.md (checked in).
.PHONY: generate
generate:
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/...
	$(CONTROLLER_GEN) crd paths=./api/bootstrap/... output:crd:artifacts:config=bootstrap/config/crd/bases
	$(CONTROLLER_GEN) crd paths=./api/infrastructure/... output:crd:artifacts:config=infrastructure/config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=manager-role paths=./bootstrap/... output:rbac:artifacts:config=bootstrap/config/rbac
	$(CONTROLLER_GEN) webhook paths=./bootstrap/... output:webhook:artifacts:config=bootstrap/config/webhook
	$(CONTROLLER_GEN) rbac:roleName=manager-role paths=./infrastructure/... output:rbac:artifacts:config=infrastructure/config/rbac
	$(CONTROLLER_GEN) webhook paths=./infrastructure/webhooks/... output:webhook:artifacts:config=infrastructure/config/webhook
	$(GO) run ./hack/release
	$(GO) run ./hack/crdref

## verify-generate: fail when generated files are stale.
.PHONY: verify-generate
verify-generate: generate
	@git diff --exit-code -- api bootstrap/config infrastructure/config templates docs/variables.md || \
	  { echo "generated files are stale: run 'make generate' and commit"; exit 1; }

## modules: download the Go modules that lint, vuln and test build (a download that times out is tried again, up to four times).
.PHONY: modules
modules:
	@GO="$(GO)" scripts/modules.sh

## envtest: build kube-apiserver, etcd, kube-scheduler and kube-controller-manager from source once (cached in ~/.cache/capwin).
.PHONY: envtest
envtest:
	@scripts/envtest-assets.sh --workload >/dev/null

## kubelet-flags: regenerate bootstrap/pkg/kubeletflags/sets, the Windows kubelet's flags of each minor: builds hack/kubelet-flags for windows/amd64 against each kubelet of KUBELET_FLAG_VERSIONS (a few minutes per version the first time; cached in ~/.cache/capwin/windows) and runs it under Wine.
# One version per minor of docs/compatibility.md's Windows node range, v1.31 to v1.37; the sets
# are named by minor (bootstrap/pkg/kubeletflags/sets/v1.36.txt), their header names the version.
KUBELET_FLAG_VERSIONS ?= v1.31.13 v1.32.13 v1.33.5 v1.34.4 v1.35.4 v1.36.3 v1.37.2
.PHONY: kubelet-flags
kubelet-flags:
	@bins=$${CAPWIN_CACHE:-$$HOME/.cache/capwin}/windows; \
	for v in $(KUBELET_FLAG_VERSIONS); do \
	  exe=$$bins/kubernetes/$$v/kubelet-flags.exe; \
	  if [ -f "$$exe" ] && [ hack/kubelet-flags/main.go -nt "$$exe" ]; then rm "$$exe"; fi; \
	  K8S_VERSION=$$v scripts/envtest-assets.sh --kubelet-flags >/dev/null; \
	done; \
	CAPWIN_WINDOWS_BINARIES=$$bins KUBELET_FLAG_VERSIONS="$(KUBELET_FLAG_VERSIONS)" \
	  $(GO) -C test test ./integration/winebin -run '^TestKubeletFlagSets$$' -count=1 -timeout 20m -args -update

## npm: install the PowerShell parser used by the tests (from the committed lock file).
.PHONY: npm
npm:
	@test -d hack/pscheck/node_modules || (cd hack/pscheck && npm ci --no-audit --no-fund --loglevel=error)

## vuln: govulncheck over the module and hack/images against the Go vulnerability database of the pinned golang.org/x/vulndb module (no network after the module download); fails on a finding docs/reliability.md does not explain (reports: out/vuln-*.txt).
.PHONY: vuln
vuln: modules
	@scripts/vuln.sh

## lint: no tracked file over 512 KiB (binaries, logs and data are made by scripts, not committed), gofmt, go vet (also of the test module and the nested image builder module), golangci-lint with .golangci.yml (main module, test module and hack/images; kube-api-linter on api/) and actionlint on .github/workflows.
ACTIONLINT ?= $(GO) run github.com/rhysd/actionlint/cmd/actionlint@v1.7.12
# golangci-lint v2 with kube-api-linter compiled in (what `golangci-lint custom` would build, but
# from the Go module proxy alone): pinned in hack/tools/go.mod, built once into hack/tools/bin and
# again only when that module changes.
GOLANGCI_LINT := hack/tools/bin/golangci-lint
$(GOLANGCI_LINT): hack/tools/go.mod hack/tools/go.sum
	$(GO) -C hack/tools build -o bin/golangci-lint sigs.k8s.io/kube-api-linter/cmd/golangci-lint-kube-api-linter
# --allow-serial-runners: golangci-lint takes a lock in the temporary folder, one for the whole
# machine; a second run (another checkout's make lint, an editor) waits for it instead of failing
# with "parallel golangci-lint is running".
.PHONY: lint
lint: modules $(GOLANGCI_LINT)
	@out=$$(gofmt -l $$(git ls-files '*.go')); [ -z "$$out" ] || { echo "gofmt needed:"; echo "$$out"; exit 1; }
	@scripts/check-file-sizes.sh
	$(GO) vet ./...
	$(GO) -C test vet ./...
	$(GO) -C hack/images vet ./...
	$(GOLANGCI_LINT) run --allow-serial-runners ./...
	cd test && $(CURDIR)/$(GOLANGCI_LINT) run --allow-serial-runners -c $(CURDIR)/.golangci.yml ./...
	cd hack/images && $(CURDIR)/$(GOLANGCI_LINT) run --allow-serial-runners -c $(CURDIR)/.golangci.yml ./...
	$(ACTIONLINT)

## test: unit, envtest, clusterctl and PowerShell parse tests, the image builder's tests and a compile check of the kind e2e; installs what it needs; prints the total time and the ten slowest packages (log: out/test.log).
.PHONY: test
test: modules envtest npm
	@GO=$(GO) scripts/test.sh

## test-offline: the doc test with the air-gapped install run for real, in the sandbox of docs/sandbox.md (test/framework/sandbox), with the network closed: clusterctl init from the docs' local repository, then the page's cluster created on vcsim with simulated guests, scaled, diagnosed and deleted; cert-manager's and the providers' images run as local processes (test/framework/localpods). Builds cert-manager, the managers and the simulators (a few minutes the first time).
.PHONY: test-offline
test-offline: modules envtest
	@KUBEBUILDER_ASSETS=$$(scripts/envtest-assets.sh) $(GO) -C test test ./integration/doctest -run TestDocsRun -count=1 -timeout 30m -args -offline-init

## test-windows: the Windows-binaries stage: the Windows kubelet, kubeadm, kube-proxy, containerd and flanneld (built once by scripts/windows-binaries.sh, cached in ~/.cache/capwin/windows) run under Wine (installed by scripts/wine.sh when missing) against what capwin renders (test/integration/winebin).
.PHONY: test-windows
test-windows:
	@scripts/wine.sh >/dev/null
	@scripts/windows-binaries.sh --check || echo "First run: building the Windows programs of the stage (two Kubernetes versions, two containerd releases, flanneld; long on 2 cores; cached in ~/.cache/capwin/windows)"
	@CAPWIN_WINDOWS_BINARIES=$$(scripts/windows-binaries.sh) $(GO) -C test test ./integration/winebin -count=1 -timeout 30m

## clusterctl: build clusterctl of the Cluster API capwin is tested with into bin/clusterctl, stamped with its version (go install of clusterctl is refused: Cluster API's go.mod has replace directives).
.PHONY: clusterctl
clusterctl:
	@scripts/clusterctl.sh bin/clusterctl

## kubectl: build kubectl of the Kubernetes version capwin is tested with into bin/kubectl, stamped with its version.
.PHONY: kubectl
kubectl:
	@v=$$($(GO) -C test list -m -f '{{.Version}}' k8s.io/kubectl); v=v1.$${v#v0.}; minor=$${v#v1.}; \
	  ld="-s -w"; for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do \
	    ld="$$ld -X $$p.gitVersion=$$v -X $$p.gitMajor=1 -X $$p.gitMinor=$${minor%%.*} -X $$p.gitTreeState=clean"; done; \
	  CGO_ENABLED=0 $(GO) -C test build -trimpath -ldflags "$$ld" -o ../bin/kubectl ./cmd/kubectl && echo "kubectl $$v: bin/kubectl"

## release-offline: the clusterctl repository of an air-gapped site's prerequisites in out/offline: Cluster API (core, kubeadm bootstrap and control plane) and cert-manager from their pinned modules, their images as OCI archives named $(REGISTRY)/<image>:<version> (OFFLINE_IMAGES=false: the manifests only).
OFFLINE_IMAGES ?= true
OFFLINE_PLATFORMS ?= linux/amd64,linux/arm64
.PHONY: release-offline
release-offline:
	rm -rf out/offline
	scripts/offline-repository.sh out/offline $(REGISTRY)
	@if [ "$(OFFLINE_IMAGES)" = true ]; then \
	  $(GO) -C hack/images run . offline -root $(CURDIR) -out $(CURDIR)/out/offline -registry $(REGISTRY) -platforms $(OFFLINE_PLATFORMS) \
	    -capi-version $$($(GO) list -m -f '{{.Version}}' sigs.k8s.io/cluster-api); \
	fi

## release-manifests: write a release into out/ (components, metadata.yaml, cluster templates, ClusterClasses); images named $(REGISTRY)/<image>:$(VERSION).
VERSION ?= dev
REGISTRY ?= ghcr.io/capwin
# Kubernetes versions capwin-kube-proxy-windows is built for (its tag is the Kubernetes version).
KUBERNETES_VERSIONS ?= v1.36.3
FLANNEL_VERSION ?= v0.27.4
WINDOWS_EXPORTER_VERSION ?= v0.27.2
.PHONY: release-manifests
release-manifests:
	rm -rf out
	$(GO) run ./hack/release -out out -registry $(REGISTRY) -version $(VERSION)

## release-render: build the render command (user-data preview, render diagnostics) into out/ as render-<os>-<arch> for linux/amd64+arm64, darwin/amd64+arm64 and windows/amd64 (.exe), static, stamped with $(VERSION), the same bytes on every build.
RENDER_PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64
.PHONY: release-render
release-render:
	@mkdir -p out
	@for p in $(RENDER_PLATFORMS); do \
	  os=$${p%/*}; arch=$${p#*/}; ext=; if [ $$os = windows ]; then ext=.exe; fi; \
	  echo "render: out/render-$$os-$$arch$$ext"; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags "-s -w -buildid= -X main.version=$(VERSION)" \
	    -o out/render-$$os-$$arch$$ext ./bootstrap/cmd/render; \
	done

## release-images: build the images into out/ as OCI archives (managers: linux/amd64+arm64; flanneld, windows_exporter, node health, kube-proxy: windows/amd64), SBOMs, images.txt, checksums.txt.
.PHONY: release-images
release-images:
	$(GO) -C hack/images run . build -root $(CURDIR) -out $(CURDIR)/out -registry $(REGISTRY) -version $(VERSION) \
	  -kubernetes-versions $(subst $(space),$(comma),$(KUBERNETES_VERSIONS)) -flannel-version $(FLANNEL_VERSION) -windows-exporter-version $(WINDOWS_EXPORTER_VERSION)

## release: make release VERSION=vX.Y.Z REGISTRY=registry.example.com/capwin - the release files, the render binaries and the images in out/ (see RELEASE.md).
.PHONY: release
release:
	@[[ "$(VERSION)" =~ ^v[0-9]+\.[0-9]+\.[0-9]+ ]] || { echo "make release needs VERSION=vX.Y.Z"; exit 1; }
	@$(MAKE) --no-print-directory release-manifests
	@$(MAKE) --no-print-directory release-render
	@$(MAKE) --no-print-directory release-images

## release-push: push the image archives in out/ (PUSH_DIR=out/offline: those of make release-offline) to the registry they name (PUSH_REGISTRY=... for another one); credentials from docker login / crane auth login.
PUSH_REGISTRY ?=
PUSH_DIR ?= out
.PHONY: release-push
release-push:
	$(GO) -C hack/images run . push -out $(abspath $(PUSH_DIR)) $(if $(PUSH_REGISTRY),-registry $(PUSH_REGISTRY))

## test-e2e-release: the kind e2e on the images of `make release` (E2E_RELEASE_VERSION, E2E_RELEASE_REGISTRY), loaded into the node under their stamped names; nothing is pulled.
E2E_RELEASE_VERSION ?= v0.2.0
E2E_RELEASE_REGISTRY ?= e2e.capwin.local/release
.PHONY: test-e2e-release
test-e2e-release:
	@scripts/e2e-images.sh
	@$(MAKE) --no-print-directory release VERSION=$(E2E_RELEASE_VERSION) REGISTRY=$(E2E_RELEASE_REGISTRY)
	@scripts/e2e-release.sh $(E2E_RELEASE_REGISTRY) $(E2E_RELEASE_VERSION)
	$(GO) -C test test -tags e2e ./e2e/kind -timeout 3h -v -args -ginkgo.v -ginkgo.timeout=3h \
	  -e2e.config=$(CURDIR)/test/e2e/config/capwin-release.yaml -e2e.artifacts-folder=$(E2E_ARTIFACTS) $(E2E_ARGS)

## fuzz: run every fuzz target in the repository for FUZZTIME each (FUZZTIME=10m for a long run; FUZZ=Name to pick).
FUZZTIME ?= 60s
.PHONY: fuzz
fuzz: npm
	FUZZTIME=$(FUZZTIME) GO=$(GO) scripts/fuzz.sh $(FUZZ)

## chaos: the chaos soak on both providers (faults, rollout, manager and hypervisor endpoint restarts, invariants); CHAOS_ARGS="-duration 5m -machines 200 -seed 2".
CHAOS_ARGS ?=
.PHONY: chaos
chaos: envtest npm
	KUBEBUILDER_ASSETS=$$(scripts/envtest-assets.sh --workload) $(GO) -C test run ./cmd/chaos $(CHAOS_ARGS)

## bench: render benchmarks.
.PHONY: bench
bench:
	$(GO) test ./bootstrap/pkg/userdata -run '^$$' -bench . -benchmem -timeout 10m

## bench-scale: the infrastructure controllers at SWEEP machines (vCenter with kube-apiserver and with the fake client, Hyper-V over 20 hosts), each count in a fresh process; tables into out/bench-scale.md, plots into docs/img.
SWEEP ?= 100,250,500,1000
.PHONY: bench-scale
bench-scale: envtest npm
	@mkdir -p out && : > out/bench-scale.md
	$(GO) -C test run ./cmd/bench-vcenter -sweep $(SWEEP) -plot-dir ../docs/img | tee -a out/bench-scale.md
	$(GO) -C test run ./cmd/bench-vcenter -client fake -sweep $(SWEEP) -plot-dir ../docs/img | tee -a out/bench-scale.md
	$(GO) -C test run ./cmd/bench-vcenter -client fake -reconcile-interval 1s -sweep $(SWEEP) -plot-dir ../docs/img | tee -a out/bench-scale.md
	$(GO) -C test run ./cmd/bench-hyperv -hosts 20 -sweep $(SWEEP) -plot-dir ../docs/img | tee -a out/bench-scale.md

## demo: the whole flow on the local harness: create -> scale -> blue/green 2022->2025 -> delete (DEMO=hyperv for Hyper-V); ends with one JSON line.
DEMO ?= vcenter
# DEMO_LOG_DIR: where the demo writes its logs (default: a new capwin-demo-* folder in $TMPDIR each run).
DEMO_LOG_DIR ?=
.PHONY: demo
demo:
	@scripts/envtest-assets.sh --workload --check >/dev/null || \
	  echo "First run: building kube-apiserver, etcd, kube-scheduler and kube-controller-manager from source (about 7 minutes on 2 cores; cached in ~/.cache/capwin)"
	@scripts/envtest-assets.sh --workload >/dev/null
	@$(MAKE) --no-print-directory npm
	@echo "Building the demo (the first build of CAPI and Kubernetes packages takes a few minutes)"
	@KUBEBUILDER_ASSETS=$$(scripts/envtest-assets.sh --workload) $(GO) -C test build -o ../bin/demo ./cmd/demo
	@KUBEBUILDER_ASSETS=$$(scripts/envtest-assets.sh --workload) DEMO=$(DEMO) bin/demo $(if $(DEMO_LOG_DIR),-log-dir $(DEMO_LOG_DIR))

## image-vsphere: build a Windows node template on vSphere with Packer (images/packer, docs/images.md): WINDOWS_VERSION=2022|2025, IMAGE_VARS=<your .pkrvars.hcl>, PKR_VAR_admin_password and PKR_VAR_vsphere_password in the environment; needs Packer 1.11 or later.
WINDOWS_VERSION ?= 2022
IMAGE_VARS ?=
.PHONY: image-vsphere image-hyperv
image-vsphere:
	@WINDOWS_VERSION=$(WINDOWS_VERSION) IMAGE_VARS=$(IMAGE_VARS) scripts/image.sh vsphere

## image-hyperv: build a generalized Windows node VHDX with Packer on a Hyper-V host (images/packer, docs/images.md): WINDOWS_VERSION, IMAGE_VARS and PKR_VAR_admin_password as for image-vsphere.
image-hyperv:
	@WINDOWS_VERSION=$(WINDOWS_VERSION) IMAGE_VARS=$(IMAGE_VARS) scripts/image.sh hyperv

## sandbox: a place to try the quick start (docs/sandbox.md): a management cluster for clusterctl init whose Deployments run as local processes, vcsim with the quick start's templates, two simulated Hyper-V hosts and simulated guests, left running in the background; prints what to source.
.PHONY: sandbox sandbox-down
sandbox:
	@GO=$(GO) scripts/sandbox.sh up

## sandbox-down: stop the sandbox and remove .sandbox/.
sandbox-down:
	@scripts/sandbox.sh down

# --- kind e2e (test/e2e/kind): a kind management cluster, clusterctl init, vcsim ---------------
E2E_CONFIG ?= $(CURDIR)/test/e2e/config/capwin.yaml
E2E_ARTIFACTS ?= $(CURDIR)/_artifacts
E2E_ARGS ?=
DOCKER ?= docker
CAPWIN_IMAGE_REGISTRY ?= ghcr.io/capwin
CAPWIN_IMAGE_TAG ?= dev

## e2e-vet: compile and vet the e2e packages (build tag e2e) without running them; needs no Docker.
.PHONY: e2e-vet
e2e-vet:
	$(GO) -C test vet -tags e2e ./e2e/...

## docker-build: build the manager images, the addon installer and the e2e guest simulator's from the public base images (needs a Docker engine with BuildKit and a registry; offline, make e2e-images builds them on local bases).
.PHONY: docker-build
docker-build:
	$(DOCKER) build --build-arg PACKAGE=./bootstrap -t $(CAPWIN_IMAGE_REGISTRY)/capwin-bootstrap-windows:$(CAPWIN_IMAGE_TAG) .
	$(DOCKER) build --build-arg PACKAGE=./infrastructure -t $(CAPWIN_IMAGE_REGISTRY)/capwin-infrastructure:$(CAPWIN_IMAGE_TAG) .
	$(DOCKER) build --build-arg PACKAGE=./addoninstaller -t $(CAPWIN_IMAGE_REGISTRY)/capwin-addon-installer:$(CAPWIN_IMAGE_TAG) .
	$(DOCKER) build --build-arg PACKAGE=./test/e2e/kind/sim --build-arg TAGS=e2e -t $(CAPWIN_IMAGE_REGISTRY)/capwin-e2e-sim:$(CAPWIN_IMAGE_TAG) .

## e2e-images: build, without pulling, every image and manifest the kind e2e needs (kind node image, cert-manager, Cluster API, vcsim, capwin); cached in ~/.cache/capwin/e2e, installs and starts Docker where it can.
.PHONY: e2e-images
e2e-images:
	@scripts/e2e-images.sh

## test-e2e: the kind e2e on the images of `make e2e-images` (rebuilds capwin's when the source changed); nothing is pulled. E2E_ARGS=-e2e.skip-resource-cleanup keeps everything.
.PHONY: test-e2e
test-e2e:
	@scripts/e2e-images.sh
	@$(MAKE) --no-print-directory release-manifests
	$(GO) -C test test -tags e2e ./e2e/kind/sim -count=1 -timeout 10m
	$(GO) -C test test -tags e2e ./e2e/kind -timeout 3h -v -args -ginkgo.v -ginkgo.timeout=3h \
	  -e2e.config=$(E2E_CONFIG) -e2e.artifacts-folder=$(E2E_ARTIFACTS) $(E2E_ARGS)
