package cli

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// readerRole is the ClusterRole the read commands need (deploy/reader, docs/install.md).
const readerRole = "kubectl-hami-reader"

// forbiddenUser finds the user in the API server's Forbidden message: `... User "alice" cannot list ...`.
var forbiddenUser = regexp.MustCompile(`User "([^"]+)" cannot`)

// errNeedsReaderRole is a list the API server refused: the read commands see the whole cluster's GPU state, so
// a role in one namespace is not enough. It says which role to apply and the binding to create, for the user
// the API server named.
type errNeedsReaderRole struct {
	server string
	status *apierrors.StatusError
}

func (e *errNeedsReaderRole) Unwrap() error { return e.status }

func (e *errNeedsReaderRole) Error() string {
	subject, name := "--user=NAME", "NAME"
	if m := forbiddenUser.FindStringSubmatch(e.status.ErrStatus.Message); m != nil {
		subject, name = "--user="+m[1], m[1]
		if sa, ok := strings.CutPrefix(m[1], "system:serviceaccount:"); ok {
			subject, name = "--serviceaccount="+sa, strings.ReplaceAll(sa, ":", "-")
		}
	}
	return fmt.Sprintf("the API server at %s refused a read: %s.\n"+
		"kubectl hami reads nodes, pods and resourcequotas of every namespace, so a role in one namespace is not enough. "+
		"A cluster admin applies the ClusterRole %s and binds it to you:\n"+
		"  kubectl apply -k deploy/reader     (from the kubectl-hami repository; the same rules are in docs/install.md, \"What the read commands need\")\n"+
		"  kubectl create clusterrolebinding %s-%s --clusterrole=%s %s\n"+
		"Without it, read a snapshot someone with the role saved: kubectl hami snapshot > cluster.yaml, then --snapshot cluster.yaml",
		e.server, e.status.ErrStatus.Message, readerRole, readerRole, name, readerRole, subject)
}

// needsReaderRole turns a Forbidden read into errNeedsReaderRole and says what an Unauthorized one means (the
// credentials, not the network); other errors are returned as they are.
func needsReaderRole(err error, server string) error {
	var status *apierrors.StatusError
	switch {
	case err == nil || !errors.As(err, &status):
		return err
	case apierrors.IsForbidden(err):
		return &errNeedsReaderRole{server: server, status: status}
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("%w\nthe API server at %s does not accept the kubeconfig's credentials: its token or certificate is wrong "+
			"or has expired; log in again (or refresh the token), or choose other credentials with --context or --user", err, server)
	}
	return err
}
