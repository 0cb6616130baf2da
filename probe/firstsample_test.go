package probe

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestFromFirstSample checks the fill time, (BlockSize−1)/rate, and that
// every percentile moves by it; without a rate none is reported.
func TestFromFirstSample(t *testing.T) {
	for _, c := range []struct {
		name     string
		cfg      Config
		wantFill float64 // µs; 0 = none
	}{
		{"config rate", Config{BlockSize: 256, SampleRate: 25.6e6, Period: time.Microsecond}, 255 / 25.6},
		{"rate from the period", Config{BlockSize: 256, Period: 10 * time.Microsecond}, 255 / 25.6},
		{"1024 at 1 MS/s", Config{BlockSize: 1024, SampleRate: 1e6}, 1023},
		{"one sample", Config{BlockSize: 1, SampleRate: 1e6}, 0},
		{"no rate", Config{BlockSize: 256}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := Result{Blocks: 10, Latency: Latency{P50: 3, P90: 4, P99: 5, P999: 6, Max: 7, Mean: 3.5}}
			r.fromFirstSample(c.cfg)
			if c.wantFill == 0 && c.cfg.rate() == 0 {
				if r.FromFirstSample != nil {
					t.Fatalf("reported without a rate: %+v", r.FromFirstSample)
				}
				return
			}
			f := r.FromFirstSample
			if f == nil || math.Abs(r.FillUs-c.wantFill) > 1e-9 {
				t.Fatalf("fill %v µs (%v), want %v", r.FillUs, f, c.wantFill)
			}
			if math.Abs(f.P50-(3+c.wantFill)) > 1e-9 || math.Abs(f.P99-(5+c.wantFill)) > 1e-9 || math.Abs(f.Max-(7+c.wantFill)) > 1e-9 {
				t.Fatalf("from first sample %+v, fill %v", *f, c.wantFill)
			}
			var sb strings.Builder
			NewReport("", []Result{r}).WriteTable(&sb)
			if !strings.Contains(sb.String(), "from first sample p50") {
				t.Fatalf("table lacks the first-sample figures:\n%s", sb.String())
			}
		})
	}
}
