package main

import (
	"context"
	"fmt"
	"io"

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
func planSink(ctx context.Context, cfg *config.Config, format string, chain stage.Chain, inputs []string, log zerolog.Logger, ss sinkSource) (*sink.Deferred, error) {
	s := &cfg.Sink
	if s.Type == config.SinkZMQ {
		// Bound once the run has started, like a file is created then.
		p, err := sink.Prepare(sink.Spec{Type: s.Type, Open: func() (sink.Sink, error) {
			return createZMQSink(ctx, cfg, format, chain.OutRate(), chain.ChannelCount())
		}})
		if err != nil {
			return nil, err
		}
		return p.Deferred(), nil
	}
	spec := sink.Spec{
		Type: s.Type, Path: s.Path, Format: format, Overwrite: s.Overwrite, Inputs: inputs,
		Channels: chain.ChannelCount(), Complex: chain.OutComplex(), SampleRate: chain.OutRate(),
		Stdout:     ss.stdout,
		StampStart: ss.live(cfg), MakeDirs: true,
		// Warned once, as soon as it starts; the total is in the summary
		// and the metrics.
		OnClip: func(total uint64) {
			log.Warn().Uint64("clipped", total).Str("format", format).
				Msg("output clipping: values beyond the integer format's full scale are clipped (count in the summary and sigproc_clipped_values_total)")
		},
	}
	if s.Type == config.SinkSigMF {
		// What the source knows, carried through the chain: rate,
		// centre frequency (moved by −shift), time, annotations.
		spec.Meta = sink.SigMFMeta{
			Datatype:    format,
			Description: "sigproc " + version + ": " + describeSource(cfg) + " filtered with " + describeFilter(cfg, chain),
		}
		var m *capture.Meta
		if ms, ok := ss.src.(capture.MetaSource); ok {
			m = ms.SignalMeta()
		}
		spec.Meta.Carry(m, chain)
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

// sinkSource is what the sink's plan needs of the run beyond the config:
// the source (its metadata) and the standard output ("-").
type sinkSource struct {
	src    capture.Source
	stdout io.Writer
}

// live reports whether the source is live (its first sample's time is the
// run's): a SigMF output's core:datetime is stamped when it is created,
// then set to the first sample's capture time.
func (sinkSource) live(cfg *config.Config) bool {
	switch cfg.Source.Type {
	case config.SourceFile, config.SourceStdin:
		return false
	case config.SourceSynthetic:
		return cfg.Source.Paced
	}
	return true
}

// clipSummary is the summary's clipping field for integer outputs.
func clipSummary(format string, snk *sink.Deferred) string {
	switch format {
	case config.FormatRI16, config.FormatCI16, config.FormatCS8, config.WAVPCM16, config.WAVPCM24:
	default:
		return ""
	}
	return fmt.Sprintf("  clipped %d", snk.Clipped())
}
