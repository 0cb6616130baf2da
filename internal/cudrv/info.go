package cudrv

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

// PageAlign rounds n up to the 4 KiB pages pinned allocations come in.
func PageAlign(n int64) int64 { return (n + 4095) &^ 4095 }
