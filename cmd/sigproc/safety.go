package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/rs/zerolog"

	"github.com/sigproc/sigproc/capture"
	"github.com/sigproc/sigproc/config"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/sink"
	"github.com/sigproc/sigproc/stage"
)

// runInputs lists the files a run reads, so that the sink can refuse to
// write over any of them: the config, the source (with a SigMF
// recording's metadata and dataset), the taps file, and whatever stdin is
// redirected from.
func runInputs(cfg *config.Config, configPath string, src capture.Source) []string {
	in := []string{configPath}
	if p := cfg.Source.Path; p != "" {
		in = append(in, p)
	}
	if f, ok := src.(interface{ Files() []string }); ok {
		in = append(in, f.Files()...)
	}
	if cfg.Filter.TapsFile != "" {
		in = append(in, cfg.Filter.TapsFile)
	}
	if cfg.Source.Type == config.SourceStdin {
		in = append(in, "/dev/stdin")
	}
	return in
}

// planSink checks the configured output without creating it: its path,
// that it is none of the inputs, and that it does not exist unless
// sink.overwrite (--overwrite) allows it. The files are created by the
// returned sink's Open, once everything else has started.
func planSink(ctx context.Context, cfg *config.Config, format string, chain stage.Chain, inputs []string, log zerolog.Logger) (*sink.Deferred, error) {
	s := &cfg.Sink
	if s.Type == config.SinkZMQ {
		// Bound once the run has started, like a file is created then.
		p, err := sink.Prepare(sink.Spec{Type: s.Type, Open: func() (sink.Sink, error) {
			return createZMQSink(ctx, cfg, format, chain.OutRate())
		}})
		if err != nil {
			return nil, err
		}
		return p.Deferred(), nil
	}
	spec := sink.Spec{
		Type: s.Type, Path: s.Path, Format: format, Overwrite: s.Overwrite, Inputs: inputs,
		StampStart: true, MakeDirs: true,
		// Warned once, as soon as it starts; the total is in the summary
		// and the metrics.
		OnClip: func(total uint64) {
			log.Warn().Uint64("clipped", total).Str("format", format).
				Msg("output clipping: values beyond int16 full scale are clipped (count in the summary and sigproc_clipped_values_total)")
		},
	}
	if s.Type == config.SinkSigMF {
		// The chain's output rate; a shift moves the centre frequency by
		// −shift (the source's own centre is not known here, so it is
		// relative to the input's baseband).
		spec.Meta = sink.SigMFMeta{
			Datatype:    format,
			SampleRate:  chain.OutRate(),
			InputRate:   chain.SampleRate,
			FrequencyHz: -chain.Shift(),
			Description: "sigproc " + version + ": " + describeSource(cfg) + " filtered with " + describeFilter(cfg, chain),
		}
	}
	p, err := sink.Prepare(spec)
	if err != nil {
		return nil, cfg.Wrap("sink.path", err)
	}
	return p.Deferred(), nil
}

// finishSink closes the sink after a run and makes the stats describe what
// reached it: samples dropped after the last one written are recorded in a
// SigMF recording, and "out" counts only samples that reached the file.
// It returns the sink's error, if any.
func finishSink(snk *sink.Deferred, st *pipeline.Stats) error {
	snk.EndInput(st.SamplesIn)
	err := snk.Close()
	if w, ok := snk.Written(); ok && w < st.SamplesWritten {
		st.SamplesWritten, st.SamplesOut = w, w
	}
	return err
}

// clipSummary is the summary's clipping field for int16 outputs.
func clipSummary(format string, snk *sink.Deferred) string {
	if format != config.FormatRI16 && format != config.FormatCI16 {
		return ""
	}
	return fmt.Sprintf("  clipped %d", snk.Clipped())
}

// newStdinSource reads raw samples from stdin; the process's own stdin is
// reopened so that a signal wakes a read waiting on a silent writer.
func newStdinSource(stdin io.Reader, format string, info capture.Info) (capture.Source, error) {
	if f, ok := stdin.(*os.File); ok {
		return capture.NewStdin(f, format, info)
	}
	return capture.NewRaw(stdin, format, info)
}
