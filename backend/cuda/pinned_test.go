package cuda

import (
	"errors"
	"strings"
	"testing"

	"github.com/sigproc/sigproc/pipeline"
)

func TestPinnedBudget(t *testing.T) {
	const mib, gib = int64(1) << 20, int64(1) << 30
	// The user run of the GPU-suite issue: 1 Mi complex samples per block,
	// 64 slots, explicit transport: 585 MiB.
	oneMi := explicitPinned(pipeline.Layout{BlockSize: 1 << 20, Channels: 2, Slots: 64}, 2<<20)
	if got := (oneMi + mib - 1) / mib; got != 585 {
		t.Fatalf("1 Mi cf32 blocks need %d MiB, the H200 run said 585", got)
	}
	h200 := HostMemory{Bytes: 128 * gib}
	tests := []struct {
		name       string
		need, conf int64
		host       HostMemory
		want       int64  // the budget, when no error
		errHas     string // else what the error names
	}{
		{"1 Mi blocks, default, H200 host", oneMi, 0, h200, 16 * gib, ""},
		{"default, 16 GiB host: a quarter", oneMi, 0, HostMemory{Bytes: 16 * gib}, 4 * gib, ""},
		{"default, 2 TiB host: capped", oneMi, 0, HostMemory{Bytes: 2048 * gib}, 16 * gib, ""},
		{"Jetson 8 GiB: an eighth", oneMi, 0, HostMemory{Bytes: 8 * gib, Integrated: true}, 1 * gib, ""},
		{"Jetson 4 GiB: 1 Mi blocks need the setting", oneMi, 0, HostMemory{Bytes: 4 * gib, Integrated: true}, 0, "set cuda.max_pinned_mb to at least 585 (this host allows up to 1024)"},
		{"Jetson 4 GiB, set within a quarter", oneMi, 1 * gib, HostMemory{Bytes: 4 * gib, Integrated: true}, 1 * gib, ""},
		{"Jetson 4 GiB, set beyond a quarter", oneMi, 2 * gib, HostMemory{Bytes: 4 * gib, Integrated: true}, 0, "cuda.max_pinned_mb is 2048 MiB, more than this host (shared with its integrated GPU) with 4096 MiB of memory allows (1024 MiB)"},
		{"set too small (the old default)", oneMi, 256 * mib, h200, 0, "the limit (cuda.max_pinned_mb) is 256 MiB; raise cuda.max_pinned_mb to at least 585"},
		{"set above half the host", oneMi, 100 * gib, h200, 0, "lower cuda.max_pinned_mb"},
		{"set, fits", oneMi, 4 * gib, h200, 4 * gib, ""},
		{"need above what the host allows", 70 * gib, 0, h200, 0, "lower block_size or ring_slots"},
		{"need above the default, within the host", 20 * gib, 0, h200, 0, "set cuda.max_pinned_mb to at least 20480 (this host allows up to 65536)"},
		{"unknown host: 1 GiB by default", oneMi, 0, HostMemory{}, 1 * gib, ""},
		{"unknown host, need above the default", 2 * gib, 0, HostMemory{}, 0, "memory is unknown); set cuda.max_pinned_mb to at least 2048"},
		{"unknown host, set: no ceiling", 2 * gib, 3 * gib, HostMemory{}, 3 * gib, ""},
	}
	for _, tt := range tests {
		got, err := PinnedBudget(tt.need, tt.conf, tt.host)
		switch {
		case tt.errHas == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.errHas == "" && got != tt.want:
			t.Errorf("%s: budget %d MiB, want %d MiB", tt.name, got>>20, tt.want>>20)
		case tt.errHas != "" && (err == nil || !errors.Is(err, ErrPinnedLimit) || !strings.Contains(err.Error(), tt.errHas)):
			t.Errorf("%s: got (%d, %v), want an ErrPinnedLimit naming %q", tt.name, got, err, tt.errHas)
		}
		if err == nil && got < tt.need {
			t.Errorf("%s: budget %d below the need %d", tt.name, got, tt.need)
		}
	}
}

