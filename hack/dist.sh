#!/usr/bin/env bash
# dist.sh: the release archives of `make dist`, one per platform, in DIST_DIR (default dist/):
#
#   kubectl-hami_<version>_<os>_<arch>.tar.gz   (.zip for windows)
#     kubectl-hami (kubectl-hami.exe), LICENSE, and kubectl_complete-hami outside Windows
#   SHA256SUMS                                  (sha256sum -c SHA256SUMS checks them)
#   hami.yaml                                   the krew manifest for these archives, when VERSION is vX.Y.Z
#
# linux/amd64 is built with cgo and NVML's build tags (the node agent reads GPUs through NVML, which needs
# cgo); every other platform with CGO_ENABLED=0, so their `agent` command only says it runs on Linux GPU nodes.
# linux/arm64 with cgo would need a cross C compiler: build that one natively (or with build/Dockerfile.agent)
# when the agent is wanted on arm64 nodes. Building linux/amd64 on another host needs CC_LINUX_AMD64 (a C cross compiler for
# x86_64-linux-gnu), or DIST_CGO_LINUX_AMD64=0 to give the agent up.
#
# The archives depend only on the binaries: entries sorted, owned by root, mtime SOURCE_DATE_EPOCH (default:
# the last commit's time), so the same build gives the same sha256.
#
# Environment (the Makefile passes the first three):
#   VERSION    version in the archive names and the binary (make: git describe)
#   LDFLAGS    -X flags that stamp version, commit and date into internal/version
#   GO         go command (default go)
#   DIST_DIR   output folder (default dist)
#   PLATFORMS  space-separated os/arch list (default the five release platforms)
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
VERSION=${VERSION:?set VERSION (make dist sets it)}
LDFLAGS=${LDFLAGS:-}
DIST_DIR=${DIST_DIR:-dist}
PLATFORMS=${PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64}
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
# agent.BuildTags (internal/agent/source.go); build/dockerfile_test.go checks that both agree.
NVML_TAGS=nvml,kustomize_disable_go_plugin_support,grpcnotrace

log() { printf '[dist %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

case $VERSION in
*/* | *' '*) log "VERSION=$VERSION cannot be part of a file name"; exit 1 ;;
esac

mkdir -p "$DIST_DIR"
stage=$(mktemp -d "${TMPDIR:-/tmp}/kubectl-hami-dist.XXXXXX")
trap 'rm -rf "$stage"' EXIT

# Stale archives of earlier builds would end up in SHA256SUMS: a dist folder holds one build.
rm -f "$DIST_DIR"/kubectl-hami_*.tar.gz "$DIST_DIR"/kubectl-hami_*.zip "$DIST_DIR/SHA256SUMS" "$DIST_DIR/hami.yaml"

"$GO" build -o "$stage/release" ./hack/release

host="$("$GO" env GOHOSTOS)/$("$GO" env GOHOSTARCH)"
start=$SECONDS
for platform in $PLATFORMS; do
	goos=${platform%/*} goarch=${platform#*/}
	bin=kubectl-hami
	[[ $goos == windows ]] && bin=kubectl-hami.exe
	dir=$stage/${goos}_${goarch}
	mkdir -p "$dir"

	cgo=0 cc=()
	if [[ $platform == linux/amd64 && ${DIST_CGO_LINUX_AMD64:-1} == 1 ]]; then
		cgo=1
		if [[ $host != linux/amd64 ]]; then
			if [[ -z ${CC_LINUX_AMD64:-} ]]; then
				log "linux/amd64 is built with cgo (the agent needs it): on $host set CC_LINUX_AMD64 to an x86_64-linux-gnu C compiler, or DIST_CGO_LINUX_AMD64=0"
				exit 1
			fi
			cc=(CC="$CC_LINUX_AMD64")
		fi
	fi

	# The cgo build puts NVML in (internal/agent/withnvml) with the build tags of agent.BuildTags: nvml, and
	# kustomize_disable_go_plugin_support, which keeps Go's plugin package out (k8s.io/cli-runtime -> kustomize);
	# with it the linker binds every symbol at start, and go-nvml's NVML symbols exist only once libnvidia-ml.so.1
	# is loaded. -z lazy keeps it so should the plugin package come back another way. go-nvml's header marks
	# many calls deprecated: keep gcc's warnings about them out of the log.
	extld= tags=()
	if [[ $cgo == 1 ]]; then
		extld=-extldflags=-Wl,-z,lazy
		tags=(-tags "$NVML_TAGS")
		cc+=(CGO_CFLAGS="${CGO_CFLAGS:-"-O2 -g"} -Wno-deprecated-declarations")
	fi
	t=$SECONDS
	env "${cc[@]}" CGO_ENABLED=$cgo GOOS="$goos" GOARCH="$goarch" \
		"$GO" build -trimpath "${tags[@]}" -ldflags "-s -w $extld $LDFLAGS" -o "$dir/$bin" ./cmd/kubectl-hami
	if [[ $platform == "$host" ]]; then
		"$dir/$bin" version >/dev/null || { log "$platform: the binary does not start"; exit 1; }
	fi
	if [[ $cgo == 1 ]]; then
		info=$("$GO" version -m "$dir/$bin")
		if ! grep -q 'CGO_ENABLED=1' <<<"$info" || ! grep -q "tags=$NVML_TAGS" <<<"$info" ||
			! grep -q 'github.com/NVIDIA/go-nvml' <<<"$info"; then
			log "$platform: the binary was not built with cgo, -tags $NVML_TAGS and go-nvml: the agent would have no NVML"
			exit 1
		fi
	fi

	entries=("$bin=$dir/$bin" "LICENSE=LICENSE")
	[[ $goos != windows ]] && entries+=("kubectl_complete-hami=hack/kubectl_complete-hami")
	ext=tar.gz
	[[ $goos == windows ]] && ext=zip
	archive=$DIST_DIR/kubectl-hami_${VERSION}_${goos}_${goarch}.$ext
	"$stage/release" archive -out "$archive" -mtime "$SOURCE_DATE_EPOCH" "${entries[@]}"
	log "$archive (cgo $cgo, built in $((SECONDS - t))s, $(du -h "$archive" | cut -f1))"
done

"$stage/release" sums -dir "$DIST_DIR"
log "$DIST_DIR/SHA256SUMS"

# The krew manifest of exactly these archives (make krew-manifest copies it to the repository root).
if [[ $VERSION =~ ^v[0-9]+\.[0-9]+\.[0-9]+ ]]; then
	"$stage/release" manifest -template hack/krew.yaml.tmpl -version "$VERSION" -dist "$DIST_DIR" \
		-platforms "$(echo "$PLATFORMS" | tr ' ' ',')" -out "$DIST_DIR/hami.yaml"
else
	log "no krew manifest: VERSION=$VERSION is not vX.Y.Z (make dist VERSION=v0.1.0)"
fi
log "done in $((SECONDS - start))s"
