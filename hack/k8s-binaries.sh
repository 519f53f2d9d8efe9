#!/usr/bin/env bash
# k8s-binaries.sh: make sure the real control-plane binaries that the integration tests run
# (kube-apiserver, kube-scheduler and etcd) exist in a versioned cache folder, building them from the
# Go module proxy only when they are missing. Prints the folder's path on stdout as its last line.
#
# The builds happen in throw-away modules under the cache folder (never inside the repository):
# k8s.io/kubernetes points its k8s.io/* staging modules at ./staging/... through replace directives, so a
# plain `go install` fails; each throw-away module requires the main module and replaces every such local
# path with the published module of the same release (read from the upstream go.mod, not hard-coded).
#
# Environment:
#   KUBECTL_HAMI_CACHE  cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-hami)
#   GO                  go command (default go)
set -euo pipefail

K8S_VERSION=v1.37.2
K8S_STAGING_VERSION=v0.37.2
ETCD_VERSION=v3.6.8
GO=${GO:-go}

CACHE_ROOT=${KUBECTL_HAMI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-hami}
BIN_DIR=$CACHE_ROOT/k8s-$K8S_VERSION
BINARIES=(kube-apiserver kube-scheduler etcd)

log() { printf '[k8s-binaries %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

all_present() {
	local b
	for b in "${BINARIES[@]}"; do
		[[ -x $BIN_DIR/$b ]] || return 1
	done
}

# Fast path: nothing to do, no lock needed.
if all_present; then
	echo "$BIN_DIR"
	exit 0
fi

mkdir -p "$BIN_DIR"
exec 9>"$BIN_DIR/.lock"
if ! flock -n 9; then
	log "another build holds $BIN_DIR/.lock; waiting for it"
	flock 9
fi
# Another run may have built everything while we waited.
if all_present; then
	log "binaries already built by another run"
	echo "$BIN_DIR"
	exit 0
fi

export GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0

# replaces_for MODULE@VERSION VERSION: print one `replace X => X VERSION` line for every replace
# directive of MODULE's go.mod whose target is a local path (./... or ../...).
replaces_for() {
	local modver=$1 ver=$2 gomod
	gomod=$("$GO" mod download -json "$modver" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')
	if [[ -z $gomod || ! -f $gomod ]]; then
		log "could not locate the go.mod of $modver"
		return 1
	fi
	# Handles single-line directives and ( ... ) blocks. Only modules that the go.mod also requires get a
	# replacement (this skips guard entries such as etcd's `go.etcd.io/etcd => ./FORBIDDEN_DEPENDENCY`).
	awk -v ver="$ver" '
		function fields(line,    n, i) {
			n = split(line, f, /[[:space:]]+/); nf = 0
			for (i = 1; i <= n; i++) if (f[i] != "") g[++nf] = f[i]
			return nf
		}
		/^(require|replace)[[:space:]]*\($/ { block = $1; next }
		block != "" && /^\)/ { block = ""; next }
		{
			line = $0; kind = block
			if (kind == "") {
				if ($1 != "require" && $1 != "replace") next
				kind = $1; sub(/^[a-z]+[[:space:]]+/, "", line)
			}
			sub(/\/\/.*/, "", line)
			n = fields(line)
			if (n == 0) next
			if (kind == "require") { required[g[1]] = 1; next }
			for (j = 2; j <= n; j++) if (g[j] == "=>") { if (g[j + 1] ~ /^\.\.?\//) local[g[1]] = 1; break }
		}
		END { for (m in local) if (m in required) printf "replace %s => %s %s\n", m, m, ver }' "$gomod" | sort
}

# build_module DIR MAIN_MODULE VERSION REPLACE_VERSION LDFLAGS PKG:BIN...
build_module() {
	local dir=$1 mainmod=$2 ver=$3 repver=$4 ldflags=$5
	shift 5
	local spec pkg bin
	mkdir -p "$dir"
	log "preparing throw-away module $dir for $mainmod@$ver"
	{
		echo "module kubectl-hami.local/build/$(basename "$dir")"
		echo
		echo "go 1.26"
		echo
		echo "require $mainmod $ver"
		echo
		replaces_for "$mainmod@$ver" "$repver"
	} >"$dir/go.mod.tmp"
	mv "$dir/go.mod.tmp" "$dir/go.mod"
	rm -f "$dir/go.sum"
	{
		echo "//go:build tools"
		echo
		echo "package tools"
		echo
		echo "import ("
		for spec in "$@"; do
			echo "	_ \"${spec%%:*}\""
		done
		echo ")"
	} >"$dir/tools.go"
	log "$(grep -c '^replace ' "$dir/go.mod") replace directives; running go mod tidy"
	(cd "$dir" && "$GO" mod tidy) >&2
	for spec in "$@"; do
		pkg=${spec%%:*} bin=${spec##*:}
		if [[ -x $BIN_DIR/$bin ]]; then
			log "$bin already present"
			continue
		fi
		log "building $bin from $pkg (this can take many minutes the first time)"
		local start=$SECONDS
		rm -f "$BIN_DIR/.$bin.tmp"
		(cd "$dir" && "$GO" build -trimpath -ldflags "$ldflags" -o "$BIN_DIR/.$bin.tmp" "$pkg") >&2
		mv -f "$BIN_DIR/.$bin.tmp" "$BIN_DIR/$bin"
		log "built $bin in $((SECONDS - start))s ($(du -h "$BIN_DIR/$bin" | cut -f1))"
	done
}

K8S_LDFLAGS="-s -w"
for pkgpath in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	K8S_LDFLAGS+=" -X $pkgpath.gitVersion=$K8S_VERSION"
	K8S_LDFLAGS+=" -X $pkgpath.gitMajor=$(echo "${K8S_VERSION#v}" | cut -d. -f1)"
	K8S_LDFLAGS+=" -X $pkgpath.gitMinor=$(echo "${K8S_VERSION#v}" | cut -d. -f2)"
	K8S_LDFLAGS+=" -X $pkgpath.gitTreeState=clean"
done

total=$SECONDS
if [[ ! -x $BIN_DIR/etcd ]]; then
	build_module "$BIN_DIR/build/etcd" go.etcd.io/etcd/server/v3 "$ETCD_VERSION" "$ETCD_VERSION" "-s -w" \
		"go.etcd.io/etcd/server/v3:etcd"
fi
if [[ ! -x $BIN_DIR/kube-apiserver || ! -x $BIN_DIR/kube-scheduler ]]; then
	build_module "$BIN_DIR/build/kubernetes" k8s.io/kubernetes "$K8S_VERSION" "$K8S_STAGING_VERSION" "$K8S_LDFLAGS" \
		"k8s.io/kubernetes/cmd/kube-apiserver:kube-apiserver" \
		"k8s.io/kubernetes/cmd/kube-scheduler:kube-scheduler"
fi
all_present || { log "some binaries are still missing in $BIN_DIR"; exit 1; }
log "all binaries present in $BIN_DIR (took $((SECONDS - total))s)"
echo "$BIN_DIR"
