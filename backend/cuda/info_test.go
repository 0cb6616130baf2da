package cuda

import (
	"testing"

	"github.com/sigproc/sigproc/internal/cudrv"
)

func TestPersistentGeometry(t *testing.T) {
	tests := []struct{ pairs, taps, force, threads, split int }{
		{128, 64, 0, 256, 2},   // 256 real samples, 64 taps: 32 taps per lane
		{128, 16, 0, 256, 2},   // short filter
		{128, 1, 0, 128, 1},    // a single tap needs no split
		{2048, 64, 0, 1024, 1}, // 4096 real samples: threads capped
		{32, 512, 0, 256, 8},   // long filter on a short block
		{3, 64, 0, 32, 8},      // tiny block: one warp
		{128, 64, 8, 1024, 8},  // forced
		{2048, 64, 4, 1024, 4}, // forced, capped
	}
	for _, tt := range tests {
		th, sp := persistentGeometry(tt.pairs, tt.taps, tt.force)
		if th != tt.threads || sp != tt.split {
			t.Errorf("persistentGeometry(%d, %d) = %d, %d; want %d, %d", tt.pairs, tt.taps, th, sp, tt.threads, tt.split)
		}
		if th%32 != 0 || 32%sp != 0 {
			t.Errorf("pairs %d taps %d: threads %d not a warp multiple or split %d does not divide 32", tt.pairs, tt.taps, th, sp)
		}
	}
}

func TestChooseTransport(t *testing.T) {
	disc, integ := cudrv.DeviceInfo{}, cudrv.DeviceInfo{Integrated: true}
	for _, tt := range []struct {
		in    Transport
		dev   cudrv.DeviceInfo
		block int
		want  Transport
	}{
		{TransportAuto, integ, 1 << 16, TransportZeroCopy},
		{TransportAuto, disc, 256, TransportZeroCopy},
		{TransportAuto, disc, ZeroCopyMaxBlock, TransportZeroCopy},
		{TransportAuto, disc, ZeroCopyMaxBlock + 1, TransportExplicit},
		{TransportExplicit, integ, 64, TransportExplicit},
	} {
		if got, why := chooseTransport(tt.in, tt.dev, tt.block); got != tt.want || why == "" {
			t.Errorf("chooseTransport(%s, integrated=%v, %d) = %s (%q), want %s", tt.in, tt.dev.Integrated, tt.block, got, why, tt.want)
		}
	}
}

func TestParseTransportAndPinnedCheck(t *testing.T) {
	for _, s := range []string{"auto", "zero-copy", "explicit", "explicit-pageable", ""} {
		if _, err := ParseTransport(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	if _, err := ParseTransport("zerocopy"); err == nil {
		t.Error("bad transport accepted")
	}
	if err := checkPinned(300<<20, 256<<20); err == nil {
		t.Error("over-limit request accepted")
	}
	if err := checkPinned(cudrv.PageAlign(1), 4096); err != nil {
		t.Error(err)
	}
}
