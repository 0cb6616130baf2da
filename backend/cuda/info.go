package cuda

import (
	"fmt"

	"github.com/sigproc/sigproc/internal/cudrv"
	"github.com/sigproc/sigproc/pipeline"
)

// chooseTransport resolves TransportAuto for a device and a plain fir of
// ntaps taps on l's blocks: zero-copy on an integrated GPU, or a discrete
// one up to ZeroCopyMaxBlock samples, where its kernel fits the device's
// shared memory; explicit otherwise.
func chooseTransport(t Transport, dev cudrv.DeviceInfo, l pipeline.Layout, ntaps int) (Transport, string) {
	if t != TransportAuto {
		return t, "configured"
	}
	why := "integrated GPU shares DRAM with the CPU"
	if !dev.Integrated {
		if l.BlockSize > ZeroCopyMaxBlock {
			return TransportExplicit, fmt.Sprintf("discrete GPU, block %d > %d samples", l.BlockSize, ZeroCopyMaxBlock)
		}
		why = fmt.Sprintf("discrete GPU, block %d <= %d samples", l.BlockSize, ZeroCopyMaxBlock)
	}
	if need := zeroCopySmem(ntaps, l, dev.SharedOptin); need > dev.SharedOptin {
		return TransportExplicit, fmt.Sprintf("%s, but the zero-copy kernel needs %d KiB of shared memory for %d taps on %d-sample blocks of %d values per frame, the device has %d KiB",
			why, need>>10, ntaps, l.BlockSize, l.Channels, dev.SharedOptin>>10)
	}
	return TransportZeroCopy, why
}

// deviceRefusal says why transport t cannot run on dev, nil where it can:
// zero-copy needs host memory mapped into the device.
func deviceRefusal(t Transport, dev cudrv.DeviceInfo) error {
	if t == TransportZeroCopy && !dev.CanMapHost {
		return fmt.Errorf("gpu: %s cannot map host memory, so zero-copy is impossible; use transport: explicit", dev.Name)
	}
	return nil
}

// zeroCopySmem is the shared memory the zero-copy kernel takes for ntaps
// taps on l's blocks, its retune capacity fitted to optin bytes: more than
// optin where even ntaps do not fit.
func zeroCopySmem(ntaps int, l pipeline.Layout, optin int) int {
	return persistentSmem(retuneCapacity(ntaps, l.BlockSize, l.Channels, optin), l.BlockSize, l.Channels) + zcStaticSmem
}

// persistentGeometry picks the persistent kernel's thread count and how many
// lanes share one output pair (split, a power of two). Splitting shortens
// each thread's tap loop, but every extra warp makes the kernel's barriers
// dearer: on the H200 1024 threads (split 8) took 1.25 µs per 256-sample,
// 64-tap block against 0.70 µs for 128 threads (split 1), so the default
// keeps the block within 256 threads. force > 0 sets the split.
func persistentGeometry(pairs, ntaps, force int) (threads, split int) {
	split = 1
	if force > 0 {
		split = force
	} else {
		for split < 32 && pairs*split*2 <= 256 && ntaps/(split*2) >= 8 {
			split *= 2
		}
	}
	threads = min(1024, (pairs*split+31)&^31)
	return threads, split
}

// The zero-copy kernel's optional timing array holds timesCap blocks
// (TIMES_CAP in kernels/fir.cu) of timesWords words (TIMES_WORDS):
// globaltimer in and out, clock64 in and out. The host keeps hostStride
// timestamps per block beside it.
const (
	timesCap   = 65536
	timesWords = 4
	hostStride = 5
)

// Control block offsets, mirrored from struct Ctrl in kernels/persistent.cuh.
const (
	ctrlStop      = 0
	ctrlHeartbeat = 128
	ctrlError     = 256
	ctrlRunning   = 384
	ctrlSize      = 512
)

// evenWords is the tagged words of a zero-copy ring slot for l's blocks:
// the block's values, rounded up to whole pairs.
func evenWords(l pipeline.Layout) int { return (l.BlockValues() + 1) &^ 1 }

// Retune geometry of the zero-copy kernel (kernels/fir.cu).
const (
	// zcRetuneTaps is the most taps a zero-copy run can be retuned to
	// unless it started with more or shared memory is short: the kernel
	// keeps the input history and room for the taps of that many.
	zcRetuneTaps = 256
	// paramHdr is the floats before a parameter buffer's taps (PARAM_HDR).
	paramHdr = 32
	// zcStaticSmem is the kernel's static shared memory (parity_of).
	zcStaticSmem = 16
)

// persistentKernel names the zero-copy kernel for frames of lanes values:
// fir_persistent's register-blocked paths take one real or complex
// channel, fir_persistent_lanes any other count.
func persistentKernel(lanes int) string {
	if lanes <= 2 {
		return "fir_persistent"
	}
	return "fir_persistent_lanes"
}

// persistentSmem is the dynamic shared memory of fir_persistent sized for
// hcap taps: the padded taps, then three [history | block] buffers of
// block frames of lanes values.
func persistentSmem(hcap, block, lanes int) int {
	return ((hcap+3)&^3)*4 + 3*(hcap-1+block)*lanes*4
}

// retuneCapacity is the most taps a zero-copy run of ntaps taps on blocks
// of block frames of lanes values can be retuned to: zcRetuneTaps (or
// ntaps, if more), less what does not fit in optin bytes of shared memory
// (never below ntaps; a run that does not fit even then is refused at
// start).
func retuneCapacity(ntaps, block, lanes, optin int) int {
	hcap := max(ntaps, zcRetuneTaps)
	for hcap > ntaps && persistentSmem(hcap, block, lanes)+zcStaticSmem > optin {
		// Shrink in steps of 4 taps (no gain below: the taps are padded).
		hcap = max(ntaps, (hcap-1)&^3)
	}
	return hcap
}

// paramFloats is the size, in floats, of the zero-copy kernel's parameter
// block for hcap taps: two buffers of a header and room for the taps.
func paramFloats(hcap int) int { return 2 * (paramHdr + (hcap+3)&^3) }

// zeroCopyLiveBytes bounds the mapped input words of a live source's
// default ring on zero-copy (LiveSlotCeiling). The source writes each
// block into its slot as the block arrives, and a slot the last level
// cache no longer holds costs more than a short period to write: on an
// H100 host (2026-12-07) 2048-sample complex blocks (32 KiB of words) every
// 20 µs fell behind on 69 and 80 % of blocks with 1 024 and 4 096 slots
// (32 and 128 MiB) and on none with 64 (2 MiB); on the H200 host 256-sample
// real blocks every 5 µs ran 60 s without a drop with 1 024 slots (2 MiB),
// where 64 dropped in millisecond host stalls (docs/DEPLOYMENT.md).
const zeroCopyLiveBytes = 2 << 20

// zeroCopyLiveSlots is LiveSlotCeiling's bound on zero-copy for l's
// blocks: 8-byte words, a slot padded to whole pairs.
func zeroCopyLiveSlots(l pipeline.Layout) int {
	slot := int64(max(l.BlockSize*l.Channels, 2)+1) / 2 * 16
	n := pipeline.LiveSlots
	for int64(2*n)*slot <= zeroCopyLiveBytes {
		n *= 2
	}
	return n
}
