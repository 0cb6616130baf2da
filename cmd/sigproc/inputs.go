package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"github.com/sigproc/sigproc/capture"
	"github.com/sigproc/sigproc/config"
	"github.com/sigproc/sigproc/sink"
)

// configArg takes the config from the argument (sigproc run CONFIG) or
// -c, and refuses both or neither.
func configArg(cmd *cobra.Command, o *runOptions, args []string) error {
	switch {
	case len(args) == 1 && cmd.Flags().Changed("config"):
		return fmt.Errorf("give the config once: as the argument (%s) or with -c (%s), not both", args[0], o.config)
	case len(args) == 1:
		o.config = args[0]
	case o.config == "":
		return errors.New("no config: sigproc run CONFIG (or -c CONFIG); see configs/ and 'sigproc run --help'")
	}
	return nil
}

// overrideInput makes path the source of a file or stdin source: relative
// to the current directory, as a flag is; "-" reads stdin.
func overrideInput(cfg *config.Config, path string) error {
	s := &cfg.Source
	if s.Type != config.SourceFile && s.Type != config.SourceStdin {
		return fmt.Errorf("--input: the config's source is %s; --input replaces the path of a file (or stdin) source", s.Type)
	}
	if path == config.StdoutPath {
		s.Type, s.Path = config.SourceStdin, ""
		cfg.MarkOverride("source.type", "--input")
		cfg.MarkOverride("source.format", "--input")
		return nil
	}
	if s.Type == config.SourceStdin {
		s.Type = config.SourceFile
		cfg.MarkOverride("source.type", "--input")
	}
	if path != "" && !filepath.IsAbs(path) {
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
	}
	s.Path = path
	cfg.MarkOverride("source.path", "--input")
	// A format the file's name implied goes with the old name; a format
	// written in the config still applies (and is checked against the
	// file's content).
	if !slices.Contains([]string{config.FormatWAV, config.FormatSigMF}, s.Format) {
		return nil
	}
	if f := (&config.Source{Type: config.SourceFile, Path: path}).EffectiveFormat(); f != "" {
		s.Format = f
	}
	return nil
}

// progressTotal is the bar's length: the run's bound, or the frames a file
// still holds when that is known and sooner.
func progressTotal(src capture.Source, bound int64) int64 {
	if l, ok := src.(interface{ Len() (int64, bool) }); ok {
		if n, ok := l.Len(); ok && (bound <= 0 || n < bound) {
			return n
		}
	}
	return bound
}

// outputFlag is a file a command writes, with the flag that names it.
type outputFlag struct{ flag, path string }

// checkOutputs refuses, before anything is opened for writing, an output
// that is one of the files the command reads (sink.CheckNotInput: by
// device and inode, or by path with symlinks and ".." resolved), or that
// another of its outputs names too. Outputs "" (not asked for) and "-"
// (stdout) are skipped.
func checkOutputs(inputs []string, outputs ...outputFlag) error {
	var earlier []outputFlag
	for _, o := range outputs {
		if o.path == "" || o.path == config.StdoutPath {
			continue
		}
		if err := sink.CheckNotInput(o.path, inputs...); err != nil {
			return fmt.Errorf("%s: %w", o.flag, err)
		}
		for _, e := range earlier {
			if sink.CheckNotInput(o.path, e.path) != nil {
				return fmt.Errorf("%s %s and %s %s are the same file; give each output its own path", e.flag, e.path, o.flag, o.path)
			}
		}
		earlier = append(earlier, o)
	}
	return nil
}

// checkFileOutputs is checkOutputs, then checkNew: for the commands
// whose outputs are written once their work is done (bench, probe).
func checkFileOutputs(inputs []string, overwrite bool, outputs ...outputFlag) error {
	if err := checkOutputs(inputs, outputs...); err != nil {
		return err
	}
	return checkNew(overwrite, outputs...)
}

// checkNew refuses, before a command does its work, an output that
// exists unless overwrite: a report or a bench output never replaces a
// file silently, as run's sink, design --response and run's profiles do
// not. Outputs "" and "-" are skipped.
func checkNew(overwrite bool, outputs ...outputFlag) error {
	if overwrite {
		return nil
	}
	for _, o := range outputs {
		if o.path == "" || o.path == config.StdoutPath {
			continue
		}
		if _, err := os.Lstat(o.path); err == nil {
			return fmt.Errorf("%s %s: the file exists; give --overwrite to replace it, or another path", o.flag, o.path)
		}
	}
	return nil
}
