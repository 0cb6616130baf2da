package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sigproc/sigproc/filter"
)

// base is a minimal valid config; bad cases edit it.
const base = `source:
  type: synthetic
  sample_rate: 1e6
  signal: tone
  frequency_hz: 1000
filter:
  taps: [0.5, 0.5]
sink:
  type: null
`

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		line int    // expected line in "x.yaml:LINE:"
		frag string // expected message fragment
	}{
		{"unknown top key", base + "blok_size: 4\n", 10, "blok_size: unknown key, did you mean block_size? (allowed here: source, block_size"},
		{"unknown nested key", strings.Replace(base, "  frequency_hz: 1000\n", "  frequency_hz: 1000\n  freq: 3\n", 1), 6, "source.freq: unknown key (allowed here"},
		{"wrong type", strings.Replace(base, "sample_rate: 1e6", "sample_rate: fast", 1), 3, "source.sample_rate: wrong type: string `fast` where a number is expected"},
		{"wrong type bool", strings.Replace(base, "  frequency_hz: 1000\n", "  frequency_hz: 1000\n  complex: maybe\n", 1), 6, "source.complex: wrong type"},
		{"non-integral int", base + "block_size: 1.5\n", 10, "block_size: must be an integer, got 1.5"},
		{"int overflow", base + "block_size: 99999999999999999999\n", 10, "block_size: out of range: `9999999...` is too large for an integer"},
		{"negative sample rate", strings.Replace(base, "sample_rate: 1e6", "sample_rate: -5", 1), 3, "source.sample_rate: must be > 0, got -5"},
		{"zero sample rate", strings.Replace(base, "sample_rate: 1e6", "sample_rate: 0", 1), 3, "source.sample_rate: must be > 0, got 0"},
		{"missing sample rate", strings.Replace(base, "  sample_rate: 1e6\n", "", 1), 1, "source.sample_rate: required for synthetic"},
		{"block size zero", base + "block_size: 0\n", 10, "block_size: must not be zero or empty (omit the key to get the default)"},
		{"empty backend", base + "backend: \"\"\n", 10, "backend: must not be zero or empty"},
		{"block size negative", base + "block_size: -1\n", 10, "block_size: must be in 1..16777216, got -1"},
		{"block size huge", base + "block_size: 16777217\n", 10, "must be in 1..16777216"},
		{"ring too big default live slots", strings.Replace(base, "  type: synthetic\n", "  type: synthetic\n  complex: true\n  paced: true\n", 1) + "block_size: 16777216\n", 12, "block_size: ring needs block_size*ring_slots*8"},
		{"empty sink type", strings.Replace(base, "type: null", "type: ~", 1), 9, "sink.type: required"},
		{"ring too big", base + "block_size: 16777216\nring_slots: 1024\n", 11, "ring_slots: ring needs"},
		{"ring slots one", base + "ring_slots: 1\n", 10, "ring_slots: must be a power of two in 2..65536, got 1"},
		{"ring slots not pow2", base + "ring_slots: 48\n", 10, "ring_slots: must be a power of two in 2..65536, got 48"},
		{"empty taps", strings.Replace(base, "[0.5, 0.5]", "[]", 1), 7, "filter.taps: must not be empty"},
		{"null taps", strings.Replace(base, "[0.5, 0.5]", "", 1), 7, "filter.taps: must not be empty"},
		{"infinite tap", strings.Replace(base, "[0.5, 0.5]", "[0.5, 1e300]", 1), 7, "filter.taps[1]: must be a finite float32"},
		{"taps and design", strings.Replace(base, "  taps: [0.5, 0.5]\n", "  taps: [1]\n  design: {type: lowpass, cutoff_hz: 1e4, num_taps: 11}\n", 1), 8, "filter.design: give only one of taps, taps_file, design (found taps and design)"},
		{"taps and taps_file", strings.Replace(base, "  taps: [0.5, 0.5]\n", "  taps: [1]\n  taps_file: t.txt\n", 1), 8, "found taps and taps_file"},
		{"unknown method", strings.Replace(base, "  taps: [0.5, 0.5]\n", "  taps: [0.5, 0.5]\n  method: fast\n", 1), 8, `filter.method: unknown value "fast" (allowed: auto, direct, fft)`},
		{"empty method", strings.Replace(base, "  taps: [0.5, 0.5]\n", "  taps: [0.5, 0.5]\n  method: \"\"\n", 1), 8, "filter.method: must not be zero or empty"},
		{"method wrong type", strings.Replace(base, "  taps: [0.5, 0.5]\n", "  method: [fft]\n  taps: [0.5, 0.5]\n", 1), 7, "filter.method: wrong type"},
		{"no filter", strings.Replace(base, "filter:\n  taps: [0.5, 0.5]\n", "", 1), 0, "filter: required: one of taps, taps_file or design"},
		{"unknown source type", strings.Replace(base, "type: synthetic", "type: sdr", 1), 2, `source.type: unknown value "sdr" (allowed: synthetic, file, stdin, iio, alsa, zmq)`},
		{"unknown signal", strings.Replace(base, "signal: tone", "signal: square", 1), 4, `source.signal: unknown value "square" (allowed: tone, multitone, chirp, noise, impulse, sum)`},
		{"tone without frequency", strings.Replace(base, "  frequency_hz: 1000\n", "", 1), 1, "source.frequency_hz: required for a tone (write 0 for DC)"},
		{"tone with a null frequency", strings.Replace(base, "  frequency_hz: 1000\n", "  frequency_hz:\n", 1), 5, "source.frequency_hz: required for a tone"},
		{"chirp without end", strings.Replace(base, "  signal: tone\n", "  signal: chirp\n  chirp_period_s: 1\n", 1), 1, "source.chirp_end_hz: required for a chirp"},
		{"multitone tone without frequency", strings.Replace(base, "  signal: tone\n  frequency_hz: 1000\n", "  signal: multitone\n  tones: [{frequency_hz: 5}, {amplitude: 0.5}]\n", 1), 5, "source.tones[1].frequency_hz: required for each tone"},
		{"unknown backend", base + "backend: gpu\n", 10, `backend: unknown value "gpu" (allowed: cpu, cuda, auto)`},
		{"unknown overrun", base + "overrun: wait\n", 10, `overrun: unknown value "wait" (allowed: block, drop)`},
		{"unknown sink type", strings.Replace(base, "type: null", "type: udp", 1), 9, `sink.type: unknown value "udp" (allowed: file, sigmf, wav, null, zmq)`},
		{"unknown log level", base + "log: {level: loud}\n", 10, `log.level: unknown value "loud" (allowed: trace, debug, info, warn, error)`},
		{"unknown transport", base + "cuda:\n  transport: dma\n", 11, `cuda.transport: unknown value "dma" (allowed: auto, zero-copy, explicit, explicit-pageable)`},
		{"unknown window", strings.Replace(base, "  taps: [0.5, 0.5]\n", "  design: {type: lowpass, cutoff_hz: 1e4, num_taps: 11, window: tukey}\n", 1), 7, `filter.design.window: unknown value "tukey" (allowed: hamming, hann, blackman, kaiser, rectangular)`},
		{"unknown design type", strings.Replace(base, "  taps: [0.5, 0.5]\n", "  design: {type: notch, cutoff_hz: 1e4, num_taps: 11}\n", 1), 7, `filter.design.type: unknown value "notch" (allowed: lowpass, highpass, bandpass, bandstop)`},
		{"cutoff above nyquist", strings.Replace(base, "  taps: [0.5, 0.5]\n", "  design:\n    type: lowpass\n    cutoff_hz: 6e5\n    num_taps: 11\n", 1), 9, "filter.design.cutoff_hz: 600000 must be below Nyquist (sample_rate/2 = 500000)"},
		{"even highpass", strings.Replace(base, "  taps: [0.5, 0.5]\n", "  design:\n    type: highpass\n    cutoff_hz: 1e4\n    num_taps: 10\n", 1), 7, "filter.design: highpass needs an odd number of taps"},
		{"low pass with band edges", strings.Replace(base, "  taps: [0.5, 0.5]\n", "  design:\n    type: lowpass\n    cutoff_hz: 1e4\n    low_hz: 5\n    num_taps: 11\n", 1), 10, "filter.design.low_hz: not used by lowpass (keys used: type, cutoff_hz, num_taps, window)"},
		{"beta without kaiser", strings.Replace(base, "  taps: [0.5, 0.5]\n", "  design:\n    type: lowpass\n    cutoff_hz: 1e4\n    num_taps: 11\n    kaiser_beta: 5\n", 1), 11, "filter.design.kaiser_beta: not used by the default window hamming"},
		{"missing num_taps", strings.Replace(base, "  taps: [0.5, 0.5]\n", "  design:\n    type: lowpass\n    cutoff_hz: 1e4\n", 1), 7, "filter.design.num_taps: must be > 0, got 0"},
		{"tone above nyquist", strings.Replace(base, "frequency_hz: 1000", "frequency_hz: 6e5", 1), 5, "source.frequency_hz: 600000 is above Nyquist (sample_rate/2 = 500000)"},
		{"negative tone real", strings.Replace(base, "frequency_hz: 1000", "frequency_hz: -1000", 1), 5, "negative frequencies need complex: true"},
		{"key unused by signal", strings.Replace(base, "  frequency_hz: 1000\n", "  frequency_hz: 1000\n  noise_std: 0.1\n", 1), 6, "source.noise_std: not used by signal tone (keys used: type, sample_rate, complex, paced, duration_s, num_samples, signal, frequency_hz, amplitude, phase_rad)"},
		{"key unused by source type", "source:\n  type: file\n  path: x.wav\n  signal: tone\nfilter: {taps: [1]}\nsink: {type: null}\n", 4, "source.signal: not used by source type file"},
		{"empty multitone", strings.Replace(base, "  signal: tone\n  frequency_hz: 1000\n", "  signal: multitone\n  tones: []\n", 1), 5, "source.tones: multitone needs at least one tone"},
		{"bad tone in list", strings.Replace(base, "  signal: tone\n  frequency_hz: 1000\n", "  signal: multitone\n  tones:\n    - {frequency_hz: 100}\n    - {frequency_hz: 9e9}\n", 1), 7, "source.tones[1].frequency_hz: 9000000000 is above Nyquist"},
		{"empty sum", strings.Replace(base, "  signal: tone\n  frequency_hz: 1000\n", "  signal: sum\n", 1), 1, "source.components: sum needs at least one component"},
		{"amplitude past float32", strings.Replace(base, "  frequency_hz: 1000\n", "  frequency_hz: 1000\n  amplitude: 1e300\n", 1), 6, "source.amplitude: must be within ±1e+30 (samples are float32), got 1e+300"},
		{"noise past float32", strings.Replace(base, "  signal: tone\n  frequency_hz: 1000\n", "  signal: noise\n  noise_std: 1e39\n", 1), 5, "source.noise_std: must be within ±1e+30 (samples are float32), got 1e+39"},
		{"bad component", strings.Replace(base, "  signal: tone\n  frequency_hz: 1000\n", "  signal: sum\n  components:\n    - signal: tone\n      frequency_hz: 10\n    - signal: noise\n      noise_std: -1\n", 1), 9, "source.components[1].noise_std: must be > 0, got -1"},
		{"component unused key", strings.Replace(base, "  signal: tone\n  frequency_hz: 1000\n", "  signal: sum\n  components:\n    - signal: noise\n      noise_std: 1\n      frequency_hz: 3\n", 1), 8, "source.components[0].frequency_hz: not used by signal noise"},
		{"component unknown key", strings.Replace(base, "  signal: tone\n  frequency_hz: 1000\n", "  signal: sum\n  components:\n    - signal: noise\n      paced: true\n", 1), 7, "source.components[0].paced: unknown key"},
		{"chirp period", strings.Replace(base, "  signal: tone\n  frequency_hz: 1000\n", "  signal: chirp\n  chirp_end_hz: 1e5\n", 1), 1, "source.chirp_period_s: must be > 0, got 0"},
		{"impulse every", strings.Replace(base, "  signal: tone\n  frequency_hz: 1000\n", "  signal: impulse\n  impulse_every: -3\n", 1), 5, "source.impulse_every: must be >= 0 samples (0 = one impulse at sample 0), got -3"},
		{"both bounds", strings.Replace(base, "  frequency_hz: 1000\n", "  frequency_hz: 1000\n  duration_s: 1\n  num_samples: 5\n", 1), 7, "source.num_samples: set duration_s or num_samples, not both"},
		{"negative duration", strings.Replace(base, "  frequency_hz: 1000\n", "  frequency_hz: 1000\n  duration_s: -1\n", 1), 6, "source.duration_s: must be > 0, got -1"},
		{"huge duration", strings.Replace(base, "  frequency_hz: 1000\n", "  frequency_hz: 1000\n  duration_s: 1e300\n", 1), 6, "more samples than fit in int64"},
		{"zero num_samples", strings.Replace(base, "  frequency_hz: 1000\n", "  frequency_hz: 1000\n  num_samples: 0\n", 1), 6, "source.num_samples: must be > 0, got 0"},
		{"file without path", "source:\n  type: file\n  format: cf32_le\n  sample_rate: 1e6\nfilter: {taps: [1]}\nsink: {type: null}\n", 1, "source.path: required for file sources"},
		{"file unknown ext", "source:\n  type: file\n  path: in.bin\n  sample_rate: 1e6\nfilter: {taps: [1]}\nsink: {type: null}\n", 1, `source.format: required: cannot infer the format from "in.bin"`},
		{"file raw without rate", "source:\n  type: file\n  path: in.bin\n  format: ci16_le\nfilter: {taps: [1]}\nsink: {type: null}\n", 1, "source.sample_rate: required for raw format ci16_le"},
		{"file bad format", "source:\n  type: file\n  path: in.bin\n  format: mp3\nfilter: {taps: [1]}\nsink: {type: null}\n", 4, `source.format: unknown value "mp3" (allowed: rf32_le, ri16_le, cf32_le, ci16_le, cu8, cs8, wav, sigmf)`},
		{"file paced", "source:\n  type: file\n  path: in.wav\n  paced: true\nfilter: {taps: [1]}\nsink: {type: null}\n", 4, "source.paced: not used by source type file"},
		{"stdin no format", "source:\n  type: stdin\n  sample_rate: 1e6\nfilter: {taps: [1]}\nsink: {type: null}\n", 1, "source.format: required for stdin (one of rf32_le, ri16_le, cf32_le, ci16_le, cu8, cs8, wav)"},
		{"stdin sigmf", "source:\n  type: stdin\n  format: sigmf\n  sample_rate: 1e6\nfilter: {taps: [1]}\nsink: {type: null}\n", 3, `source.format: unknown value "sigmf" for stdin (allowed: rf32_le, ri16_le, cf32_le, ci16_le, cu8, cs8, wav; a sigmf recording is two files)`},
		{"stdin path", "source:\n  type: stdin\n  path: x\n  format: ri16_le\n  sample_rate: 1e6\nfilter: {taps: [1]}\nsink: {type: null}\n", 3, "source.path: not used by source type stdin"},
		{"no source", "filter: {taps: [1]}\nsink: {type: null}\n", 0, "source: required"},
		{"no source type", "source: {sample_rate: 1}\nfilter: {taps: [1]}\nsink: {type: null}\n", 1, "source.type: required (one of synthetic, file, stdin, iio, alsa, zmq)"},
		{"no sink", strings.Replace(base, "sink:\n  type: null\n", "", 1), 0, "sink: required"},
		{"sink file without path", strings.Replace(base, "type: null", "type: file", 1), 8, "sink.path: required for sink type file"},
		{"null sink with path", strings.Replace(base, "type: null", "type: null\n  path: x", 1), 10, "sink.path: not used by sink type null"},
		{"sink format mismatch", strings.Replace(base, "type: null", "type: file\n  path: o.cf32\n  format: cf32_le", 1), 11, "sink.format: cf32_le does not match the real source (use rf32_le)"},
		{"sink bad format", strings.Replace(base, "type: null", "type: file\n  path: o\n  format: wav", 1), 11, `sink.format: unknown value "wav" (allowed: rf32_le, cf32_le, ri16_le, ci16_le, cs8)`},
		{"metrics listen", base + "metrics: {listen: localhost}\n", 10, "metrics.listen: want host:port"},
		{"metrics port", base + "metrics: {listen: \"127.0.0.1:99999\"}\n", 10, "metrics.listen: port must be a number in 0..65535"},
		{"cuda device", base + "cuda: {device: -1}\n", 10, "cuda.device: must be >= 0, got -1"},
		{"cuda read share below 0", base + "cuda: {read_share: -0.1}\n", 10, "cuda.read_share: must be in 0..1, got -0.1"},
		{"cuda read share above 1", base + "cuda: {read_share: 1.5}\n", 10, "cuda.read_share: must be in 0..1, got 1.5"},
		{"cuda read share NaN", base + "cuda: {read_share: .nan}\n", 10, "cuda.read_share: must be in 0..1, got NaN"},
		{"two documents", base + "---\n" + base, 10, "multiple YAML documents"},
		{"syntax", "source:\n  type: [synthetic\n", 1, "did not find expected"},
		{"not a mapping", "- 1\n- 2\n", 1, "config must be a YAML mapping"},
		{"empty", "", 0, "empty config"},
		{"duplicate key", base + "block_size: 4\nblock_size: 8\n", 11, "already"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml), "x.yaml")
			if err == nil {
				t.Fatalf("Parse succeeded, want error containing %q", tt.frag)
			}
			msg := err.Error()
			prefix := "x.yaml: "
			if tt.line > 0 {
				prefix = "x.yaml:" + itoa(tt.line) + ": "
			}
			first, _, _ := strings.Cut(msg, "\n")
			if !strings.HasPrefix(first, prefix) {
				t.Errorf("error %q: want prefix %q", msg, prefix)
			}
			if !strings.Contains(msg, tt.frag) {
				t.Errorf("error %q: want fragment %q", msg, tt.frag)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Errorf("error %T is not a *config.Error", err)
			}
		})
	}
}

