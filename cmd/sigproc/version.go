package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, Go version, platform and build tags",
		Long: `Print the sigproc version (set at build time with
-ldflags "-X main.version=v1.2.3"; "dev" otherwise), the Go toolchain that
built it, the OS/architecture, and whether CUDA support was compiled in
(-tags cuda).`,
		Example: `  sigproc version
  go build -ldflags "-X main.version=$(git describe --tags)" ./cmd/sigproc && ./sigproc version`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tags := buildTags()
			if tags == "" {
				tags = "(none)"
			}
			cuda := "no (build with -tags cuda)"
			if cudaBuilt {
				cuda = "yes"
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "sigproc %s\ngo       %s\nplatform %s/%s\ntags     %s\ncuda     %s\n",
				version, runtime.Version(), runtime.GOOS, runtime.GOARCH, tags, cuda)
			return err
		},
	}
}

// buildTags returns the -tags the binary was built with, if recorded.
func buildTags() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, s := range info.Settings {
		if s.Key == "-tags" {
			return s.Value
		}
	}
	return ""
}
