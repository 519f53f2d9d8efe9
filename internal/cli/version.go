package cli

import (
	"context"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hami/kubectl-hami/internal/version"
)

// Version is the -o json|yaml form of `kubectl hami version`.
type Version struct {
	APIVersion string `json:"apiVersion"` // kubectl-hami.io/v1alpha1
	Kind       string `json:"kind"`       // Version
	Version    string `json:"version"`    // the release, e.g. v0.3.0 (dev for a local build)
	Commit     string `json:"commit"`     // the git commit built
	BuildDate  string `json:"buildDate"`  // when it was built (RFC 3339)
	GoVersion  string `json:"goVersion"`  // the Go toolchain
	Platform   string `json:"platform"`   // GOOS/GOARCH
}

// VersionOptions is `kubectl hami version`.
type VersionOptions struct {
	Output  string
	streams genericiooptions.IOStreams
}

func newVersionCommand(s genericiooptions.IOStreams) *cobra.Command {
	o := &VersionOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version of kubectl-hami",
		Example: `  kubectl hami version
  kubectl hami version -o json`,
		Args: cobra.NoArgs,
		RunE: runCommand(o),
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "output format: json or yaml (default: one line)")
	return cmd
}

// Complete has nothing to fill.
func (o *VersionOptions) Complete(*cobra.Command, []string) error { return nil }

// Validate checks the output format.
func (o *VersionOptions) Validate() error {
	return validateOutput(o.Output, "", "json", "yaml")
}

// Run prints the build stamp.
func (o *VersionOptions) Run(context.Context) error {
	if o.Output == "" {
		_, err := fmt.Fprintln(o.streams.Out, version.String())
		return err
	}
	return printObject(o.streams.Out, o.Output, Version{
		APIVersion: APIVersion,
		Kind:       "Version",
		Version:    version.Version,
		Commit:     version.Commit,
		BuildDate:  version.Date,
		GoVersion:  runtime.Version(),
		Platform:   runtime.GOOS + "/" + runtime.GOARCH,
	})
}
