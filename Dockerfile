# One image per capwin manager, binary /manager:
#   docker build --build-arg PACKAGE=./bootstrap      -t ghcr.io/capwin/capwin-bootstrap-windows:dev .
#   docker build --build-arg PACKAGE=./infrastructure -t ghcr.io/capwin/capwin-infrastructure:dev .
# the addon installer the gMSA addon's Job runs (entrypoint /manager, argument gmsa):
#   docker build --build-arg PACKAGE=./addoninstaller -t ghcr.io/capwin/capwin-addon-installer:dev .
# and the kind e2e suite's guest simulator (build tag e2e; a package of the test module, test/go.mod):
#   docker build --build-arg PACKAGE=./test/e2e/kind/sim --build-arg TAGS=e2e -t ghcr.io/capwin/capwin-e2e-sim:dev .
# `make docker-build` builds all four. Needs BuildKit (RUN --mount): docker buildx, or
# DOCKER_BUILDKIT=1 with a client that has it built in. No `# syntax=` line: the builder's own
# Dockerfile frontend is used, so nothing is pulled for it. Offline, GO_IMAGE and BASE_IMAGE can
# name locally built images (scripts/e2e-images.sh does).
# These are development and e2e images. Release images are built by `make release`
# (hack/images, with ko; see RELEASE.md), not from this file.

ARG GO_IMAGE=golang:1.26.8
ARG BASE_IMAGE=gcr.io/distroless/static:nonroot

FROM --platform=$BUILDPLATFORM ${GO_IMAGE} AS build
ARG TARGETOS
ARG TARGETARCH
ARG PACKAGE=./bootstrap
ARG TAGS=
ENV GOTOOLCHAIN=local CGO_ENABLED=0
WORKDIR /src
# Modules first: the layer and the cache mount survive source changes.
COPY go.mod go.sum ./
COPY test/go.mod test/go.sum test/
RUN --mount=type=cache,target=/go/pkg/mod go mod download && go -C test mod download
# The Go source the managers and the simulator are built from (no templates, docs or tools).
COPY addoninstaller/ addoninstaller/
COPY api/ api/
COPY bootstrap/ bootstrap/
COPY infrastructure/ infrastructure/
COPY internal/ internal/
COPY nodehealth/ nodehealth/
COPY test/ test/
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    module=.; pkg="${PACKAGE}"; \
    case "${PACKAGE}" in ./test/*) module=test; pkg="./${PACKAGE#./test/}";; esac; \
    GOOS=${TARGETOS} GOARCH=${TARGETARCH} \
    go -C "$module" build -trimpath -tags "${TAGS}" -ldflags "-s -w" -o /out/manager "$pkg"

FROM ${BASE_IMAGE}
COPY --from=build /out/manager /manager
USER 65532:65532
ENTRYPOINT ["/manager"]
