// Package migtest holds the device plugin's MIG tests: the agent over go-nvml's DGX A100 and H100 mocks, the real
// scheduler extender and a fake kubelet. They live apart from the device plugin's other tests because go-nvml
// needs lazy symbol binding, which Go's linker turns off in any binary holding the `plugin` package, and those
// tests link kustomize (which holds it) for the deployment manifests.
package migtest
