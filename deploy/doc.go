// Package deploy holds the Kubernetes manifests of kubectl-hami (deploy/extender: `kubectl apply -k
// deploy/extender` runs serve-extender beside kube-scheduler in place of HAMi's scheduler; deploy/agent: the node
// agent; deploy/chart/kubectl-hami: both in one `helm install`, with their certificates; see docs/deploy.md and
// docs/agent.md).
//
// It has no code: its tests read every manifest, check how the objects fit together, apply them to a real
// kube-apiserver (server-side apply, dry run), run kube-scheduler and serve-extender with exactly the RBAC and
// admission policies the manifests install until a GPU pod is bound, and apply the default kustomizations as a
// user would to attack them with real identities (TestDefaultInstallRefusesForgery). The chart's tests
// (TestHelm*, run by hack/test-helm.sh in `make test-release`; skipped without KUBECTL_HAMI_HELM) check that
// `helm template` equals the kustomize builds and install the chart on a real kube-apiserver for the same attack.
package deploy
