package testenv

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// volcanoCRD is a minimal CustomResourceDefinition of a Volcano kind in scheduling.volcano.sh/v1beta1:
// the schema keeps every field (x-kubernetes-preserve-unknown-fields), the status subresource is on.
func volcanoCRD(plural, kind, scope, short string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": plural + ".scheduling.volcano.sh"},
		"spec": map[string]any{
			"group": "scheduling.volcano.sh", "scope": scope,
			"names": map[string]any{"plural": plural, "singular": strings.ToLower(kind), "kind": kind, "shortNames": []any{short}},
			"versions": []any{map[string]any{
				"name": "v1beta1", "served": true, "storage": true,
				"subresources": map[string]any{"status": map[string]any{}},
				"schema":       map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
			}},
		},
	}}
}

// Dynamic is a dynamic client for the apiserver.
func (e *Env) Dynamic(t testing.TB) dynamic.Interface {
	t.Helper()
	dyn, err := dynamic.NewForConfig(e.Config)
	if err != nil {
		t.Fatalf("testenv: dynamic client: %v", err)
	}
	return dyn
}

// InstallVolcanoCRDs installs minimal Queue (cluster-scoped) and PodGroup (namespaced) CRDs of Volcano and
// waits until the apiserver serves them.
func (e *Env) InstallVolcanoCRDs(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dyn := e.Dynamic(t)
	for _, crd := range []*unstructured.Unstructured{
		volcanoCRD("queues", "Queue", "Cluster", "q"),
		volcanoCRD("podgroups", "PodGroup", "Namespaced", "pg"),
	} {
		if _, err := dyn.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("testenv: create CRD %s: %v", crd.GetName(), err)
		}
	}
	for _, gvr := range []schema.GroupVersionResource{
		{Group: "scheduling.volcano.sh", Version: "v1beta1", Resource: "queues"},
		{Group: "scheduling.volcano.sh", Version: "v1beta1", Resource: "podgroups"},
	} {
		var err error
		for ctx.Err() == nil {
			if _, err = dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1}); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("testenv: %s not served: %v", gvr.Resource, fmt.Errorf("%w", err))
		}
	}
}