func TestParseHostMemory(t *testing.T) {
	meminfo := "MemTotal:       131072000 kB\nMemFree:        1000 kB\n"
	for _, tt := range []struct {
		in   string
		want int64
	}{
		{meminfo, 131072000 << 10},
		{"MemFree: 5 kB\nMemTotal: 8 kB\n", 8 << 10},
		{"MemFree: 5 kB\n", 0},
		{"MemTotal: 8 MB\n", 0},
		{"MemTotal: x kB\n", 0},
		{"", 0},
	} {
		if got := parseMemTotal(tt.in); got != tt.want {
			t.Errorf("parseMemTotal(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
	for _, tt := range []struct {
		in   string
		want int64
	}{
		{"max\n", 0}, {"17179869184\n", 16 << 30}, {"", 0}, {"-1", 0},
	} {
		if got := parseCgroupMax(tt.in); got != tt.want {
			t.Errorf("parseCgroupMax(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
	if ReadHostMemory() < 0 {
		t.Error("negative host memory")
	}
}

func TestTransportPinned(t *testing.T) {
	const optin = 227 << 10                  // the H200's
	const page, staging = 4096, 2 * 8192 * 4 // a retunable fir's two tap buffers of BatchMaxTaps
	l := pipeline.Layout{BlockSize: 256, Channels: 1, Slots: 4}
	// Zero-copy, 64 taps: the control block (one page), two rings of 4
	// slots × 256 words × 8 bytes, and the parameter block for 256 taps
	// (2 × (32 + 256) floats: one page); with timing 65536 blocks × 4
	// words × 8 bytes more.
	zc := int64(page + 2*8192 + page)
	// Explicit: the ring, 3 output buffers (2 blocks in flight + 1) of
	// 256 floats (a page each), and the staging.
	x := int64(l.Size()+page-1)&^(page-1) + 3*page + staging
	for _, tt := range []struct {
		t      Transport
		timing bool
		want   int64
	}{
		{TransportZeroCopy, false, zc},
		{TransportZeroCopy, true, zc + 65536*4*8},
		{TransportExplicit, false, x},
		{TransportExplicit, true, x},
		{TransportExplicitPageable, false, staging},
	} {
		if got := transportPinned(tt.t, l, 64, optin, tt.timing, l.BlockValues()); got != tt.want {
			t.Errorf("transportPinned(%s, timing %v) = %d, want %d", tt.t, tt.timing, got, tt.want)
		}
	}
	// An upsampling chain's outputs outgrow its input: 16 × 256 floats, 4 pages each.
	if got, want := transportPinned(TransportExplicit, l, 0, optin, false, 16*l.BlockValues()), x+3*3*page; got != want {
		t.Errorf("explicit, 16× outputs: %d, want %d", got, want)
	}
}

func TestPinWindow(t *testing.T) {
	const mib = int64(1) << 20
	tests := []struct {
		name     string
		inFlight int64
		want     int64
	}{
		{"cf32: 8 blocks of 16 MiB", 8 * 16 * mib, 64 * mib},
		{"cs8: 8 blocks of 8 MiB", 8 * 8 * mib, 32 * mib},
		{"larger blocks: at most the default", 8 * 64 * mib, DefaultPinWindow},
		{"small blocks: at least minWindow", 8 * mib, minWindow},
		{"odd bytes: page-aligned", 8*8*mib + 2*4097, 32*mib + 4096},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := pinWindow(tc.inFlight); got != tc.want {
				t.Errorf("pinWindow(%d) = %d, want %d", tc.inFlight, got, tc.want)
			}
		})
	}
}

func TestPlanRegion(t *testing.T) {
	const mib, gib = int64(1) << 20, int64(1) << 30
	tests := []struct {
		name               string
		size, room, window int64
		threads            int
		ok                 bool
		wantWin            int64
		wantAhead, wantThr int
		wantKeep           bool
	}{
		{"16 GiB file, default budget room: streamed", 16 * gib, 16*gib - 200*mib, 0, 0, true, DefaultPinWindow, int((16*gib - 200*mib) / DefaultPinWindow), DefaultPinThreads, false},
		{"2 GiB file fits: pinned whole, kept", 2 * gib, 16 * gib, 0, 0, true, DefaultPinWindow, int(2 * gib / DefaultPinWindow), DefaultPinThreads, true},
		{"small file: one window of its size", 24 * mib, 1 * gib, 0, 0, true, 24 * mib, 1, DefaultPinThreads, true},
		{"tiny file: the least window", 4096, 1 * gib, 0, 0, true, minWindow, 1, DefaultPinThreads, true},
		{"window and threads set", 8 * gib, 4 * gib, 1 * gib, 1, true, 1 * gib, 4, 1, false},
		{"room shrinks the window to leave two per thread", 8 * gib, 512 * mib, 1 * gib, 2, true, 128 * mib, 4, 2, false},
		{"too little room", 8 * gib, 2*DefaultPinThreads*minWindow - 1, 0, 0, false, 0, 0, 0, false},
		{"empty region", 0, 1 * gib, 0, 0, false, 0, 0, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, ok := planRegion(tc.size, tc.room, tc.window, tc.threads)
			if ok != tc.ok {
				t.Fatalf("ok %v, want %v (%+v)", ok, tc.ok, p)
			}
			if !ok {
				return
			}
			if p.window != tc.wantWin || p.ahead != tc.wantAhead || p.threads != tc.wantThr || p.keep != tc.wantKeep {
				t.Fatalf("plan %+v, want window %d ahead %d threads %d keep %v", p, tc.wantWin, tc.wantAhead, tc.wantThr, tc.wantKeep)
			}
			if int64(p.ahead)*p.window > max(tc.room, p.window) {
				t.Fatalf("%d windows of %d ahead exceed the room %d", p.ahead, p.window, tc.room)
			}
		})
	}
}

func TestRegionBudget(t *testing.T) {
	const gib = int64(1) << 30
	h200 := HostMemory{Bytes: 128 * gib}
	tests := []struct {
		name               string
		budget, configured int64
		host               HostMemory
		want               int64
	}{
		{"default budget: the host's ceiling", 16 * gib, 0, h200, 64 * gib},
		{"integrated: a quarter", 1 * gib, 0, HostMemory{Bytes: 8 * gib, Integrated: true}, 2 * gib},
		{"configured: the limit holds", 4 * gib, 4 * gib, h200, 4 * gib},
		{"unknown host: the budget", 1 * gib, 0, HostMemory{}, 1 * gib},
	}
	for _, tc := range tests {
		if got := RegionBudget(tc.budget, tc.configured, tc.host); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestConvertCode(t *testing.T) {
	for _, tc := range []struct {
		enc        string
		code, size int
	}{
		{pipeline.EncInt8, 1, 1}, {pipeline.EncUint8SDR, 2, 1}, {pipeline.EncUint8Half, 3, 1},
		{pipeline.EncInt16, 4, 2}, {pipeline.EncInt24, 5, 3}, {pipeline.EncInt32, 6, 4},
		{"float64", 0, 4}, {"", 0, 4},
	} {
		if code, size := convertCode(tc.enc); code != int64(tc.code) || size != tc.size {
			t.Errorf("%q: code %d size %d, want %d %d", tc.enc, code, size, tc.code, tc.size)
		}
	}
}

// The windows a share reads are spread evenly, the first pinned unless
// all are read, a block touching one is read, and copyIn pins through a
// window by the count of pinned ones up to it.
func TestRegionPlanReadShare(t *testing.T) {
	const w = 1 << 20
	for _, tc := range []struct {
		share float64
		read  string // windows 0..11, r for read
	}{
		{0, "............"},
		{0.25, "...r...r...r"},
		{1.0 / 3, "..r..r..r..r"},
		{0.5, ".r.r.r.r.r.r"},
		{0.67, ".rr.rr.rr.rr"},
		{0.75, ".rrr.rrr.rrr"},
		{1, "rrrrrrrrrrrr"},
	} {
		p := regionPlan{window: w, share: tc.share}
		got := ""
		for i := range len(tc.read) {
			got += map[bool]string{false: ".", true: "r"}[p.read(i)]
		}
		if got != tc.read {
			t.Errorf("share %v reads %s, want %s", tc.share, got, tc.read)
		}
	}
	p := regionPlan{window: w, share: 0.5}
	for _, tc := range []struct {
		off, n int64
		in     bool
	}{
		{0, w, true},
		{w - 10, 20, false}, // straddles into window 1
		{w, 10, false},
		{2 * w, w, true},
		{3*w - 1, 1, true},
		{2 * w, 0, true},
	} {
		if got := p.inPlace(tc.off, tc.n); got != tc.in {
			t.Errorf("inPlace(%d, %d) = %v, want %v", tc.off, tc.n, got, tc.in)
		}
	}
	if !(regionPlan{window: w}).inPlace(w, w) {
		t.Error("no share, yet a block is not in place")
	}
	for _, tc := range []struct {
		share    float64
		from, to int
		want     int
	}{
		{0, 1, 5, 4},
		{0.5, 1, 5, 2},  // 2 and 4
		{0.75, 1, 5, 1}, // 4
		{0.75, 1, 4, 0}, // 1-3 are read
		{1, 0, 12, 0},
	} {
		if got := (regionPlan{window: w, share: tc.share}).pinned(tc.from, tc.to); got != tc.want {
			t.Errorf("share %v: pinned(%d, %d) = %d, want %d", tc.share, tc.from, tc.to, got, tc.want)
		}
	}
}
