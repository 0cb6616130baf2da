package cuda

import (
	"strings"
	"testing"

	"github.com/sigproc/sigproc/internal/cudrv"
	"github.com/sigproc/sigproc/pipeline"
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
		{128, 64, 0, 256, 2},   // 8 real channels of 32 frames: as one channel of 256
		{2048, 64, 0, 1024, 1}, // 8 complex channels of 256 frames (16 lanes): threads capped
		{1025, 64, 0, 1024, 1}, // 16 lanes, 129 frames: an odd number of pairs
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

func TestRetuneCapacity(t *testing.T) {
	const h200 = 227 << 10
	tests := []struct{ ntaps, block, lanes, optin, want int }{
		{64, 256, 1, h200, 256},    // the latency case: room for 256 taps
		{64, 256, 2, h200, 256},    // complex
		{64, 256, 16, h200, 256},   // 8 complex channels: 98 KiB
		{1000, 64, 1, h200, 1000},  // more taps than the default: its own
		{64, 2048, 16, h200, 64},   // 8 complex channels of 2048: too big even at ntaps (refused at start)
		{64, 1024, 16, h200, 180},  // 8 complex channels of 1024: shrunk to what fits
		{64, 256, 16, 64 << 10, 0}, // shrunk to fit 64 KiB (checked below)
	}
	for _, tt := range tests {
		got := retuneCapacity(tt.ntaps, tt.block, tt.lanes, tt.optin)
		if got < tt.ntaps {
			t.Errorf("retuneCapacity(%d, %d, %d, %d) = %d < ntaps", tt.ntaps, tt.block, tt.lanes, tt.optin, got)
		}
		if tt.want != 0 && got != tt.want {
			t.Errorf("retuneCapacity(%d, %d, %d, %d) = %d, want %d", tt.ntaps, tt.block, tt.lanes, tt.optin, got, tt.want)
		}
		if got > tt.ntaps && persistentSmem(got, tt.block, tt.lanes)+zcStaticSmem > tt.optin {
			t.Errorf("retuneCapacity(%d, %d, %d, %d) = %d does not fit", tt.ntaps, tt.block, tt.lanes, tt.optin, got)
		}
		if got > tt.ntaps && got < zcRetuneTaps && persistentSmem(got+4, tt.block, tt.lanes)+zcStaticSmem <= tt.optin {
			t.Errorf("retuneCapacity(%d, %d, %d, %d) = %d, but %d fits", tt.ntaps, tt.block, tt.lanes, tt.optin, got, got+4)
		}
	}
	// The 256/64 latency case: 1 KiB of taps and three 511-value buffers.
	if got, want := persistentSmem(256, 256, 1), 256*4+3*511*4; got != want {
		t.Errorf("persistentSmem(256, 256, 1) = %d, want %d", got, want)
	}
	for lanes, want := range map[int]string{1: "fir_persistent", 2: "fir_persistent", 3: "fir_persistent_lanes", 16: "fir_persistent_lanes"} {
		if got := persistentKernel(lanes); got != want {
			t.Errorf("persistentKernel(%d) = %s, want %s", lanes, got, want)
		}
	}
	if got, want := paramFloats(61), 2*(paramHdr+64); got != want {
		t.Errorf("paramFloats(61) = %d, want %d", got, want)
	}
}

// A live source's default ring on zero-copy holds zeroCopyLiveBytes of
// words, and never fewer than pipeline.LiveSlots blocks.
func TestZeroCopyLiveSlots(t *testing.T) {
	for _, tc := range []struct {
		block, values, want int
	}{
		{256, 1, 1024}, // the H200's 60 s run without a drop
		{256, 2, 512},
		{2048, 2, 64}, // probe-chain.yaml: 64 kept up, 1 024 did not
		{4096, 2, 64},
		{1, 1, 1 << 17},
		{255, 1, 1024}, // 128 pairs, the last padded
	} {
		if got := zeroCopyLiveSlots(pipeline.Layout{BlockSize: tc.block, Channels: tc.values}); got != tc.want {
			t.Errorf("%d × %d values: %d slots, want %d", tc.block, tc.values, got, tc.want)
		}
	}
}

func TestChooseTransport(t *testing.T) {
	const optin = 227 << 10 // the H200's
	disc, integ := cudrv.DeviceInfo{SharedOptin: optin}, cudrv.DeviceInfo{Integrated: true, SharedOptin: optin}
	one := func(block, lanes int) pipeline.Layout {
		return pipeline.Layout{BlockSize: block, Channels: lanes, Slots: 8}
	}
	for _, tt := range []struct {
		in   Transport
		dev  cudrv.DeviceInfo
		l    pipeline.Layout
		taps int
		want Transport
	}{
		{TransportAuto, integ, one(4096, 1), 64, TransportZeroCopy},
		{TransportAuto, disc, one(256, 1), 64, TransportZeroCopy},
		{TransportAuto, disc, one(ZeroCopyMaxBlock, 1), 64, TransportZeroCopy},
		{TransportAuto, disc, one(ZeroCopyMaxBlock+1, 1), 64, TransportExplicit},
		{TransportAuto, disc, one(777, 8), 129, TransportZeroCopy},
		{TransportAuto, disc, one(65, 3), 1025, TransportZeroCopy},
		// The kernel does not fit: three 2048-frame buffers of 16 values
		// take 384 KiB, a 1<<16-sample block 768 KiB.
		{TransportAuto, disc, one(ZeroCopyMaxBlock, 16), 64, TransportExplicit},
		{TransportAuto, integ, one(1<<16, 1), 64, TransportExplicit},
		{TransportAuto, disc, one(256, 1), 20000, TransportExplicit},
		{TransportExplicit, integ, one(64, 1), 64, TransportExplicit},
		{TransportZeroCopy, disc, one(ZeroCopyMaxBlock, 16), 64, TransportZeroCopy}, // refused at start, with the reason
	} {
		if got, why := chooseTransport(tt.in, tt.dev, tt.l, tt.taps); got != tt.want || why == "" {
			t.Errorf("chooseTransport(%s, integrated=%v, block %d × %d values, %d taps) = %s (%q), want %s",
				tt.in, tt.dev.Integrated, tt.l.BlockSize, tt.l.Channels, tt.taps, got, why, tt.want)
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
}

func TestDeviceRefusal(t *testing.T) {
	mapped, unmapped := cudrv.DeviceInfo{Name: "mapped", CanMapHost: true}, cudrv.DeviceInfo{Name: "old"}
	for _, tt := range []struct {
		t      Transport
		dev    cudrv.DeviceInfo
		refuse bool
	}{
		{TransportZeroCopy, mapped, false},
		{TransportZeroCopy, unmapped, true},
		{TransportExplicit, unmapped, false},
		{TransportExplicitPageable, unmapped, false},
	} {
		err := deviceRefusal(tt.t, tt.dev)
		if (err != nil) != tt.refuse {
			t.Errorf("deviceRefusal(%s, %s) = %v, want refusal %v", tt.t, tt.dev.Name, err, tt.refuse)
		}
		if err != nil && !strings.Contains(err.Error(), "old cannot map host memory") {
			t.Errorf("deviceRefusal(%s, %s) = %q: does not name the device and why", tt.t, tt.dev.Name, err)
		}
	}
}
