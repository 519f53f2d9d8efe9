// Package deploy holds the Kubernetes manifests of kubectl-hami (deploy/extender: `kubectl apply -k
// deploy/extender` runs serve-extender beside kube-scheduler in place of HAMi's scheduler; see docs/deploy.md).
//
// It has no code: its tests read every manifest, check how the objects fit together, apply them to a real
// kube-apiserver (server-side apply, dry run), and run kube-scheduler and serve-extender with exactly the RBAC
// the manifests grant until a GPU pod is bound.
package deploy
