package assemble

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/sigproc/sigproc/capture"
	"github.com/sigproc/sigproc/config"
)

// Source opens the configured source; stdin is what a stdin source reads
// (the process's own standard input is reopened so that a signal wakes a
// read waiting on a silent writer).
func Source(ctx context.Context, cfg *config.Config, stdin io.Reader) (capture.Source, error) {
	s := &cfg.Source
	switch s.Type {
	case config.SourceSynthetic:
		sc := Synthetic(s.Waveform)
		sc.SampleRate = s.SampleRate
		sc.Complex = s.Complex
		sc.Paced = s.Paced
		n, err := cfg.MaxSamples(s.SampleRate)
		if err != nil {
			return nil, err
		}
		sc.NumSamples = n
		src, err := capture.NewSynthetic(sc)
		if err != nil {
			return nil, cfg.Wrap("source", err)
		}
		return src, nil
	case config.SourceFile:
		src, err := capture.Open(ctx, s.Path, capture.FileOptions{Format: s.Format, SampleRate: s.SampleRate, Channels: s.Channels.Count, Complex: s.Complex})
		if err != nil {
			return nil, cfg.Wrap("source.path", err)
		}
		return src, nil
	case config.SourceStdin:
		src, err := capture.OpenStdin(ctx, stdin, capture.FileOptions{Format: s.Format, SampleRate: s.SampleRate, Channels: s.Channels.Count, Complex: s.Complex})
		if err != nil {
			return nil, cfg.Wrap("source", err)
		}
		return src, nil
	case config.SourceIIO:
		src, err := capture.OpenIIO(capture.IIOConfig{
			SysfsRoot:    s.SysfsRoot,
			DevRoot:      s.DevRoot,
			Device:       s.Device,
			Channels:     s.Channels.Names,
			Complex:      s.Complex,
			ApplyScale:   s.ApplyScale,
			SampleRate:   s.SampleRate,
			BufferLength: s.BufferLength,
		})
		if err != nil {
			return nil, cfg.Wrap("source.device", err)
		}
		return src, nil
	case config.SourceALSA:
		src, err := capture.OpenALSA(capture.ALSAConfig{
			Device:     s.Device,
			Format:     s.Format,
			Channels:   max(s.Channels.Count, s.ChannelCount),
			Complex:    s.Complex,
			SampleRate: int(s.SampleRate), // validated as a whole number
			PeriodSize: s.PeriodSize,
			BufferSize: s.BufferSize,
		})
		if err != nil {
			return nil, cfg.Wrap("source.device", err)
		}
		return src, nil
	case config.SourceZMQ:
		src, err := capture.OpenZMQ(capture.ZMQConfig{
			Endpoint:   s.Endpoint,
			Pattern:    s.Pattern,
			Format:     s.Format,
			SampleRate: s.SampleRate,
			PassTags:   s.PassTags,
			Channels:   s.Channels.Count,
		})
		if err != nil {
			return nil, cfg.Wrap("source", err)
		}
		return src, nil
	}
	return nil, cfg.Wrap("source.type", fmt.Errorf("unknown source type %q", s.Type))
}

// Synthetic converts a config waveform (recursively) to capture's form.
// Components inherit the sample rate and complexness from the top level.
func Synthetic(w config.Waveform) capture.SyntheticConfig {
	sc := capture.SyntheticConfig{
		Signal:       w.Signal,
		FrequencyHz:  w.FrequencyHz,
		Amplitude:    w.Amplitude,
		PhaseRad:     w.PhaseRad,
		ChirpEndHz:   w.ChirpEndHz,
		ChirpPeriodS: w.ChirpPeriodS,
		NoiseStdDev:  w.NoiseStd,
		Seed:         w.Seed,
		ImpulseEvery: w.ImpulseEvery,
	}
	for _, t := range w.Tones {
		sc.Tones = append(sc.Tones, capture.Tone{FrequencyHz: t.FrequencyHz, Amplitude: t.Amplitude, PhaseRad: t.PhaseRad})
	}
	for _, c := range w.Components {
		sc.Components = append(sc.Components, Synthetic(c))
	}
	return sc
}

// DescribeSource names the configured source for the log and the SigMF
// description.
func DescribeSource(cfg *config.Config) string {
	s := &cfg.Source
	switch s.Type {
	case config.SourceSynthetic:
		d := "synthetic " + s.Signal
		if s.Paced {
			d += " (paced)"
		}
		return d
	case config.SourceFile:
		return "file " + s.Path
	case config.SourceIIO:
		return "iio " + s.Device + " " + strings.Join(s.Channels.Names, ",")
	case config.SourceALSA:
		return fmt.Sprintf("alsa %s %s x%d", s.Device, s.Format, max(s.Channels.Count, s.ChannelCount))
	case config.SourceZMQ:
		return "zmq " + s.Pattern + " " + s.Endpoint + " " + s.Format
	}
	return s.Type + " " + s.Format
}

// live reports whether the source is live (its first sample's time is the
// run's): a SigMF output's core:datetime is stamped when it is created,
// then set to the first sample's capture time.
func live(cfg *config.Config) bool {
	switch cfg.Source.Type {
	case config.SourceFile, config.SourceStdin:
		return false
	case config.SourceSynthetic:
		return cfg.Source.Paced
	}
	return true
}
