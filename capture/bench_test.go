package capture_test

import (
	"context"
	"testing"

	"github.com/sigproc/sigproc/capture"
)

const benchBlock = 8192 // samples per Read

func benchSource(b *testing.B, src capture.Source) {
	buf := make([]float32, benchBlock*src.Info().Channels())
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(int64(4 * len(buf)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := src.Read(ctx, buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*benchBlock/b.Elapsed().Seconds()/1e6, "MS/s")
}

func BenchmarkRawDecodeInt16(b *testing.B) {
	for _, format := range []string{"ri16_le", "ci16_le"} {
		b.Run(format, func(b *testing.B) {
			complexFmt := format[0] == 'c'
			src, err := capture.NewRaw(&repeatReader{data: le16(make([]int16, 1<<16)...)}, format, capture.Info{SampleRate: 1, Complex: complexFmt})
			if err != nil {
				b.Fatal(err)
			}
			benchSource(b, src)
		})
	}
}

func BenchmarkRawDecodeFloat32(b *testing.B) {
	src, err := capture.NewRaw(&repeatReader{data: le32f(make([]float32, 1<<15)...)}, "cf32_le", capture.Info{SampleRate: 1, Complex: true})
	if err != nil {
		b.Fatal(err)
	}
	benchSource(b, src)
}

func BenchmarkSynthetic(b *testing.B) {
	cfgs := []struct {
		name string
		cfg  capture.SyntheticConfig
	}{
		{"tone_real", capture.SyntheticConfig{Signal: "tone", FrequencyHz: 1234, Amplitude: 1}},
		{"tone_complex", capture.SyntheticConfig{Signal: "tone", FrequencyHz: 1234, Amplitude: 1, Complex: true}},
		{"chirp_complex", capture.SyntheticConfig{Signal: "chirp", FrequencyHz: -20000, ChirpEndHz: 20000, ChirpPeriodS: 0.1, Amplitude: 1, Complex: true}},
		{"noise_complex", capture.SyntheticConfig{Signal: "noise", NoiseStdDev: 1, Complex: true}},
	}
	for _, c := range cfgs {
		b.Run(c.name, func(b *testing.B) {
			c.cfg.SampleRate = 48000
			src, err := capture.NewSynthetic(c.cfg)
			if err != nil {
				b.Fatal(err)
			}
			benchSource(b, src)
		})
	}
}
