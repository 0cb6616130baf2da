package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sigproc/sigproc/capture"
)

func TestDefaultSlots(t *testing.T) {
	const ki, mi = 1 << 10, 1 << 20
	for _, tt := range []struct {
		name          string
		block, values int
		src           RingSource
		want          int
	}{
		// Unpaced: about RingBudgetBytes of slot data, 4..1024 slots.
		{"file 64 Ki real", 64 * ki, 1, RingSource{}, 4},
		{"file 256 Ki real", 256 * ki, 1, RingSource{}, 4},
		{"file 32 Ki real", 32 * ki, 1, RingSource{}, 8},
		{"file 64 Ki complex", 64 * ki, 2, RingSource{}, 4},
		{"file 4 Ki complex", 4 * ki, 2, RingSource{}, 32},
		{"default block 256 real", 256, 1, RingSource{}, 1024},
		{"one sample", 1, 1, RingSource{}, 1024},
		{"huge block keeps the floor", 16 * mi, 16, RingSource{}, 4},
		{"file of 16 Mi at 64 Ki", 64 * ki, 1, RingSource{Frames: 16 * mi}, 4},
		{"file of one block", 64 * ki, 1, RingSource{Frames: 1000}, 2},
		{"file of three blocks at 256", 256, 1, RingSource{Frames: 700}, 4},
		{"zero block treated as 1", 0, 0, RingSource{}, 1024},
		{"backend floor", 256 * ki, 2, RingSource{MinSlots: 64}, 64},
		{"backend floor, short file", 256 * ki, 2, RingSource{MinSlots: 64, Frames: 5 * 256 * ki}, 8},
		// Views: about ViewBudgetBytes, a publish writing headers only.
		{"views 64 Ki real", 64 * ki, 1, RingSource{Views: true}, 64},
		{"views 256 Ki real", 256 * ki, 1, RingSource{Views: true}, 16},
		{"views 64 Ki complex", 64 * ki, 2, RingSource{Views: true}, 32},
		{"views short file", 64 * ki, 1, RingSource{Views: true, Frames: 5 * 64 * ki}, 8},
		{"views of a live source: its slack", 4800, 2, RingSource{Live: true, Rate: 48000, Views: true}, 64},
		// Live: today's 64 slots at least, up to LiveSlackSeconds.
		{"jetson-alsa 4800 at 48 kHz", 4800, 2, RingSource{Live: true, Rate: 48000}, 64},
		{"paced-live", 4096, 2, RingSource{Live: true, Rate: 1e6}, 256},
		{"live, rate unknown", 256, 2, RingSource{Live: true}, 64},
		{"rtl-sdr 2.4 MS/s, 16 Ki", 16 * ki, 2, RingSource{Live: true, Rate: 2.4e6}, 256},
		{"live capped by LiveMaxBytes", 256, 2, RingSource{Live: true, Rate: 1e9}, 32768},
		{"live huge blocks keep 64", 4 * mi, 2, RingSource{Live: true, Rate: 1e9}, 64},
		{"live bounded run", 4800, 2, RingSource{Live: true, Rate: 48000, Frames: 48000}, 16},
		{"live, backend ceiling", 2048, 2, RingSource{Live: true, Rate: 102.4e6, MaxSlots: 64}, 64},
		{"live, backend ceiling above the slack", 4800, 2, RingSource{Live: true, Rate: 48000, MaxSlots: 1024}, 64},
		{"live, backend floor over its ceiling", 256, 2, RingSource{Live: true, Rate: 1e9, MinSlots: 128, MaxSlots: 64}, 128},
		{"unpaced ignores the ceiling", 256, 1, RingSource{MaxSlots: 64}, 1024},
		{"live, ceiling not a power of two", 256, 2, RingSource{Live: true, Rate: 1e9, MaxSlots: 1000}, 512},
		{"live, ceiling below today's slack", 256, 2, RingSource{Live: true, Rate: 1e9, MaxSlots: 3}, LiveSlots},
	} {
		got := DefaultSlots(tt.block, tt.values, tt.src)
		if got != tt.want {
			t.Errorf("%s: DefaultSlots(%d, %d, %+v) = %d, want %d", tt.name, tt.block, tt.values, tt.src, got, tt.want)
		}
		if got < 2 || got&(got-1) != 0 || got > maxSlots {
			t.Errorf("%s: %d is not a power of two in 2..%d", tt.name, got, maxSlots)
		}
	}
}

