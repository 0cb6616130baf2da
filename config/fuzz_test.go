package config

import (
	"strings"
	"testing"
)

// FuzzParse checks that Parse never panics and that every error it returns
// is positioned at the file name.
func FuzzParse(f *testing.F) {
	f.Add([]byte(base))
	f.Add([]byte(base + "---\n" + base))
	f.Add([]byte("source: {type: file, path: a.sigmf-meta}\nfilter: {design: {type: bandstop, low_hz: 1, high_hz: 2, num_taps: 9, window: kaiser, kaiser_beta: 3}}\nsink: {type: sigmf, path: o}\n"))
	f.Add([]byte("source: {type: stdin, format: ri16_le, sample_rate: 1e6, duration_s: 1e300}\nfilter: {taps: [1e39]}\nsink: null\nblock_size: 1.5\n"))
	f.Add([]byte("source: &s {type: synthetic, signal: sum, components: [{signal: noise, noise_std: 1}]}\nx: *s\n"))
	f.Add([]byte("a: &a [*a, *a]\n"))
	f.Add([]byte("\t- :"))
	f.Add([]byte(stagesBase))
	f.Add([]byte("source: {type: synthetic, sample_rate: 1e6, signal: tone}\nstages:\n  - {}\n  - shift: {frequency_hz: 6e5}\n  - {fir: {taps: [1]}, resample: {up: 0, down: 2, design: {type: lowpass, cutoff_hz: 1, transition_hz: 1, attenuation_db: 7}}}\nsink: {type: null}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, "f.yaml")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.yaml") {
				t.Fatalf("error without file name: %q", err)
			}
			return
		}
		// A config that parsed must stay valid and usable.
		if err := c.Validate(); err != nil {
			t.Fatalf("Parse accepted a config Validate rejects: %v", err)
		}
		if c.BlockSize <= 0 || c.RingSlots == 1 || c.RingSlots < 0 || c.Sink.Type == "" || c.Source.Type == "" {
			t.Fatalf("accepted config with bad core fields: %+v", c)
		}
		_, _ = c.MaxSamples(c.Source.SampleRate)
		if r := c.Source.SampleRate; r > 0 && len(c.Stages) > 0 && c.Source.Type == SourceSynthetic {
			// Stages that validated build a chain, or fail with a position.
			if _, err := c.Chain(r, c.Source.Complex); err != nil && !strings.HasPrefix(err.Error(), "f.yaml") {
				t.Fatalf("Chain error without file name: %q", err)
			}
		}
	})
}