func itoa(n int) string {
	var b []byte
	for n > 0 || len(b) == 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

func TestParseGood(t *testing.T) {
	tests := []struct {
		name  string
		yaml  string
		check func(t *testing.T, c *Config)
	}{
		{"synthetic tone", base, func(t *testing.T, c *Config) {
			if c.Source.Amplitude != 1 {
				t.Errorf("amplitude default = %v, want 1", c.Source.Amplitude)
			}
			if c.EffectiveOverrun() != OverrunBlock {
				t.Errorf("overrun = %s, want block for unpaced", c.EffectiveOverrun())
			}
		}},
		{"synthetic sum paced complex", `source:
  type: synthetic
  sample_rate: 2e6
  complex: true
  paced: true
  duration_s: 0.5
  signal: sum
  components:
    - {signal: tone, frequency_hz: -1e5, amplitude: 0}
    - {signal: multitone, tones: [{frequency_hz: 1e3, phase_rad: 1}, {frequency_hz: 2e3, amplitude: 0.25}]}
    - {signal: chirp, frequency_hz: 0, chirp_end_hz: 9e5, chirp_period_s: 0.01}
    - {signal: noise, noise_std: 0.1, seed: 7}
    - {signal: impulse, impulse_every: 1024}
filter:
  design: {type: bandpass, low_hz: 1e4, high_hz: 2e5, num_taps: 64, window: kaiser}
sink: {type: sigmf, path: out/x}
`, func(t *testing.T, c *Config) {
			comps := c.Source.Components
			if len(comps) != 5 || comps[0].Amplitude != 0 || comps[2].Amplitude != 1 || comps[4].Amplitude != 1 {
				t.Errorf("components/amplitudes wrong: %+v", comps)
			}
			if tn := comps[1].Tones; tn[0].Amplitude != 1 || tn[1].Amplitude != 0.25 || tn[0].PhaseRad != 1 {
				t.Errorf("tones = %+v", tn)
			}
			if comps[3].Seed != 7 {
				t.Errorf("seed = %d", comps[3].Seed)
			}
			if c.EffectiveOverrun() != OverrunDrop {
				t.Errorf("overrun = %s, want drop for paced", c.EffectiveOverrun())
			}
			if n, err := c.MaxSamples(c.Source.SampleRate); err != nil || n != 1e6 {
				t.Errorf("MaxSamples = %d, %v; want 1000000", n, err)
			}
			if c.Filter.Design.KaiserBeta != filter.DefaultKaiserBeta {
				t.Errorf("kaiser beta = %v", c.Filter.Design.KaiserBeta)
			}
			if c.Sink.Path != "out/x" {
				t.Errorf("sink path %q must stay relative to the working directory", c.Sink.Path)
			}
			if got := c.Sink.FormatFor(true); got != FormatCF32 {
				t.Errorf("sink format = %s", got)
			}
		}},
		{"file sigmf inferred", `source:
  type: file
  path: rec/capture.sigmf-meta
filter:
  taps_file: taps.txt
sink: {type: file, path: /tmp/o.f32, format: ri16_le}
overrun: drop
`, func(t *testing.T, c *Config) {
			if c.Source.Path != filepath.Join("dir", "rec", "capture.sigmf-meta") {
				t.Errorf("source path = %q, want resolved against config dir", c.Source.Path)
			}
			if c.Filter.TapsFile != filepath.Join("dir", "taps.txt") {
				t.Errorf("taps file = %q", c.Filter.TapsFile)
			}
			if c.Source.EffectiveFormat() != FormatSigMF {
				t.Errorf("format = %q", c.Source.EffectiveFormat())
			}
			if c.EffectiveOverrun() != OverrunDrop {
				t.Errorf("explicit overrun lost")
			}
		}},
		{"file raw", `source: {type: file, path: /abs/in.cf32, format: cf32_le, sample_rate: 2.4e6, num_samples: 100}
filter: {taps: [1]}
sink: {type: null}
`, func(t *testing.T, c *Config) {
			if c.Source.Path != "/abs/in.cf32" {
				t.Errorf("absolute path changed: %q", c.Source.Path)
			}
			if n, _ := c.MaxSamples(2.4e6); n != 100 {
				t.Errorf("MaxSamples = %d", n)
			}
		}},
		{"file wav", `source: {type: file, path: a.WAV}
filter: {design: {type: lowpass, cutoff_hz: 3000, num_taps: 31}}
sink: {type: null}
`, func(t *testing.T, c *Config) {
			if c.Source.EffectiveFormat() != FormatWAV {
				t.Errorf("format = %q", c.Source.EffectiveFormat())
			}
			if _, err := c.Taps(8000); err != nil {
				t.Errorf("Taps(8000): %v", err)
			}
			// The rate is only known after opening the file; a bad one is
			// reported against the design's line.
			_, err := c.Taps(4000)
			if err == nil || !strings.HasPrefix(err.Error(), "dir/c.yaml:2: filter.design: ") {
				t.Errorf("Taps(4000) = %v, want positioned error", err)
			}
		}},
		{"stdin", `source: {type: stdin, format: ci16_le, sample_rate: 2.048e6}
filter: {taps: [0.25, 0.5, 0.25]}
sink: {type: file, path: "-"}
backend: auto
log: {level: debug, format: json}
metrics: {listen: ":9100"}
`, func(t *testing.T, c *Config) {
			if cplx, known := c.Source.complexKnown(); !cplx || !known {
				t.Errorf("ci16 stdin must be known complex")
			}
			taps, err := c.Taps(0)
			if err != nil || len(taps) != 3 {
				t.Errorf("Taps = %v, %v", taps, err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.yaml), filepath.Join("dir", "c.yaml"))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			tt.check(t, c)
		})
	}
}

func TestDefaults(t *testing.T) {
	c, err := Parse([]byte(strings.Replace(base, "  taps: [0.5, 0.5]\n", "  design: {type: lowpass, cutoff_hz: 1e4, num_taps: 11}\n", 1)), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"block_size", c.BlockSize, DefaultBlockSize},
		{"ring_slots", c.RingSlots, 0}, // sized by pipeline.DefaultSlots
		{"overrun", c.EffectiveOverrun(), OverrunBlock},
		{"backend", c.Backend, BackendCPU},
		{"window", c.Filter.Design.Window, filter.WindowHamming},
		{"method", c.Filter.Method, "auto"},
		{"method value", c.Filter.FilterMethod(), filter.MethodAuto},
		{"kaiser_beta", c.Filter.Design.KaiserBeta, 0.0},
		{"cuda.device", c.CUDA.Device, 0},
		{"cuda.transport", c.CUDA.Transport, TransportAuto},
		{"cuda.max_pinned_mb", c.CUDA.MaxPinnedMB, DefaultMaxPinnedMB},
		{"cuda.watchdog_ms", c.CUDA.WatchdogMS, DefaultWatchdogMS},
		{"log.level", c.Log.Level, "info"},
		{"log.format", c.Log.Format, LogConsole},
		{"sink format real", c.Sink.FormatFor(false), FormatRF32},
		{"amplitude", c.Source.Amplitude, 1.0},
		{"unbounded", mustMax(t, c), int64(0)},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.name, ch.got, ch.want)
		}
	}
	spec, err := c.FilterSpec(1e6)
	if err != nil || spec.SampleRate != 1e6 || spec.NumTaps != 11 || spec.Type != filter.Lowpass {
		t.Errorf("FilterSpec = %+v, %v", spec, err)
	}
}

