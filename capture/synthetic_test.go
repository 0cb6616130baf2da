package capture_test

import (
	"context"
	"errors"
	"io"
	"math"
	"math/cmplx"
	"strings"
	"testing"
	"time"

	"github.com/mjibson/go-dsp/fft"

	"github.com/sigproc/sigproc/capture"
)

// readN reads n samples from src in blocks of block samples.
func readN(t testing.TB, src capture.Source, n, block int) []float32 {
	t.Helper()
	ch := src.Info().Channels()
	out := make([]float32, 0, n*ch)
	buf := make([]float32, block*ch)
	for len(out) < n*ch {
		want := min(len(buf), n*ch-len(out))
		k, err := src.Read(context.Background(), buf[:want])
		out = append(out, buf[:k]...)
		if err != nil {
			t.Fatalf("Read after %d values: %v", len(out), err)
		}
	}
	return out
}

func mustSynthetic(t testing.TB, cfg capture.SyntheticConfig) *capture.Synthetic {
	t.Helper()
	s, err := capture.NewSynthetic(cfg)
	if err != nil {
		t.Fatalf("NewSynthetic: %v", err)
	}
	return s
}

// toComplex turns interleaved (or real) values into complex128.
func toComplex(v []float32, complexStream bool) []complex128 {
	if !complexStream {
		c := make([]complex128, len(v))
		for i, x := range v {
			c[i] = complex(float64(x), 0)
		}
		return c
	}
	c := make([]complex128, len(v)/2)
	for i := range c {
		c[i] = complex(float64(v[2*i]), float64(v[2*i+1]))
	}
	return c
}

func peakBin(x []complex128) (int, float64) {
	X := fft.FFT(x)
	best, mag := 0, 0.0
	for i, v := range X {
		if m := cmplx.Abs(v); m > mag {
			best, mag = i, m
		}
	}
	return best, mag
}

func TestToneFrequency(t *testing.T) {
	const n = 1024
	const rate = 1024.0
	tests := []struct {
		name    string
		freq    float64
		complex bool
		bin     int // expected FFT peak (for real, the positive-frequency one)
	}{
		{"complex positive", 100, true, 100},
		{"complex negative", -100, true, n - 100},
		{"complex nyquist", 512, true, 512},
		{"real", 37, false, 37},
		{"complex dc", 0, true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := mustSynthetic(t, capture.SyntheticConfig{Signal: "tone", SampleRate: rate,
				Complex: tc.complex, FrequencyHz: tc.freq, Amplitude: 0.5})
			x := toComplex(readN(t, src, n, n), tc.complex)
			bin, mag := peakBin(x)
			if !tc.complex && bin > n/2 {
				bin = n - bin
			}
			if bin != tc.bin {
				t.Fatalf("peak at bin %d, want %d", bin, tc.bin)
			}
			want := 0.5 * n
			if !tc.complex && tc.freq != 0 {
				want /= 2 // cos splits its energy between ±f
			}
			if math.Abs(mag-want) > 1e-3*want {
				t.Errorf("peak magnitude %g, want %g", mag, want)
			}
		})
	}
}

// TestToneNoDrift compares a long run with the directly computed waveform.
func TestToneNoDrift(t *testing.T) {
	const rate, freq, phase = 48000.0, 1234.5678, 0.3
	src := mustSynthetic(t, capture.SyntheticConfig{Signal: "tone", SampleRate: rate,
		Complex: true, FrequencyHz: freq, Amplitude: 1, PhaseRad: phase})
	buf := make([]float32, 2*4096)
	var worst float64
	for blk := range 1 << 10 { // 4M samples, ~87 s of signal
		if _, err := src.Read(context.Background(), buf); err != nil {
			t.Fatal(err)
		}
		if blk%64 != 63 {
			continue
		}
		for i := 0; i < 4096; i += 97 {
			n := float64(blk*4096 + i)
			cyc := math.Mod(freq/rate*n, 1)
			s, c := math.Sincos(2*math.Pi*cyc + phase)
			worst = max(worst, math.Abs(float64(buf[2*i])-c), math.Abs(float64(buf[2*i+1])-s))
		}
	}
	if worst > 1e-6 {
		t.Fatalf("max deviation from exact tone %g, want < 1e-6", worst)
	}
}

