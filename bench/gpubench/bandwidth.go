package gpubench

import (
	"fmt"
	"slices"
	"strings"
)

// Types of the host↔device bandwidth benchmark (sigproc bench bandwidth),
// shared by the cuda and the pure build.

// Bandwidth tests, the names BandwidthConfig.Tests takes.
const (
	// BWCopy times cuMemcpyHtoDAsync and cuMemcpyDtoHAsync from pageable,
	// pinned (cuMemHostAlloc) and registered (cuMemHostRegister) memory.
	BWCopy = "copy"
	// BWBidir times pinned H2D and D2H at once on two streams (PCIe is
	// full duplex).
	BWBidir = "bidir"
	// BWMapped times a kernel reading (and writing) mapped pinned host
	// memory: zero-copy.
	BWMapped = "mapped"
	// BWOverlap times chunked H2D → kernel → D2H on 1, 2 and 4 streams.
	BWOverlap = "overlap"
)

// BandwidthTests lists every test in the order they run.
var BandwidthTests = []string{BWCopy, BWBidir, BWMapped, BWOverlap}

// Host memory kinds of the copy test.
const (
	MemPageable   = "pageable"
	MemPinned     = "pinned"
	MemRegistered = "registered"
)

// Copy directions.
const (
	DirH2D = "h2d"
	DirD2H = "d2h"
)

// GiB is 2^30 bytes: every bandwidth here is in GiB/s.
const GiB = 1 << 30

// BandwidthConfig configures Bandwidth.
type BandwidthConfig struct {
	Device  int      // CUDA device ordinal
	Size    int64    // bytes per copy (and of each buffer)
	Reps    int      // timed copies per figure
	Warmup  int      // untimed copies before each figure
	Tests   []string // subset of BandwidthTests; empty = all
	PTXPath string   // load the bandwidth kernels from this PTX file ("" = embedded)
	// OverlapChunks is how many chunks the overlap test splits Size into
	// (0 = 16).
	OverlapChunks int
	// OverlapStreams are the stream counts of the overlap test (nil = 1, 2, 4).
	OverlapStreams []int
}

// MinBandwidthSize is the smallest Size: one page per overlap chunk at the
// most chunks allowed.
const MinBandwidthSize = 1 << 20

func (c BandwidthConfig) validate() error {
	switch {
	case c.Size < MinBandwidthSize:
		return fmt.Errorf("gpu: bandwidth: size %d bytes is below the minimum %d (1 MiB)", c.Size, MinBandwidthSize)
	case c.Size%4096 != 0:
		return fmt.Errorf("gpu: bandwidth: size %d bytes is not a whole number of 4 KiB pages", c.Size)
	case c.Reps <= 0:
		return fmt.Errorf("gpu: bandwidth: reps must be > 0, got %d", c.Reps)
	case c.Warmup < 0:
		return fmt.Errorf("gpu: bandwidth: warmup must be >= 0, got %d", c.Warmup)
	case c.OverlapChunks < 0 || c.OverlapChunks > 256:
		return fmt.Errorf("gpu: bandwidth: overlap chunks must be 0 (default 16) to 256, got %d", c.OverlapChunks)
	case c.Device < 0:
		return fmt.Errorf("gpu: bandwidth: device must be >= 0, got %d", c.Device)
	}
	for _, t := range c.Tests {
		if !slices.Contains(BandwidthTests, t) {
			return fmt.Errorf("gpu: bandwidth: unknown test %q (want %s)", t, strings.Join(BandwidthTests, ", "))
		}
	}
	for _, s := range c.OverlapStreams {
		if s < 1 || s > 64 {
			return fmt.Errorf("gpu: bandwidth: overlap stream count %d out of range (1 to 64)", s)
		}
	}
	return nil
}

// runs reports whether test t is selected.
func (c BandwidthConfig) runs(t string) bool {
	return len(c.Tests) == 0 || slices.Contains(c.Tests, t)
}

func (c BandwidthConfig) overlapChunks() int {
	if c.OverlapChunks == 0 {
		return 16
	}
	return c.OverlapChunks
}

func (c BandwidthConfig) overlapStreams() []int {
	if len(c.OverlapStreams) == 0 {
		return []int{1, 2, 4}
	}
	return c.OverlapStreams
}

// CopyResult is one memory kind and direction of the copy test.
type CopyResult struct {
	Memory    string  `json:"memory"`    // MemPageable, MemPinned or MemRegistered
	Direction string  `json:"direction"` // DirH2D or DirD2H
	Bytes     int64   `json:"bytes"`     // per copy
	Reps      int     `json:"reps"`
	Seconds   float64 `json:"seconds"` // CUDA-event time of all reps, back to back
	GiBps     float64 `json:"gibps"`   // Bytes·Reps / Seconds
	// Per-copy figures: each copy also timed alone between two events.
	BestGiBps   float64 `json:"best_gibps"`
	MedianGiBps float64 `json:"median_gibps"`
	// HostGiBps is Bytes·Reps over the host's wall clock from the first
	// call to the end of the last copy.
	HostGiBps float64 `json:"host_gibps"`
}

