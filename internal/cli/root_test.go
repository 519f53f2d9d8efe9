package cli

import (
	"bytes"
	"encoding/json"
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

func TestVersionOutputJSON(t *testing.T) {
	var out bytes.Buffer
	cmd := NewRootCommand(genericiooptions.IOStreams{Out: &out, ErrOut: &out})
	cmd.SetArgs([]string{"version", "-o", "json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	var got Version
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("version -o json is not JSON: %v\n%s", err, out.String())
	}
	if got.Kind != "Version" || got.Version != version.Version || got.Platform == "" || got.GoVersion == "" {
		t.Fatalf("version -o json = %+v", got)
	}
	out.Reset()
	cmd = NewRootCommand(genericiooptions.IOStreams{Out: &out, ErrOut: &out})
	cmd.SetArgs([]string{"version", "-o", "table"})
	if err := cmd.Execute(); err == nil {
		t.Fatal("version -o table: no error")
	}
}

// Errors in how a command is called point at its help, with the plugin's name as users type it.
func TestUsageErrorsPointAtHelp(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"why-pending", "--no-such-flag"}, "error: unknown flag: --no-such-flag\nSee 'kubectl hami why-pending --help' for usage.\n"},
		{[]string{"why-pending", "a", "b"}, "See 'kubectl hami why-pending --help' for usage.\n"},
		{[]string{"no-such-command"}, "See 'kubectl hami --help' for usage.\n"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			streams := genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}
			cmd := NewRootCommand(streams)
			cmd.SetArgs(tc.args)
			if code := execute(cmd, streams); code != 1 {
				t.Fatalf("exit %d, want 1", code)
			}
			if !strings.HasSuffix(errOut.String(), tc.want) {
				t.Fatalf("stderr %q, want it to end with %q", errOut.String(), tc.want)
			}
		})
	}
}

func TestUsageSaysKubectlHami(t *testing.T) {
	var out bytes.Buffer
	cmd := NewRootCommand(genericiooptions.IOStreams{Out: &out, ErrOut: &out})
	cmd.SetArgs([]string{"why-pending", "--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Usage:\n  kubectl hami why-pending") {
		t.Fatalf("usage does not say `kubectl hami why-pending`:\n%s", out.String())
	}
}

func TestPodNameTypeSlashName(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"train-7", "train-7", ""},
		{"pod/train-7", "train-7", ""},
		{"pods/train-7", "train-7", ""},
		{"po/train-7", "train-7", ""},
		{"Pod/train-7", "train-7", ""},
		{"node/gpu-a100-01", "", `"node/gpu-a100-01" is not a pod`},
		{"pod/", "", `"pod/" names no pod`},
	} {
		got, err := podName(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("podName(%q) error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("podName(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
