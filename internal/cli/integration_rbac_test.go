package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// TestNamespaceOnlyUserIsToldTheReaderRole: a user whose role reaches one namespace only runs the read commands
// against a real kube-apiserver (with RBAC) and is told the ClusterRole to apply and the binding to create, for
// that user; once a cluster admin has done exactly that, with deploy/reader's role, every read command works.
func TestNamespaceOnlyUserIsToldTheReaderRole(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	loadDemo(t, env.Client)
	ctx := context.Background()
	rbac := env.Client.RbacV1()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "inference", Name: "pod-reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods", "events", "resourcequotas"}, Verbs: []string{"get", "list", "watch"}}}}
	if _, err := rbac.Roles("inference").Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	alice := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}
	if _, err := rbac.RoleBindings("inference").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "inference", Name: "alice"},
		Subjects: alice, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "pod-reader"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The admin's kubeconfig, impersonating alice (kubectl's --as).
	as := []string{"--kubeconfig", env.Kubeconfig, "--as", "alice", "-n", "inference"}
	commands := [][]string{{"top", "--once"}, {"why-pending", "llm-serve-2"}, {"what-if", "--gpus", "1"}, {"snapshot", "--events=false"}}
	lint := []string{"lint"}
	for _, args := range append(commands, lint) {
		_, _, err := runB(t, append(args, as...)...)
		if err == nil {
			t.Fatalf("%v as alice: no error before the reader role is bound", args)
		}
		t.Logf("%v as alice: %v", args, err)
		for _, want := range []string{
			"the API server at " + env.APIServerURL + " refused a read: nodes is forbidden: User \"alice\" cannot list resource \"nodes\"",
			"a role in one namespace is not enough",
			"kubectl apply -k deploy/reader",
			"kubectl create clusterrolebinding kubectl-hami-reader-alice --clusterrole=kubectl-hami-reader --user=alice",
			"--snapshot cluster.yaml",
		} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%v as alice: error %q lacks %q", args, err, want)
			}
		}
	}

	// The admin applies deploy/reader's ClusterRole and the binding the error names.
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "reader", "clusterrole.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var reader rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(data, &reader); err != nil {
		t.Fatalf("deploy/reader/clusterrole.yaml: %v", err)
	}
	if reader.Name != readerRole {
		t.Fatalf("deploy/reader/clusterrole.yaml names %q, the commands name %q", reader.Name, readerRole)
	}
	if _, err := rbac.ClusterRoles().Create(ctx, &reader, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "kubectl-hami-reader-alice"},
		Subjects: alice, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: readerRole}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The API server's authorizer reads RBAC objects through its own informers: wait until it says alice may
	// list nodes (a SubjectAccessReview asks that same authorizer), or the first command can race the binding.
	waitAuthorized(t, env, "alice", "list", "nodes")
	for _, args := range commands {
		if _, errOut, err := runB(t, append(args, as...)...); err != nil {
			t.Errorf("%v as alice with the reader role: %v\n%s", args, err, errOut)
		}
	}
	if _, errOut, err := runB(t, append(lint, as...)...); err != nil {
		t.Errorf("lint as alice with the reader role: %v\n%s", err, errOut)
	}
	// Events too: the snapshot keeps them with the role alone.
	if out, errOut, err := runB(t, append([]string{"snapshot"}, as...)...); err != nil || !strings.Contains(out, "kind: Event") {
		t.Errorf("snapshot as alice keeps no events: %v\n%s", err, errOut)
	}
}

// waitAuthorized polls the API server's authorizer until user may verb resource at the cluster scope (30 s).
func waitAuthorized(t *testing.T, env *testenv.Env, user, verb, resource string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		sar, err := env.Client.AuthorizationV1().SubjectAccessReviews().Create(t.Context(), &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: user, ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Resource: resource}}},
			metav1.CreateOptions{})
		if err == nil && sar.Status.Allowed {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s may still not %s %s after 30 s (last review: %+v, %v)", user, verb, resource, sar, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestReaderRoleDocumented: docs/install.md shows deploy/reader's ClusterRole as it is.
func TestReaderRoleDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "install.md"))
	if err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(filepath.Join("..", "..", "deploy", "reader", "clusterrole.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)### What the read commands need.*?```yaml\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal(`docs/install.md has no yaml block under "What the read commands need"`)
	}
	uncommented := regexp.MustCompile(`(?m)^#.*\n`).ReplaceAll(file, nil)
	if string(m[1]) != string(uncommented) {
		t.Errorf("docs/install.md's reader role differs from deploy/reader/clusterrole.yaml: %s", diff(string(uncommented), string(m[1])))
	}
}
