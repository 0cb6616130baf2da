package gpu

import "fmt"

// DeviceInfo describes the CUDA device a backend runs on.
type DeviceInfo struct {
	Ordinal           int
	Name              string
	ComputeCapability [2]int
	Integrated        bool // shares DRAM with the CPU (Jetson): zero-copy is free of PCIe
	CanMapHost        bool
	UnifiedAddressing bool
	SharedOptin       int // max dynamic shared memory per block, bytes
	DriverVersion     int
}

// String is a one-line description for logs.
func (d DeviceInfo) String() string {
	kind := "discrete"
	if d.Integrated {
		kind = "integrated"
	}
	return fmt.Sprintf("%s (device %d, sm_%d%d, %s, driver %d.%d)", d.Name, d.Ordinal,
		d.ComputeCapability[0], d.ComputeCapability[1], kind, d.DriverVersion/1000, d.DriverVersion%1000/10)
}

// chooseTransport resolves TransportAuto for a device and block size.
func chooseTransport(t Transport, dev DeviceInfo, blockSize int) (Transport, string) {
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