func mustMax(t *testing.T, c *Config) int64 {
	n, err := c.MaxSamples(c.Source.SampleRate)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestOverride checks that errors about fields set from flags name the flag.
func TestOverride(t *testing.T) {
	c, err := Parse([]byte(base), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c.BlockSize = -4
	c.MarkOverride("block_size", "--block-size")
	err = c.Validate()
	if err == nil || err.Error() != "--block-size: block_size: must be in 1..16777216, got -4" {
		t.Errorf("Validate = %v", err)
	}
}

func TestValidateBuiltInGo(t *testing.T) {
	c := &Config{
		Source: Source{Type: SourceSynthetic, SampleRate: 48000, Waveform: Waveform{Signal: SignalNoise, NoiseStd: 0.1}},
		Filter: Filter{Taps: []float32{1}},
		Sink:   Sink{Type: SinkNull},
	}
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	c.Source.SampleRate = -1
	if err := c.Validate(); err == nil || err.Error() != "source.sample_rate: must be > 0, got -1" {
		t.Errorf("Validate = %v", err)
	}
}

func TestMultipleErrorsSorted(t *testing.T) {
	y := strings.Replace(base, "sample_rate: 1e6", "sample_rate: -1", 1) + "block_size: -2\n"
	_, err := Parse([]byte(y), "x.yaml")
	if err == nil {
		t.Fatal("want error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "x.yaml:3: ") || !strings.HasPrefix(lines[1], "x.yaml:10: ") {
		t.Errorf("errors not one per line in file order: %q", err.Error())
	}
}

func TestLoadMissing(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load = %v, want ErrNotExist", err)
	}
}

// TestShippedConfigs parses every file in configs/.
func TestShippedConfigs(t *testing.T) {
	n := 0
	err := filepath.WalkDir(filepath.Join("..", "configs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || (filepath.Ext(path) != ".yaml" && filepath.Ext(path) != ".yml") {
			return err
		}
		n++
		if _, err := Load(path); err != nil {
			t.Errorf("%v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no configs found in ../configs")
	}
}

func TestLoadTapsFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "t.txt"), []byte("0.25\n0.5\n0.25\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(cfgPath, []byte(strings.Replace(base, "taps: [0.5, 0.5]", "taps_file: t.txt", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	taps, err := c.Taps(1e6)
	if err != nil || len(taps) != 3 || taps[1] != 0.5 {
		t.Errorf("Taps = %v, %v", taps, err)
	}
	c.Filter.TapsFile = filepath.Join(dir, "missing.txt")
	_, err = c.Taps(1e6)
	if err == nil || !strings.HasPrefix(err.Error(), cfgPath+":7: filter.taps_file: ") || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Taps(missing) = %v", err)
	}
}

// TestFilterMethod checks that each method parses to the filter's value.
func TestFilterMethod(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want filter.Method
	}{
		{"auto", filter.MethodAuto},
		{"direct", filter.MethodDirect},
		{"fft", filter.MethodFFT},
	} {
		c, err := Parse([]byte(strings.Replace(base, "  taps: [0.5, 0.5]\n", "  taps: [0.5, 0.5]\n  method: "+tc.yaml+"\n", 1)), "x.yaml")
		if err != nil {
			t.Fatalf("method %s: %v", tc.yaml, err)
		}
		if got := c.Filter.FilterMethod(); got != tc.want {
			t.Errorf("method %s: FilterMethod() = %v, want %v", tc.yaml, got, tc.want)
		}
	}
}

// TestUnknownKey: a typo names the key it likely meant, and a key too far
// from every allowed one (or too short to tell) names none.
func TestUnknownKey(t *testing.T) {
	allowed := []string{"sample_rate", "complex", "path", "format"}
	for _, tc := range []struct{ key, want string }{
		{"sample_rte", "unknown key, did you mean sample_rate? (allowed here: sample_rate, complex, path, format)"},
		{"fromat", "unknown key, did you mean format? (allowed here:"},
		{"paths", "unknown key, did you mean path? (allowed here:"},
		{"p", "unknown key (allowed here:"},
		{"gain_db", "unknown key (allowed here:"},
	} {
		if got := unknownKey(tc.key, allowed); !strings.HasPrefix(got, tc.want) {
			t.Errorf("unknownKey(%q) = %q, want prefix %q", tc.key, got, tc.want)
		}
	}
	if got := unknownKey("x", nil); got != "unknown key" {
		t.Errorf("unknownKey with no allowed keys = %q", got)
	}
}
