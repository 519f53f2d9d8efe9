package cli

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestLintGolden pins the exact output of lint on the demo and on a fixture with one of each misconfiguration,
// and its exit status: an error-severity finding fails the command.
func TestLintGolden(t *testing.T) {
	cases := []struct {
		golden string
		args   []string
		errors int // error findings, so the command fails
	}{
		// The demo's team-vision quota counts requests.nvidia.com/gpumem past its hard value: Kubernetes would
		// refuse any further GPU-memory pod there (mig-large could not have been created).
		{"lint-demo.txt", []string{"lint", "--demo"}, 0},
		{"lint-cluster.txt", []string{"lint", "--snapshot", "testdata/lint-cluster.yaml"}, 8},
		{"lint-cluster-errors.txt", []string{"lint", "--snapshot", "testdata/lint-cluster.yaml", "--min-severity", "error"}, 8},
		{"lint-cluster.json", []string{"lint", "--snapshot", "testdata/lint-cluster.yaml", "-o", "json"}, 8},
		{"lint-clean.txt", []string{"lint", "--snapshot", "testdata/lint-clean.yaml"}, 0},
		{"lint-clean-out.yaml", []string{"lint", "--snapshot", "testdata/lint-clean.yaml", "-o", "yaml"}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.golden, func(t *testing.T) {
			out, errOut, err := run(t, tc.args...)
			var failed errLintFailed
			switch {
			case tc.errors == 0 && err != nil:
				t.Fatalf("%v: %v\n%s", tc.args, err, errOut)
			case tc.errors > 0 && (!errors.As(err, &failed) || failed.errors != tc.errors):
				t.Fatalf("%v: error %v, want lint to fail with %d errors", tc.args, err, tc.errors)
			}
			if errOut != "" {
				t.Errorf("stderr: %s", errOut)
			}
			checkGolden(t, tc.golden, tc.args, out)
		})
	}
}

// TestLintFixture checks that the fixture has each kind of finding lint promises, so that a check that stops
// firing fails here and not only as a golden diff.
func TestLintFixture(t *testing.T) {
	out, _, _ := run(t, "lint", "--snapshot", "testdata/lint-cluster.yaml", "-o", "json")
	var got Lint
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Kind != "Lint" || got.APIVersion != APIVersion || got.Errors != 8 {
		t.Errorf("header: %+v", got)
	}
	seen := map[string]bool{}
	for _, f := range got.Findings {
		seen[f.Check] = true
		if f.Object.Kind == "" || f.Object.Name == "" || f.Field == "" || f.Message == "" || f.Fix == "" {
			t.Errorf("incomplete finding %+v", f)
		}
	}
	for _, c := range []string{"card-quota-unparsable", "card-quota-empty", "card-name-unparsable", "card-request-unparsable", "card-unknown",
		"card-alternatives-mixed", "card-amount-zero", "card-slots-counted", "card-labels-incomplete", "card-quota-above-physical",
		"card-not-in-queue-quota", "queue-missing", "podgroup-missing", "quota-key-ignored", "quota-zero"} {
		if !seen[c] {
			t.Errorf("the fixture has no %s finding", c)
		}
	}
}

// TestLintCleanFixture guards the clean fixture itself: it must hold a cluster, not a golden output.
func TestLintCleanFixture(t *testing.T) {
	out, _, err := run(t, "lint", "--snapshot", "testdata/lint-clean.yaml", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"findings": []`) {
		t.Errorf("findings on the clean fixture:\n%s", out)
	}
	data, err := os.ReadFile("testdata/lint-clean.yaml")
	if err != nil || !strings.Contains(string(data), "kind: Queue") || !strings.Contains(string(data), "kind: ResourceQuota") {
		t.Errorf("testdata/lint-clean.yaml is not the clean cluster fixture (%v)", err)
	}
}

func TestLintFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"lint", "--demo", "--min-severity", "fatal"}, `--min-severity "fatal": want info, warning or error`},
		{[]string{"lint", "--demo", "-o", "wide"}, `unknown output format "wide"`},
		{[]string{"lint", "--demo", "--snapshot", "x.yaml"}, "--demo and --snapshot are exclusive"},
		{[]string{"lint", "--snapshot", "testdata/does-not-exist.yaml"}, "does-not-exist.yaml"},
	} {
		_, _, err := run(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
	out, _, err := run(t, "lint", "--help")
	if err != nil || !strings.Contains(out, "Exit status: 1 when at least one finding has severity error") {
		t.Errorf("help does not document the exit status: %v\n%s", err, out)
	}
	if got := (errLintFailed{errors: 1}).Error(); got != "lint found 1 error" {
		t.Errorf("error text %q", got)
	}
}
