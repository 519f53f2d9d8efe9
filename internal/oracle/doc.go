// Package oracle holds the differential test that takes the real kube-scheduler as the oracle of what-if's
// verdict (oracle_test.go; docs/engine.md, "The real scheduler as the oracle").
//
// Generated worlds with kube-scheduler's own constraints (worldgen.Options.Kube) are loaded into a real
// kube-apiserver; kube-scheduler runs with the shipped serve-extender as deploy/extender configures them (the
// ConfigMap's KubeSchedulerConfiguration, the Deployment's arguments, the MutatingWebhookConfiguration), and a
// second kube-scheduler with the default profile decides the other pods. Each pending pod is created alone, after
// `kubectl hami what-if -f pod.yaml -o json` has judged it on the same live state; whether it lands, where, and the
// FailedScheduling message are compared with the verdict, and the disagreements are reported by class.
//
// The package has no code of its own: it is a test package apart, so that it links the commands, the extender
// and the control plane without slowing the tests of any of them, and `make soak-oracle` can run it alone.
package oracle