func TestMultitone(t *testing.T) {
	const n = 2048
	src := mustSynthetic(t, capture.SyntheticConfig{Signal: "multitone", SampleRate: n, Complex: true,
		Tones: []capture.Tone{{FrequencyHz: 100, Amplitude: 1}, {FrequencyHz: -300, Amplitude: 0.25, PhaseRad: 1}}})
	X := fft.FFT(toComplex(readN(t, src, n, 333), true))
	for _, tc := range []struct {
		bin int
		mag float64
	}{{100, n}, {n - 300, 0.25 * n}, {500, 0}} {
		if got := cmplx.Abs(X[tc.bin]); math.Abs(got-tc.mag) > 1e-3*n {
			t.Errorf("bin %d magnitude %g, want %g", tc.bin, got, tc.mag)
		}
	}
}

// instFreq is the frequency between samples i and i+1 of a complex signal.
func instFreq(x []complex128, i int, rate float64) float64 {
	return cmplx.Phase(x[i+1]*cmplx.Conj(x[i])) * rate / (2 * math.Pi)
}

func TestChirpFrequency(t *testing.T) {
	const rate, f0, f1, period = 10000.0, 1000.0, 3000.0, 0.1 // 1000 samples per sweep
	src := mustSynthetic(t, capture.SyntheticConfig{Signal: "chirp", SampleRate: rate, Complex: true,
		FrequencyHz: f0, ChirpEndHz: f1, ChirpPeriodS: period, Amplitude: 1})
	x := toComplex(readN(t, src, 3000, 100), true)
	for _, tc := range []struct {
		name string
		i    int
		want float64
	}{
		{"start", 0, f0},
		{"middle", 500, (f0 + f1) / 2},
		{"end", 998, f1},
		{"wrap is continuous", 999, f1},
		{"second sweep start", 1000, f0},
		{"third sweep end", 2998, f1},
	} {
		if got := instFreq(x, tc.i, rate); math.Abs(got-tc.want) > 4 { // the slope is 2 Hz per sample
			t.Errorf("%s: frequency at sample %d = %.2f Hz, want %.0f", tc.name, tc.i, got, tc.want)
		}
	}
	for i, v := range x {
		if math.Abs(cmplx.Abs(v)-1) > 1e-6 {
			t.Fatalf("|x[%d]| = %g, want 1", i, cmplx.Abs(v))
		}
	}
}

func TestNoise(t *testing.T) {
	const n = 200000
	for _, cplx := range []bool{false, true} {
		cfg := capture.SyntheticConfig{Signal: "noise", SampleRate: 1e6, Complex: cplx, NoiseStdDev: 0.2, Seed: 42}
		a := readN(t, mustSynthetic(t, cfg), n, 1000)
		b := readN(t, mustSynthetic(t, cfg), n, 777)
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("complex=%v: same seed differs at %d", cplx, i)
			}
		}
		cfg.Seed = 43
		c := readN(t, mustSynthetic(t, cfg), 16, 16)
		same := true
		for i := range c {
			same = same && c[i] == a[i]
		}
		if same {
			t.Errorf("complex=%v: seeds 42 and 43 give the same stream", cplx)
		}
		var sum, sum2 float64
		for _, v := range a {
			sum += float64(v)
			sum2 += float64(v) * float64(v)
		}
		mean := sum / float64(len(a))
		perValue := math.Sqrt(sum2/float64(len(a)) - mean*mean)
		want := 0.2
		if cplx {
			want /= math.Sqrt2
		}
		if math.Abs(perValue-want) > 0.01*want || math.Abs(mean) > 0.005 {
			t.Errorf("complex=%v: std %g mean %g, want std %g mean 0", cplx, perValue, mean, want)
		}
	}
}

func TestImpulse(t *testing.T) {
	for _, tc := range []struct {
		every   int
		complex bool
	}{{0, false}, {1, false}, {10, false}, {7, true}} {
		src := mustSynthetic(t, capture.SyntheticConfig{Signal: "impulse", SampleRate: 100,
			Complex: tc.complex, Amplitude: 0.75, ImpulseEvery: tc.every})
		ch := src.Info().Channels()
		v := readN(t, src, 100, 13)
		for i := range 100 {
			want := float32(0)
			if i == 0 || (tc.every > 0 && i%tc.every == 0) {
				want = 0.75
			}
			if v[i*ch] != want || (ch == 2 && v[i*ch+1] != 0) {
				t.Fatalf("every=%d: sample %d = %v, want %v", tc.every, i, v[i*ch:i*ch+ch], want)
			}
		}
	}
}

