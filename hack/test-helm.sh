#!/usr/bin/env bash
# test-helm.sh: the Helm chart's checks of `make test-release` (deploy/chart/kubectl-hami), for real:
#   1. helm lint --strict with each variant of the values;
#   2. helm template equals the kustomize builds (deploy/extender and each deploy/agent variant) modulo the
#      chart's labels and certificate material; the chart's certificates (its own, or cert-manager's objects);
#   3. helm install on a real kube-apiserver (internal/testenv) installs those objects, keeps its certificates
#      on upgrade, and passes deploy/attack_test.go's probes; a take-over from a HAMi release (fixtures named as
#      HAMi's chart names them) refuses while HAMi's scheduler runs, installs beside HAMi's device plugin and
#      device ConfigMap, and leaves them on uninstall.
# helm is built once from its Go module into the cache folder (hack/helm-binaries.sh); kube-apiserver and etcd
# come from hack/k8s-binaries.sh. No cluster and no network are needed once both are built.
#
# Environment: GO (go command).
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
helm_dir=$(bash hack/helm-binaries.sh | tail -1)
k8s_bin=$(bash hack/k8s-binaries.sh | tail -1)
"$helm_dir/helm" version --short >&2
log=$(mktemp "${TMPDIR:-/tmp}/kubectl-hami-helm-test.XXXXXX")
trap 'rm -f "$log"' EXIT
if ! KUBECTL_HAMI_HELM=$helm_dir/helm KUBECTL_HAMI_K8S_BIN=$k8s_bin "$GO" test -count=1 -timeout 15m -v \
	-run '^TestHelm' ./deploy/ >"$log" 2>&1; then
	cat "$log" >&2
	echo "[test-helm] FAIL" >&2
	exit 1
fi
grep -E '^(--- |ok)' "$log" >&2
echo "[test-helm] PASS: helm lint, helm template = kustomize build, helm install (attack probes, upgrade), take-over from HAMi" >&2
