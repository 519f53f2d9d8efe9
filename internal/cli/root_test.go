package cli

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hami/kubectl-hami/internal/version"
)

func TestVersionPrintsStamp(t *testing.T) {
	var out bytes.Buffer
	cmd := NewRootCommand(genericiooptions.IOStreams{Out: &out, ErrOut: &out})
	cmd.SetArgs([]string{"version"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(out.String()), version.String(); got != want {
		t.Fatalf("version printed %q, want %q", got, want)
	}
	if !strings.HasPrefix(out.String(), "kubectl-hami "+version.Version) {
		t.Fatalf("version line %q does not start with the version", out.String())
	}
}