func TestSumIsSumOfParts(t *testing.T) {
	parts := []capture.SyntheticConfig{
		{Signal: "tone", FrequencyHz: 1000, Amplitude: 0.3},
		{Signal: "noise", NoiseStdDev: 0.1, Seed: 7},
		{Signal: "impulse", Amplitude: 0.5, ImpulseEvery: 100},
		{Signal: "chirp", FrequencyHz: -2000, ChirpEndHz: 2000, ChirpPeriodS: 0.01, Amplitude: 0.2},
	}
	const rate, n = 48000.0, 5000
	sum := readN(t, mustSynthetic(t, capture.SyntheticConfig{Signal: "sum", SampleRate: rate,
		Complex: true, Components: parts}), n, 500)
	want := make([]float32, 2*n)
	for _, p := range parts {
		p.SampleRate, p.Complex = rate, true
		for i, v := range readN(t, mustSynthetic(t, p), n, n) {
			want[i] += v
		}
	}
	for i := range want {
		if sum[i] != want[i] {
			t.Fatalf("value %d: sum %v, parts add to %v", i, sum[i], want[i])
		}
	}
}

// TestBlockSplit checks that any read sizes give the same stream.
func TestBlockSplit(t *testing.T) {
	const n = 5000
	cfgs := map[string]capture.SyntheticConfig{
		"tone":      {Signal: "tone", FrequencyHz: 1234.5, Amplitude: 1, PhaseRad: 0.5},
		"multitone": {Signal: "multitone", Tones: []capture.Tone{{FrequencyHz: 100, Amplitude: 1}, {FrequencyHz: -7000, Amplitude: 0.5}}},
		"chirp":     {Signal: "chirp", FrequencyHz: 0, ChirpEndHz: 20000, ChirpPeriodS: 0.0123, Amplitude: 1},
		"noise":     {Signal: "noise", NoiseStdDev: 1, Seed: 3},
		"impulse":   {Signal: "impulse", Amplitude: 1, ImpulseEvery: 33},
		"sum": {Signal: "sum", Components: []capture.SyntheticConfig{
			{Signal: "tone", FrequencyHz: 5000, Amplitude: 1}, {Signal: "noise", NoiseStdDev: 0.1, Seed: 1}}},
	}
	for name, cfg := range cfgs {
		for _, cplx := range []bool{false, true} {
			cfg.SampleRate, cfg.Complex = 48000, cplx
			ref := readN(t, mustSynthetic(t, cfg), n, n)
			for _, block := range []int{1, 7, 256, 1023, 1025} {
				got := readN(t, mustSynthetic(t, cfg), n, block)
				for i := range ref {
					if got[i] != ref[i] {
						t.Fatalf("%s complex=%v block=%d: value %d is %v, one read gives %v", name, cplx, block, i, got[i], ref[i])
					}
				}
			}
		}
	}
}

func TestNumSamples(t *testing.T) {
	for _, tc := range []struct {
		limit, block int64
		reads        []int // values returned by each Read, the last with io.EOF
	}{
		{1000, 300, []int{300, 300, 300, 100}},
		{600, 300, []int{300, 300, 0}},
		{5, 10, []int{5}},
	} {
		src := mustSynthetic(t, capture.SyntheticConfig{Signal: "tone", SampleRate: 1000, FrequencyHz: 1,
			Amplitude: 1, NumSamples: tc.limit, Complex: true})
		buf := make([]float32, 2*tc.block)
		for i, want := range tc.reads {
			n, err := src.Read(context.Background(), buf)
			last := i == len(tc.reads)-1
			if n != 2*want || (last != (err == io.EOF)) || (!last && err != nil) {
				t.Fatalf("limit %d block %d read %d: got (%d, %v), want %d values, EOF=%v", tc.limit, tc.block, i, n, err, 2*want, last)
			}
		}
		if n, err := src.Read(context.Background(), buf); n != 0 || err != io.EOF {
			t.Fatalf("read after end: (%d, %v), want (0, EOF)", n, err)
		}
	}
}