// BidirResult is pinned H2D and D2H running at once on two streams.
type BidirResult struct {
	Bytes      int64   `json:"bytes"` // per copy, each way
	Reps       int     `json:"reps"`
	H2DGiBps   float64 `json:"h2d_gibps"`
	D2HGiBps   float64 `json:"d2h_gibps"`
	TotalGiBps float64 `json:"total_gibps"` // both directions over the longer of the two
	Seconds    float64 `json:"seconds"`
}

// MappedResult is a kernel streaming over mapped pinned host memory.
type MappedResult struct {
	Op      string  `json:"op"` // "read" or "write"
	Bytes   int64   `json:"bytes"`
	Reps    int     `json:"reps"`
	GiBps   float64 `json:"gibps"` // median pass
	Best    float64 `json:"best_gibps"`
	Blocks  int     `json:"blocks"`
	Threads int     `json:"threads"`
}

// OverlapRun is the overlap test with one stream count.
type OverlapRun struct {
	Streams int     `json:"streams"`
	Seconds float64 `json:"seconds"` // median pass
	GiBps   float64 `json:"gibps"`   // bytes moved each way / Seconds
	Speedup float64 `json:"speedup"` // the 1-stream time / Seconds
}

// OverlapResult is the copy/compute overlap test: Size bytes in Chunks
// chunks, each H2D → bw_compute (in place) → D2H on stream chunk%streams.
type OverlapResult struct {
	Bytes       int64   `json:"bytes"`
	Chunks      int     `json:"chunks"`
	KernelIters int     `json:"kernel_iters"` // FMAs per value, sized so the kernel takes about as long as the H2D
	H2DMs       float64 `json:"h2d_ms"`       // the whole buffer, alone
	KernelMs    float64 `json:"kernel_ms"`
	D2HMs       float64 `json:"d2h_ms"`
	// SerialMs is H2DMs + KernelMs + D2HMs, what no overlap at all costs;
	// BoundMs the largest of the three, what perfect overlap approaches.
	SerialMs float64      `json:"serial_ms"`
	BoundMs  float64      `json:"bound_ms"`
	Runs     []OverlapRun `json:"runs"`
}

// BandwidthResult is what Bandwidth measured.
type BandwidthResult struct {
	Device  string         `json:"device"`
	Bytes   int64          `json:"bytes"`
	Reps    int            `json:"reps"`
	Warmup  int            `json:"warmup"`
	Copies  []CopyResult   `json:"copies,omitempty"`
	Bidir   *BidirResult   `json:"bidir,omitempty"`
	Mapped  []MappedResult `json:"mapped,omitempty"`
	Overlap *OverlapResult `json:"overlap,omitempty"`
	// PinnedOverPageable is pinned GiB/s / pageable GiB/s per direction
	// ("h2d", "d2h"), when the copy test ran.
	PinnedOverPageable map[string]float64 `json:"pinned_over_pageable,omitempty"`
}

// Copy returns the copy result of a memory kind and direction.
func (r BandwidthResult) Copy(mem, dir string) (CopyResult, bool) {
	for _, c := range r.Copies {
		if c.Memory == mem && c.Direction == dir {
			return c, true
		}
	}
	return CopyResult{}, false
}

// fillRatios sets PinnedOverPageable from the copy results.
func (r *BandwidthResult) fillRatios() {
	for _, dir := range []string{DirH2D, DirD2H} {
		p, ok1 := r.Copy(MemPinned, dir)
		g, ok2 := r.Copy(MemPageable, dir)
		if ok1 && ok2 && g.GiBps > 0 {
			if r.PinnedOverPageable == nil {
				r.PinnedOverPageable = map[string]float64{}
			}
			r.PinnedOverPageable[dir] = p.GiBps / g.GiBps
		}
	}
}

// gibps is bytes over seconds in GiB/s (0 for a zero time).
func gibps(bytes float64, sec float64) float64 {
	if sec <= 0 {
		return 0
	}
	return bytes / sec / GiB
}

// median of v (which it sorts); 0 for none.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// fillSpeedups sets each run's speedup over the 1-stream run (or over the
// first run when 1 stream was not timed).
func (o *OverlapResult) fillSpeedups() {
	if len(o.Runs) == 0 {
		return
	}
	base := o.Runs[0].Seconds
	for _, r := range o.Runs {
		if r.Streams == 1 {
			base = r.Seconds
			break
		}
	}
	for i := range o.Runs {
		if o.Runs[i].Seconds > 0 {
			o.Runs[i].Speedup = base / o.Runs[i].Seconds
		}
	}
}
