#!/usr/bin/env bash
# test-release.sh: the release test of `make test-release`, for CI. It checks, for real:
#   1. `make dist` builds every archive, SHA256SUMS matches them (sha256sum -c) and dist/hami.yaml is the krew
#      manifest of those archives;
#   2. krew's own validator (validate-krew-manifest of sigs.k8s.io/krew, what the krew-index CI runs) accepts
#      the manifest and installs every platform's archive from it, downloaded over HTTP from a loopback server
#      (it checks each archive's sha256, bin and LICENSE); the committed krew.yaml passes the same structural
#      validation and hack/release's stricter rules (short description, wrapping, uris, files);
#   3. `krew install --manifest=FILE --archive=ARCHIVE` into a temporary KREW_ROOT, then `kubectl hami version`
#      through kubectl prints the stamped version, `kubectl plugin list` sees the plugin, kubectl's plugin
#      completion runs kubectl_complete-hami (commands, and pod names and namespaces once the completion
#      command is registered), and `krew uninstall` removes it.
# krew is built once from its Go module into the cache folder (hack/krew-binaries.sh); nothing is downloaded
# from GitHub and no cluster is needed.
#
# Environment:
#   GO, MAKE                 go and make commands
#   TEST_RELEASE_PLATFORMS   platforms to build and install (default the five release platforms)
#   TEST_RELEASE_KEEP=1      keep the temporary folder
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
MAKE=${MAKE:-make}
PLATFORMS=${TEST_RELEASE_PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64}
VERSION=v0.0.0-release-test
start=$SECONDS

log() { printf '[test-release %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
fail() {
	log "FAIL: $*"
	exit 1
}

krew_dir=$(bash hack/krew-binaries.sh | tail -1)
bash hack/ensure-kubectl.sh
export KREW_NO_UPGRADE_CHECK=1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kubectl-hami-release.XXXXXX")
server=
cleanup() {
	if [[ -n $server ]]; then
		kill "$server" 2>/dev/null || true
		wait "$server" 2>/dev/null || true
	fi
	if [[ ${TEST_RELEASE_KEEP:-0} == 1 ]]; then
		log "kept $tmp"
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT

# 1. The archives, their sums and their manifest, as `make dist` makes them.
log "make dist VERSION=$VERSION for: $PLATFORMS"
t=$SECONDS
PLATFORMS=$PLATFORMS "$MAKE" --no-print-directory dist VERSION="$VERSION" DIST_DIR="$tmp/dist" GO="$GO" >&2
log "dist built in $((SECONDS - t))s"
dist=$tmp/dist
[[ -f $dist/hami.yaml ]] || fail "make dist wrote no krew manifest"
if command -v sha256sum >/dev/null 2>&1; then
	(cd "$dist" && sha256sum --quiet -c SHA256SUMS) || fail "SHA256SUMS does not match the archives"
fi
"$GO" build -o "$tmp/release" ./hack/release
"$tmp/release" validate -release -dist "$dist" "$dist/hami.yaml"
"$tmp/release" validate -release krew.yaml

# 2. krew's validator: structure of the release manifests, then an install of every archive over HTTP.
mkdir -p "$tmp/committed" "$tmp/loopback"
cp krew.yaml "$tmp/committed/hami.yaml" # validate-krew-manifest wants the file named after the plugin
for m in "$tmp/committed/hami.yaml" "$dist/hami.yaml"; do
	"$krew_dir/validate-krew-manifest" -manifest "$m" -skip-install 2>"$tmp/validate.log" ||
		{ cat "$tmp/validate.log" >&2; fail "validate-krew-manifest rejects $m"; }
done
log "krew's validate-krew-manifest accepts krew.yaml and dist/hami.yaml"

"$tmp/release" serve -dir "$dist" -addr-file "$tmp/addr" 2>"$tmp/serve.log" &
server=$!
for _ in $(seq 100); do
	[[ -s $tmp/addr ]] && break
	kill -0 "$server" 2>/dev/null || { cat "$tmp/serve.log" >&2; fail "the archive server stopped"; }
	sleep 0.1
done
[[ -s $tmp/addr ]] || fail "the archive server did not start"
base=$(cat "$tmp/addr")
"$tmp/release" manifest -version "$VERSION" -dist "$dist" -uri-base "$base" \
	-platforms "$(echo "$PLATFORMS" | tr ' ' ',')" -out "$tmp/loopback/hami.yaml"
t=$SECONDS
# validate-krew-manifest runs `kubectl krew install --manifest` per platform (KREW_OS/KREW_ARCH set), with
# kubectl-krew found on PATH.
PATH=$krew_dir:$PATH "$krew_dir/validate-krew-manifest" -manifest "$tmp/loopback/hami.yaml" 2>"$tmp/validate.log" ||
	{ cat "$tmp/validate.log" >&2; fail "validate-krew-manifest could not install every platform"; }
log "validate-krew-manifest installed all $(wc -w <<<"$PLATFORMS") platforms from $base ($((SECONDS - t))s)"
kill "$server" && wait "$server" 2>/dev/null || true
server=

# 3. A real install from the local archive of this machine's platform, then kubectl hami through kubectl.
host_os=$("$GO" env GOHOSTOS) host_arch=$("$GO" env GOHOSTARCH)
case " $PLATFORMS " in
*" $host_os/$host_arch "*) ;;
*) fail "no archive for this machine's platform $host_os/$host_arch in TEST_RELEASE_PLATFORMS" ;;
esac
ext=tar.gz
[[ $host_os == windows ]] && ext=zip
archive=$dist/kubectl-hami_${VERSION}_${host_os}_${host_arch}.$ext
export KREW_ROOT=$tmp/krew-root
mkdir -p "$KREW_ROOT"
log "krew install --manifest=dist/hami.yaml --archive=$(basename "$archive") (KREW_ROOT=$KREW_ROOT)"
"$krew_dir/krew" install --manifest="$dist/hami.yaml" --archive="$archive" >"$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log" >&2; fail "krew install"; }
[[ -x $KREW_ROOT/bin/kubectl-hami ]] || fail "krew put no kubectl-hami in $KREW_ROOT/bin"
grep -q '^  version: '"$VERSION"'$' "$KREW_ROOT/receipts/hami.yaml" 2>/dev/null ||
	fail "krew wrote no receipt for hami $VERSION in $KREW_ROOT/receipts"
