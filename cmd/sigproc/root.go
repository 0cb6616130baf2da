package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

const rootLong = `sigproc is a real-time signal-processing pipeline for radio, sensing and
instrumentation work. A capture source fills a ring of fixed-size blocks; a
chain of stages (frequency shift, FIR filter with decimation, rational
resampler, polyphase channelizer, channel select) runs on them on the CPU
or, built with CUDA, on the GPU; a sink writes the result.

  sources: synthetic signals; raw files and pipes (rf32_le, ri16_le, cf32_le,
           ci16_le, cu8 from rtl_sdr, cs8 from HackRF); WAV (8-bit to 32-bit
           PCM, float); SigMF recordings; live ADCs through Linux IIO and ALSA;
           ZeroMQ (GNU Radio)
  sinks:   raw files or stdout ("-"), WAV, SigMF (metadata carried through),
           ZeroMQ, null; a file or SigMF recording per channel (split)
  streams: N channels per frame, each real or complex I/Q, filtered apart

A run is described by one strict YAML config (see configs/ and README.md).
Any mistake in it - an unknown key, a wrong type, a value out of range - is
reported with its file and line:

  configs/x.yaml:12: source.sample_rate: must be > 0, got -5

Quick start (from the repository root):

  go run ./cmd/sigproc run configs/synthetic-cpu.yaml
  make test

Samples are float32 inside: one value per real sample, interleaved I,Q for
complex ones, the channels of a frame side by side; integer inputs are
scaled by 1/2^(bits-1). Whenever stdout carries samples, the summary and the
logs go to stderr.`

const rootExample = `  # Filter 4 Mi synthetic samples on the CPU, write out/synthetic.sigmf-*
  sigproc run configs/synthetic-cpu.yaml

  # Same, as a pure throughput test with bigger blocks
  sigproc run configs/synthetic-cpu.yaml --sink-type null --block-size 65536

  # Filter the recording the first command wrote, or any other
  sigproc run configs/file-sigmf.yaml --input rec.sigmf-meta --sink-path out/rec

  # In a pipe: an SDR's bytes in on stdin, filtered samples out on stdout
  rtl_sdr -f 100e6 -s 2.4e6 - | sigproc run configs/rtl-sdr.yaml --sink-path - > y.cf32

  # Filter 16-bit audio from a sound card, play it back
  arecord -q -f S16_LE -r 48000 -t raw | sigproc run configs/stdin-ri16.yaml --sink-path - | aplay -q -f S16_LE -r 48000

  # Design a filter and check its response
  sigproc design --type lowpass --rate 1e6 --cutoff 1e5 --taps 129 > taps.txt

  # Benchmarks: the CPU kernel and chain; GPU builds add fir, bandwidth, stream
  sigproc bench cpu --taps 129
  sigproc bench chain

  # GPU builds: end-to-end block latency of each backend path
  build/sigproc-cuda probe -c configs/probe.yaml

  # Version, platform and CUDA support
  sigproc version`

// newRootCmd builds the command tree.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "sigproc",
		Short:         "Real-time signal pipeline: capture -> ring -> stages on CPU/CUDA -> sink",
		Long:          rootLong,
		Example:       rootExample,
		SilenceErrors: true, // main prints the error once
		SilenceUsage:  true, // a bad flag gets a --help hint instead of the whole usage
	}
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return fmt.Errorf("%w (see '%s --help')", err, cmd.CommandPath())
	})
	root.PersistentFlags().String("log-level", "", "log level: trace, debug, info, warn or error (default: the config's log.level, else info)")
	root.PersistentFlags().Bool("log-json", false, "log JSON lines instead of human-readable console output")
	root.AddCommand(newRunCmd(), newDesignCmd(), newVersionCmd(), newBenchCmd())
	root.AddCommand(newProbeCmd())
	return root
}

// logSettings resolves the logger settings: the --log-level and --log-json
// flags win over the config's log.level and log.format.
func logSettings(cmd *cobra.Command, cfgLevel, cfgFormat string) (level string, json bool) {
	level, json = cfgLevel, cfgFormat == "json"
	if f := cmd.Flag("log-level"); f != nil && f.Changed {
		level = f.Value.String()
	}
	if f := cmd.Flag("log-json"); f != nil && f.Changed {
		json = f.Value.String() == "true"
	}
	if level == "" {
		level = "info"
	}
	return level, json
}

// loggerFrom returns the logger the persistent --log-level and --log-json
// flags ask for, for commands without a config. A bad --log-level falls back
// to info and says so.
func loggerFrom(cmd *cobra.Command) zerolog.Logger {
	level, json := logSettings(cmd, "", "")
	log, err := newLogger(cmd.ErrOrStderr(), level, json)
	if err != nil {
		log, _ = newLogger(cmd.ErrOrStderr(), "info", json)
		log.Warn().Err(err).Msg("using log level info")
	}
	return log
}

// newLogger returns a logger writing to w: JSON lines, or a console writer
// (colour only on a terminal).
func newLogger(w io.Writer, level string, json bool) (zerolog.Logger, error) {
	lvl, err := parseLevel(level)
	if err != nil {
		return zerolog.Nop(), err
	}
	if json {
		return zerolog.New(w).Level(lvl).With().Timestamp().Logger(), nil
	}
	cw := zerolog.ConsoleWriter{Out: w, TimeFormat: time.TimeOnly, NoColor: !isTerminal(w)}
	return zerolog.New(cw).Level(lvl).With().Timestamp().Logger(), nil
}

func parseLevel(level string) (zerolog.Level, error) {
	switch strings.ToLower(level) {
	case "trace":
		return zerolog.TraceLevel, nil
	case "debug":
		return zerolog.DebugLevel, nil
	case "", "info":
		return zerolog.InfoLevel, nil
	case "warn":
		return zerolog.WarnLevel, nil
	case "error":
		return zerolog.ErrorLevel, nil
	}
	return zerolog.NoLevel, fmt.Errorf("--log-level: unknown level %q (allowed: trace, debug, info, warn, error)", level)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
