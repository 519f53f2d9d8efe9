package main

import (
	"bytes"
	"testing"

	"github.com/kubectl-hami/kubectl-hami/examples"
)

// TestDemoClusterIsCurrent: the committed demo cluster is what the generator, and so the engine, produces
// today. When the engine's placement changes, regenerate it: go run ./hack/gendemo > examples/demo-cluster.yaml
func TestDemoClusterIsCurrent(t *testing.T) {
	var buf bytes.Buffer
	if err := generate(&buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), examples.DemoCluster) {
		t.Fatal("examples/demo-cluster.yaml is stale: run go run ./hack/gendemo > examples/demo-cluster.yaml")
	}
}