// A live source never gets less slack than the 64 blocks every ring had
// before issue 29, whatever its block size and rate, unless the run is
// shorter than that.
func TestDefaultSlotsLiveKeepsTodaysSlack(t *testing.T) {
	for _, block := range []int{1, 64, 256, 1024, 4800, 65536, 1 << 20, 1 << 24} {
		for _, values := range []int{1, 2, 16, MaxFrameValues} {
			for _, rate := range []float64{0, 8000, 48000, 2.4e6, 61.44e6, 1e12} {
				if got := DefaultSlots(block, values, RingSource{Live: true, Rate: rate}); got < LiveSlots {
					t.Errorf("block %d, %d values, %g Hz: %d slots, fewer than %d", block, values, rate, got, LiveSlots)
				}
			}
		}
	}
}

// Config.Layout sizes the ring from Source and the run's bound when Slots
// is 0, and takes Slots as given otherwise.
func TestConfigLayoutSlots(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  Config
		want int
	}{
		{"override", Config{BlockSize: 65536, Slots: 64}, 64},
		{"budget", Config{BlockSize: 65536}, 4},
		{"bound by MaxSamples", Config{BlockSize: 256, MaxSamples: 1000}, 4},
		{"bound by the source", Config{BlockSize: 256, Source: RingSource{Frames: 300}, MaxSamples: 1 << 20}, 2},
		{"live", Config{BlockSize: 4800, Complex: true, Source: RingSource{Live: true, Rate: 48000}}, 64},
	} {
		if got := tt.cfg.Layout().Slots; got != tt.want {
			t.Errorf("%s: %d slots, want %d", tt.name, got, tt.want)
		}
	}
}

// TestRunRingDepthFollowsViews runs a float file through a backend that
// takes its region in place and one that has it read: a default ring
// sized for views keeps its depth for the first and is lowered to the
// bytes' budget for the second, and an explicit depth is kept by both.
func TestRunRingDepthFollowsViews(t *testing.T) {
	const block = 1 << 16
	path := filepath.Join(t.TempDir(), "x.f32")
	if err := os.WriteFile(path, make([]byte, 4*block*100), 0o644); err != nil {
		t.Fatal(err)
	}
	src := RingSource{Views: true, Frames: 100 * block}
	for _, tt := range []struct {
		name  string
		views bool
		slots int
		want  int
	}{
		{"views, default", true, 0, DefaultSlots(block, 1, src)},
		{"read, default", false, 0, DefaultSlots(block, 1, RingSource{Frames: 100 * block})},
		{"read, ring_slots", false, 32, 32},
		{"views, ring_slots", true, 2, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := capture.OpenFile(path, "rf32_le", 1e6)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var be Backend = &nullBackend{}
			if tt.views {
				be = &nullRegionBackend{}
			}
			st, err := Run(context.Background(), f, be, discard{}, Config{BlockSize: block, Slots: tt.slots, Source: src}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if st.RingSlots != tt.want || st.SamplesFiltered != 100*block {
				t.Errorf("ring %d slots, %d samples filtered; want %d slots, %d samples", st.RingSlots, st.SamplesFiltered, tt.want, 100*block)
			}
			want := Layout{BlockSize: block, Channels: 1, Slots: tt.want}
			if got := len(be.(interface{ ringMem() []byte }).ringMem()); got != want.Size() {
				t.Errorf("ring memory %d bytes, want %d slots' worth", got, tt.want)
			}
		})
	}
	if a, b := DefaultSlots(block, 1, src), DefaultSlots(block, 1, RingSource{Frames: 100 * block}); a <= b {
		t.Fatalf("views get %d slots, reads %d: the test needs more for views", a, b)
	}
}

// ringMem is the memory of the ring a nullBackend made, for its size.
func (b *nullBackend) ringMem() []byte { return b.ring.Mem() }
