package assemble

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"github.com/rs/zerolog"

	"github.com/sigproc/sigproc/capture"
	"github.com/sigproc/sigproc/config"
	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/sink"
	"github.com/sigproc/sigproc/stage"
)

// Inputs lists the files a run reads, so that the sink can refuse to
// write over any of them: those of the config (ConfigInputs) and the
// source's own (a SigMF recording's metadata and dataset).
func Inputs(cfg *config.Config, configPath string, src capture.Source) []string {
	in := ConfigInputs(cfg, configPath)
	if f, ok := src.(interface{ Files() []string }); ok {
		in = append(in, f.Files()...)
	}
	return in
}

// ConfigInputs lists the files a config makes a command read: the config
// itself (which control.watch_config and SIGHUP read again), the source's
// path, every taps_file (filter: and each stage with taps), the
// PTX files of cuda.ptx_dir, and whatever stdin is redirected from for a
// stdin source. Every command that writes a file checks its outputs
// against them (sink.CheckNotInput).
func ConfigInputs(cfg *config.Config, configPath string) []string {
	in := []string{configPath}
	if p := cfg.Source.Path; p != "" {
		in = append(in, p)
	}
	add := func(f *config.Filter) {
		if f != nil && f.TapsFile != "" {
			in = append(in, f.TapsFile)
		}
	}
	add(&cfg.Filter)
	for i := range cfg.Stages {
		add(cfg.Stages[i].Filter())
	}
	in = append(in, PTXInputs(cfg.CUDA.PTXDir)...)
	if cfg.Source.Type == config.SourceStdin {
		in = append(in, "/dev/stdin")
	}
	return in
}

// PTXInputs lists the kernel files the CUDA backend loads from a PTX
// directory (cuda.ptx_dir, bench stream --ptx-dir); none for "".
func PTXInputs(dir string) []string {
	if dir == "" {
		return nil
	}
	var in []string
	for _, name := range []string{"fir.ptx", "batch.ptx", "chain.ptx", "ols.ptx"} {
		in = append(in, filepath.Join(dir, name))
	}
	return in
}

// sinkPlan is what planSink needs beyond the config.
type sinkPlan struct {
	format  string
	chain   stage.Chain
	inputs  []string
	src     capture.Source // its metadata goes into a SigMF output
	stdout  io.Writer      // sink path "-"
	version string
	log     zerolog.Logger
}

// planSink checks the configured output without creating it: its path,
// that it is none of the inputs, and that it does not exist unless
// sink.overwrite (--overwrite) allows it. The files are created by the
// returned sink's Open, once everything else has started.
func planSink(ctx context.Context, cfg *config.Config, p sinkPlan) (*sink.Deferred, error) {
	s := &cfg.Sink
	if s.Type == config.SinkZMQ {
		// Bound once the run has started, like a file is created then.
		pl, err := sink.Prepare(sink.Spec{Type: s.Type, Open: func() (sink.Sink, error) {
			return zmqSink(ctx, cfg, p.format, p.chain.OutRate(), p.chain.OutChannels())
		}})
		if err != nil {
			return nil, err
		}
		return pl.Deferred(), nil
	}
	format, log := p.format, p.log
	spec := sink.Spec{
		Type: s.Type, Path: s.Path, Format: format, Overwrite: s.Overwrite, Inputs: p.inputs,
		Channels: p.chain.OutChannels(), Complex: p.chain.OutComplex(), SampleRate: p.chain.OutRate(),
		Stdout:     p.stdout,
		StampStart: live(cfg), MakeDirs: true,
		// Warned once, as soon as it starts; the total is in the summary
		// and the metrics.
		OnClip: func(total uint64) {
			log.Warn().Uint64("clipped", total).Str("format", format).
				Msg("output clipping: values beyond the integer format's full scale are clipped (count in the summary and sigproc_clipped_values_total)")
		},
		OnWaitReader: func(path string) {
			log.Info().Str("path", path).Msg("the output is a FIFO with no reader yet: waiting for one (Ctrl-C stops)")
		},
	}
	if ts, ok := p.src.(capture.Timestamped); ok && spec.StampStart {
		spec.FirstSample = ts.FirstSampleTime
	}
	if s.Type == config.SinkSigMF {
		// What the source knows, carried through the chain: rate,
		// centre frequency (moved by −shift), time, annotations.
		spec.Meta = sink.SigMFMeta{
			Datatype:    format,
			Description: "sigproc " + p.version + ": " + DescribeSource(cfg) + " filtered with " + DescribeFilter(cfg, p.chain),
		}
		var m *capture.Meta
		if ms, ok := p.src.(capture.MetaSource); ok {
			m = ms.SignalMeta()
		}
		spec.Meta.Carry(m, p.chain)
	}
	if s.Split {
		frame, err := p.chain.OutFrame()
		if err != nil {
			return nil, err
		}
		spec.Split = true
		spec.Labels, spec.Centres = splitLabels(frame, p.chain.Shift())
	}
	pl, err := sink.Prepare(spec)
	if err != nil {
		return nil, cfg.Wrap("sink.path", err)
	}
	return pl.Deferred(), nil
}