// TestPaced is a behaviour test: a paced source cannot deliver 100 ms of
// samples in less than 100 ms. Only the lower bound is asserted.
func TestPaced(t *testing.T) {
	src := mustSynthetic(t, capture.SyntheticConfig{Signal: "tone", SampleRate: 1e6, FrequencyHz: 1e3,
		Amplitude: 1, Paced: true, NumSamples: 100000})
	start := time.Now()
	buf := make([]float32, 10000)
	total := 0
	for {
		n, err := src.Read(context.Background(), buf)
		total += n
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if el := time.Since(start); el < 100*time.Millisecond || total != 100000 {
		t.Fatalf("delivered %d samples in %v; want 100000 in at least 100ms", total, el)
	}
}

// TestPacedCancel: a paced Read stopped while it waits returns the samples
// already due, not its whole block (at 10 S/s a block of 1000 is 100 s
// ahead), and the next Read starts with the rest: the stream read across
// the stop equals an unpaced one.
func TestPacedCancel(t *testing.T) {
	cfg := capture.SyntheticConfig{Signal: "tone", SampleRate: 1000, FrequencyHz: 7, Amplitude: 1, Paced: true, NumSamples: 2500}
	src := mustSynthetic(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	first := make([]float32, 1000) // 1 s of samples
	n, err := src.Read(ctx, first)
	if !errors.Is(err, context.DeadlineExceeded) || n < 50 || n > 400 {
		t.Fatalf("Read stopped after 100 ms = (%d, %v), want about 100 samples and context.DeadlineExceeded", n, err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if n, err := src.Read(ctx, make([]float32, 10)); n != 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("Read with cancelled ctx = (%d, %v)", n, err)
	}
	second := make([]float32, 1000)
	if m, err := src.Read(context.Background(), second); m != len(second) || err != nil {
		t.Fatalf("Read after the stop = (%d, %v)", m, err)
	}
	// The samples held count toward NumSamples: the stream ends at 2500.
	third := make([]float32, 2000)
	if m, err := src.Read(context.Background(), third); m != 1500-n || !errors.Is(err, io.EOF) {
		t.Fatalf("last Read = (%d, %v), want (%d, EOF)", m, err, 1500-n)
	}
	cfg.Paced = false
	want := make([]float32, n+len(second))
	if _, err := mustSynthetic(t, cfg).Read(context.Background(), want); err != nil {
		t.Fatal(err)
	}
	got := append(first[:n:n], second...)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("sample %d across the stop = %v, want %v (the unpaced stream)", i, got[i], want[i])
		}
	}
}

func TestSyntheticReadErrors(t *testing.T) {
	src := mustSynthetic(t, capture.SyntheticConfig{Signal: "tone", SampleRate: 10, FrequencyHz: 1, Amplitude: 1, Complex: true})
	if _, err := src.Read(context.Background(), make([]float32, 3)); !errors.Is(err, capture.ErrDstLength) {
		t.Errorf("odd dst for complex: %v, want ErrDstLength", err)
	}
	src.Close()
	if _, err := src.Read(context.Background(), make([]float32, 2)); !errors.Is(err, capture.ErrClosed) {
		t.Errorf("read after Close: %v, want ErrClosed", err)
	}
}

func TestSyntheticValidation(t *testing.T) {
	tone := func(mod func(*capture.SyntheticConfig)) capture.SyntheticConfig {
		c := capture.SyntheticConfig{Signal: "tone", SampleRate: 1000, FrequencyHz: 100, Amplitude: 1}
		mod(&c)
		return c
	}
	tests := []struct {
		name string
		cfg  capture.SyntheticConfig
		want string
	}{
		{"unknown signal", tone(func(c *capture.SyntheticConfig) { c.Signal = "square" }), `unknown signal "square"`},
		{"empty signal", tone(func(c *capture.SyntheticConfig) { c.Signal = "" }), "Signal is empty"},
		{"zero rate", tone(func(c *capture.SyntheticConfig) { c.SampleRate = 0 }), "SampleRate 0"},
		{"NaN rate", tone(func(c *capture.SyntheticConfig) { c.SampleRate = math.NaN() }), "SampleRate NaN"},
		{"above nyquist", tone(func(c *capture.SyntheticConfig) { c.FrequencyHz = 501 }), "outside ±Nyquist"},
		{"below -nyquist", tone(func(c *capture.SyntheticConfig) { c.FrequencyHz = -501 }), "outside ±Nyquist"},
		{"inf amplitude", tone(func(c *capture.SyntheticConfig) { c.Amplitude = math.Inf(1) }), "Amplitude +Inf is not finite"},
		{"negative NumSamples", tone(func(c *capture.SyntheticConfig) { c.NumSamples = -1 }), "NumSamples -1"},
		{"unused field", tone(func(c *capture.SyntheticConfig) { c.NoiseStdDev = 1 }), "NoiseStdDev is not used"},
		{"empty multitone", capture.SyntheticConfig{Signal: "multitone", SampleRate: 1000}, "Tones is empty"},
		{"multitone bad tone", capture.SyntheticConfig{Signal: "multitone", SampleRate: 1000,
			Tones: []capture.Tone{{FrequencyHz: 1, Amplitude: 1}, {FrequencyHz: 900, Amplitude: 1}}}, "Tones[1].FrequencyHz 900"},
		{"chirp period", capture.SyntheticConfig{Signal: "chirp", SampleRate: 1000, FrequencyHz: 1, ChirpEndHz: 2, Amplitude: 1}, "ChirpPeriodS 0"},
		{"chirp end", capture.SyntheticConfig{Signal: "chirp", SampleRate: 1000, ChirpEndHz: 600, ChirpPeriodS: 1, Amplitude: 1}, "ChirpEndHz 600"},
		{"negative noise", capture.SyntheticConfig{Signal: "noise", SampleRate: 1000, NoiseStdDev: -1}, "NoiseStdDev -1"},
		{"noise amplitude", capture.SyntheticConfig{Signal: "noise", SampleRate: 1000, NoiseStdDev: 1, Amplitude: 1}, "Amplitude is not used"},
		{"impulse every", capture.SyntheticConfig{Signal: "impulse", SampleRate: 1000, Amplitude: 1, ImpulseEvery: -2}, "ImpulseEvery -2"},
		{"empty sum", capture.SyntheticConfig{Signal: "sum", SampleRate: 1000}, "Components is empty"},
		{"sum bad component", capture.SyntheticConfig{Signal: "sum", SampleRate: 1000,
			Components: []capture.SyntheticConfig{{Signal: "tone", FrequencyHz: 1, Amplitude: 1}, {Signal: "bogus"}}}, `synthetic components[1]: unknown signal "bogus"`},
		{"sum rate mismatch", capture.SyntheticConfig{Signal: "sum", SampleRate: 1000,
			Components: []capture.SyntheticConfig{{Signal: "tone", SampleRate: 2000, Amplitude: 1}}}, "differs from the sum's 1000"},
		{"sum complex in real", capture.SyntheticConfig{Signal: "sum", SampleRate: 1000,
			Components: []capture.SyntheticConfig{{Signal: "tone", Complex: true, Amplitude: 1}}}, "complex component in a real sum"},
		{"sum component NumSamples", capture.SyntheticConfig{Signal: "sum", SampleRate: 1000,
			Components: []capture.SyntheticConfig{{Signal: "tone", NumSamples: 5, Amplitude: 1}}}, "must not set NumSamples"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := capture.NewSynthetic(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestSyntheticReadAllocs(t *testing.T) {
	cfgs := []capture.SyntheticConfig{
		{Signal: "tone", FrequencyHz: 100, Amplitude: 1, Complex: true},
		{Signal: "chirp", FrequencyHz: 1, ChirpEndHz: 400, ChirpPeriodS: 1, Amplitude: 1},
		{Signal: "noise", NoiseStdDev: 1},
		{Signal: "sum", Components: []capture.SyntheticConfig{{Signal: "impulse", Amplitude: 1, ImpulseEvery: 3}, {Signal: "tone", Amplitude: 1}}},
		{Signal: "tone", FrequencyHz: 100, Amplitude: 1, Paced: true, SampleRate: 1e9},
	}
	buf := make([]float32, 1024)
	for _, cfg := range cfgs {
		if cfg.SampleRate == 0 {
			cfg.SampleRate = 1000
		}
		src := mustSynthetic(t, cfg)
		if a := testing.AllocsPerRun(50, func() { src.Read(context.Background(), buf) }); a != 0 {
			t.Errorf("%s paced=%v: %v allocs per Read, want 0", cfg.Signal, cfg.Paced, a)
		}
	}
}
