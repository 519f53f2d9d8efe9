package cli

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// runIn executes the root command with stdin.
func runIn(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := newRoot(genericiooptions.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut}, func() time.Time { return fixedNow })
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), errOut.String(), err
}

// TestInputSaysWhatItDid: issue 14's silent inputs. Every case names what happened to the input.
func TestInputSaysWhatItDid(t *testing.T) {
	multi, err := os.ReadFile("testdata/what-if-multi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	world, err := os.ReadFile(cardWorld)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name            string
		stdin           string
		args            []string
		wantErr         string
		wantOut, errOut []string
	}{
		{name: "every document of -f, ignored flags and kinds named", args: []string{"what-if", "--demo", "-f", "testdata/what-if-multi.yaml", "--gpus", "4", "--gpumem", "10"},
			wantOut: []string{"What if team-vision/web-what-if were created now?", "all 3 wanted fit.", "What if team-vision/big were created now?", "1 wanted: 1 would wait."},
			errOut:  []string{`kind "Service" is not a Pod`, "--gpus is ignored with -f", "--gpumem is ignored with -f"}},
		{name: "-f - reads standard input", stdin: string(multi), args: []string{"what-if", "--demo", "-f", "-"},
			wantOut: []string{"What if team-vision/web-what-if were created now?", "What if team-vision/big were created now?"}},
		{name: "--exit-code", args: []string{"what-if", "--demo", "-f", "testdata/what-if-multi.yaml", "--exit-code"}, wantErr: "not every pod would fit"},
		{name: "--exit-code when it fits", args: []string{"what-if", "--demo", "-n", "team-vision", "--gpus", "1", "--gpumem", "8000", "--exit-code"},
			wantOut: []string{"the 1 wanted fits."}},
		{name: "--card needs --queue", args: []string{"what-if", "--demo", "--card", "NVIDIA-H100-80GB-HBM3"}, wantErr: "needs --queue"},
		{name: "--snapshot - reads standard input", stdin: string(world), args: []string{"top", "--once", "--snapshot", "-"},
			wantOut: []string{"Source: file standard input", "mig-notebook"}},
		{name: "gpumem units and huge values", args: []string{"what-if", "--demo", "-f", "testdata/what-if-units.yaml"},
			wantOut: []string{"nvidia.com/gpumem is in MiB, without a unit: 16Gi reads as 17179869184 MiB; you probably meant 16384",
				"99999999999999999999 is too large to be meant; clamped to 1099511627776", "GPUs is more than any node has; clamped to 65536",
				"17179869184 MiB is more than any GPU of the cluster has (the largest has 81920 MiB)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, err := runIn(t, tc.stdin, tc.args...)
			switch {
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			case tc.wantErr == "" && err != nil:
				t.Fatalf("%v\n%s", err, errOut)
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.errOut {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
		})
	}
}

// TestSnapshotInputIsCapped: /dev/zero and oversized input stop with an error naming the input.
func TestSnapshotInputIsCapped(t *testing.T) {
	if _, _, err := run(t, "top", "--once", "--snapshot", "/dev/zero"); err == nil || !strings.Contains(err.Error(), "/dev/zero: binary data") {
		t.Errorf("--snapshot /dev/zero: %v", err)
	}
	big := strings.Repeat("# padding line of a snapshot that is far too large\n", 200000)
	old := snapshotMax(1 << 20)
	defer snapshotMax(old)
	if _, _, err := runIn(t, big, "top", "--once", "--snapshot", "-"); err == nil || !strings.Contains(err.Error(), "standard input: more than 1 MiB") {
		t.Errorf("an oversized snapshot: %v", err)
	}
}

func snapshotMax(n int64) int64 {
	old := snapshot.MaxFileBytes
	snapshot.MaxFileBytes = n
	return old
}
