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

// CreateWithStatus creates a copy of obj (resourceVersion and creation time cleared) and then writes its
// status through the status subresource, which create ignores; for objects of the CRDs installed here.
func (e *Env) CreateWithStatus(t testing.TB, gvr schema.GroupVersionResource, want *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dyn := e.Dynamic(t)
	obj := want.DeepCopy()
	obj.SetResourceVersion("")
	obj.SetCreationTimestamp(metav1.Time{})
	var ri dynamic.ResourceInterface = dyn.Resource(gvr)
	if ns := obj.GetNamespace(); ns != "" {
		ri = dyn.Resource(gvr).Namespace(ns)
	}
	created, err := ri.Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("testenv: create %s %s: %v", want.GetKind(), want.GetName(), err)
	}
	status, ok := want.Object["status"]
	if !ok {
		return created
	}
	created.Object["status"] = status
	updated, err := ri.UpdateStatus(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("testenv: status of %s %s: %v", want.GetKind(), want.GetName(), err)
	}
	return updated
}