// splitLabels names each channel of a split output chK, K its ID padded
// to the widest's digits, and gives the Hz each recording's frequencies
// move by from the whole output's (whose centre is the chain's input
// centre less shift).
func splitLabels(frame []stage.Channel, shift float64) (labels []string, centres []float64) {
	width := 1
	for _, c := range frame {
		width = max(width, len(strconv.Itoa(c.ID)))
	}
	for _, c := range frame {
		labels = append(labels, fmt.Sprintf("ch%0*d", width, c.ID))
		centres = append(centres, c.Centre+shift)
	}
	return labels, centres
}

// WAVFormat is a WAV output's format when sink.format is not given: the
// input's PCM width when it was stored as integers (pcm16 up to 16 bits,
// pcm24 beyond), so that the output opens where the input did (Python's
// wave module, for one, cannot open float WAV); float32 for float input.
func WAVFormat(src capture.Source) string {
	bits := 0
	if p, ok := src.(capture.PCMSource); ok {
		bits = p.PCMBits()
	}
	switch {
	case bits == 0:
		return config.WAVFloat32
	case bits <= 16:
		return config.WAVPCM16
	}
	return config.WAVPCM24
}

// zmqSink binds a zmq sink for a stream of channels channels. ctx is the
// run's: once it is done, a push sink waits at most its linger for a
// consumer.
func zmqSink(ctx context.Context, cfg *config.Config, format string, rate float64, channels int) (sink.Sink, error) {
	s := &cfg.Sink
	snk, err := sink.ListenZMQ(ctx, sink.ZMQConfig{
		Endpoint:   s.Endpoint,
		Pattern:    s.Pattern,
		Format:     format,
		PassTags:   s.PassTags,
		SampleRate: rate,
		Channels:   channels,
	})
	if err != nil {
		return nil, cfg.Wrap("sink.endpoint", err)
	}
	return snk, nil
}

// FinishSink closes the sink after a run and makes the stats describe what
// reached it: samples dropped after the last one written are recorded in a
// SigMF recording, and "out" counts the samples in the file: fewer than
// the sink accepted when the last buffer could not be written, more when
// a write failed part way (the pipeline counts none of that block).
// It returns the sink's error, if any.
func FinishSink(snk *sink.Deferred, st *pipeline.Stats) error {
	snk.EndInput(st.SamplesIn + st.SourceLost) // the input indices count the source's losses
	err := snk.Close()
	if w, ok := snk.Written(); ok && w != st.SamplesWritten {
		st.SamplesWritten, st.SamplesOut = w, w
	}
	return err
}

// DescribeSink names the configured sink and its format for the log.
func DescribeSink(cfg *config.Config, format string) string {
	switch cfg.Sink.Type {
	case config.SinkNull:
		return "null"
	case config.SinkZMQ:
		return "zmq " + cfg.Sink.Pattern + " " + cfg.Sink.Endpoint + " (" + format + ")"
	}
	if cfg.Sink.Path == config.StdoutPath {
		return cfg.Sink.Type + " stdout (" + format + ")"
	}
	return cfg.Sink.Type + " " + cfg.Sink.Path + " (" + format + ")"
}

// DescribeFilter names the filter (or the stage chain) for a SigMF
// output's description.
func DescribeFilter(cfg *config.Config, chain stage.Chain) string {
	if len(cfg.Stages) > 0 {
		return chain.String()
	}
	f := &cfg.Filter
	switch {
	case f.Design != nil:
		d := f.Design
		edges := strconv.FormatFloat(d.CutoffHz, 'g', -1, 64) + " Hz"
		if d.Type == filter.Bandpass || d.Type == filter.Bandstop {
			edges = strconv.FormatFloat(d.LowHz, 'g', -1, 64) + "-" + strconv.FormatFloat(d.HighHz, 'g', -1, 64) + " Hz"
		}
		return fmt.Sprintf("%d-tap %s %s (%s window)", d.NumTaps, d.Type, edges, d.Window)
	case f.TapsFile != "":
		return "taps from " + filepath.Base(f.TapsFile)
	}
	return fmt.Sprintf("%d inline taps", len(f.Taps))
}
