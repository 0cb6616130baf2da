package cuda

import (
	"fmt"

	"github.com/sigproc/sigproc/internal/cudrv"
)

// chooseTransport resolves TransportAuto for a device and block size.
func chooseTransport(t Transport, dev cudrv.DeviceInfo, blockSize int) (Transport, string) {
	if t != TransportAuto {
		return t, "configured"
	}
	if dev.Integrated {
		return TransportZeroCopy, "integrated GPU shares DRAM with the CPU"
	}
	if blockSize <= ZeroCopyMaxBlock {
		return TransportZeroCopy, fmt.Sprintf("discrete GPU, block %d <= %d samples", blockSize, ZeroCopyMaxBlock)
	}
	return TransportExplicit, fmt.Sprintf("discrete GPU, block %d > %d samples", blockSize, ZeroCopyMaxBlock)
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