# krew list and uninstall refuse to run without a local plugin index, a git clone of krew-index from GitHub;
# an empty local repository stands in for it (the plugin is listed as detached/hami: not from an index).
mkdir -p "$KREW_ROOT/index/default/plugins"
git init -q "$KREW_ROOT/index/default"
# (Outputs are captured first: grep -q on a pipe would end the writer early, which pipefail reports.)
listed=$("$krew_dir/krew" list 2>/dev/null) || fail "krew list failed"
grep -Eq '(^|/)hami$' <<<"$listed" || fail "krew list does not show hami: $listed"


export PATH=$KREW_ROOT/bin:$PATH
plugins=$(kubectl plugin list 2>/dev/null || true)
grep -qx "$KREW_ROOT/bin/kubectl-hami" <<<"$plugins" ||
	fail "kubectl plugin list does not show $KREW_ROOT/bin/kubectl-hami: $plugins"
out=$(kubectl hami version) || fail "kubectl hami version failed"
log "kubectl hami version: $out"
[[ $out == "kubectl-hami $VERSION (commit "*", built "*", $host_os/$host_arch)" ]] ||
	fail "kubectl hami version printed '$out', want 'kubectl-hami $VERSION (commit ..., built ..., $host_os/$host_arch)'"
[[ $out != *"commit unknown"* && $out != *"built unknown"* ]] || fail "commit or date not stamped: $out"

# Completion through kubectl: kubectl runs kubectl_complete-hami (shipped in the archive, so in krew's store)
# found on PATH.
store=$KREW_ROOT/store/hami/$VERSION
[[ -x $store/kubectl_complete-hami ]] || fail "kubectl_complete-hami is not in $store"
mkdir -p "$tmp/completion-bin"
ln -s "$store/kubectl_complete-hami" "$tmp/completion-bin/kubectl_complete-hami"
export PATH=$tmp/completion-bin:$PATH
complete_has() { # complete_has WANT ARGS...: kubectl __complete hami ARGS lists WANT
	local want=$1 got
	shift
	got=$(kubectl __complete hami "$@" 2>/dev/null) || fail "kubectl __complete hami $*"
	grep -q "^$want\([[:space:]]\|\$\)" <<<"$got" ||
		fail "kubectl __complete hami $* does not offer $want; it printed: $(tr '\n' ' ' <<<"$got")"
}
complete_has why-pending ""
complete_has version v
complete_has --output why-pending --ou
completion_help=$(kubectl hami completion --help 2>/dev/null || true)
if grep -q kubectl_complete-hami <<<"$completion_help"; then
	complete_has llm-serve-2 why-pending --demo -n inference ""
	complete_has inference why-pending --demo -n ""
	complete_has gpu-a100-01 why-pending --demo --node gpu-a
	complete_has wide why-pending -o ""
	log "kubectl completes commands, flags, pod names, namespaces and nodes through kubectl_complete-hami"
else
	log "kubectl completes commands and flags through kubectl_complete-hami; pod and namespace completion not checked: internal/cli does not register newCompletionCommand and registerCompletions yet"
fi

"$krew_dir/krew" uninstall hami >"$tmp/uninstall.log" 2>&1 || { cat "$tmp/uninstall.log" >&2; fail "krew uninstall"; }
[[ ! -e $KREW_ROOT/bin/kubectl-hami && ! -e $KREW_ROOT/receipts/hami.yaml && ! -e $KREW_ROOT/store/hami ]] ||
	fail "krew uninstall left kubectl-hami behind in $KREW_ROOT"
log "PASS in $((SECONDS - start))s: make dist, SHA256SUMS, krew validation and install of every platform, kubectl hami version and completion through kubectl, uninstall"
