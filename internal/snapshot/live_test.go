package snapshot

import (
	"context"
	"strings"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// A user whose roles reach one namespace only is told which ClusterRole the read commands need, not only
// kube-apiserver's "cannot list resource ... at the cluster scope".
func TestLiveForbiddenNamesTheReaderRole(t *testing.T) {
	cs := fake.NewClientset()
	cs.PrependReactor("list", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "",
			errString(`User "alice" cannot list resource "nodes" in API group "" at the cluster scope`))
	})
	_, err := Live(context.Background(), cs, LiveOptions{Server: "https://10.0.0.1:6443"})
	if err == nil {
		t.Fatal("no error for a forbidden node list")
	}
	for _, want := range []string{"cannot list nodes from the cluster at https://10.0.0.1:6443", "at the cluster scope", "ClusterRole kubectl-hami-reader", "docs/install.md"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// Other failures keep their own message, without the RBAC advice.
func TestLiveOtherErrorsHaveNoRBACAdvice(t *testing.T) {
	cs := fake.NewClientset()
	cs.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("etcd is down")
	})
	_, err := Live(context.Background(), cs, LiveOptions{Server: "https://10.0.0.1:6443"})
	if err == nil || !strings.Contains(err.Error(), "cannot list pods") || strings.Contains(err.Error(), "kubectl-hami-reader") {
		t.Fatalf("error %v: want the pods list failure without RBAC advice", err)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// The live reader lists PriorityClasses and PodDisruptionBudgets, and reads on without them when forbidden.
func TestLiveReadsPreemptionObjects(t *testing.T) {
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "prod"}, Value: 1000}
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "infer", Namespace: "ml"}}
	s, err := Live(context.Background(), fake.NewClientset(pc, pdb), LiveOptions{Server: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.PriorityClasses) != 1 || len(s.PDBs) != 1 {
		t.Fatalf("read %d PriorityClasses and %d PDBs, want 1 and 1", len(s.PriorityClasses), len(s.PDBs))
	}
	cs := fake.NewClientset(pc, pdb)
	cs.PrependReactor("list", "poddisruptionbudgets", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "policy", Resource: "poddisruptionbudgets"}, "", errString("no"))
	})
	s, err = Live(context.Background(), cs, LiveOptions{Server: "x"})
	if err != nil || len(s.PDBs) != 0 || len(s.PriorityClasses) != 1 {
		t.Fatalf("forbidden PDB list: err %v, %d PDBs, %d PriorityClasses", err, len(s.PDBs), len(s.PriorityClasses))
	}
}
