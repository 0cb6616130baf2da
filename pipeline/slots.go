package pipeline

import "math"

// Default ring sizing (issue 29, docs/THROUGHPUT.md "Feeding the CPU"). A
// file or other unpaced source needs only enough slots for the producer
// and the consumer to overlap: more slots buy nothing but a larger
// footprint, which falls out of the core's cache and, before the
// prefault, paid the kernel's first-touch zeroing on the sample path. A
// live source needs slack in time: the blocks it captures while the
// consumer is late.
const (
	// RingBudgetBytes is the slot data a default ring for an unpaced
	// source holds: the measured best on one core for 64 Ki- and 256 Ki-
	// sample float blocks.
	RingBudgetBytes = 1 << 20
	// ViewBudgetBytes is the slot data a default ring holds where its
	// blocks may be views of the source's memory (RingSource.Views): a
	// publish then writes a slot's header only, so the slots cost a wake
	// less per block and no cache. On one core a 1-tap run of 64 Ki- and
	// 256 Ki-sample views reached 1.00 and 0.98 of the best ring_slots
	// with it, against 0.90 and 0.89 with RingBudgetBytes
	// (docs/THROUGHPUT.md).
	ViewBudgetBytes = 16 << 20
	// MinUnpacedSlots lets producer and consumer overlap on two cores
	// whatever the block size.
	MinUnpacedSlots = 4
	// MaxUnpacedSlots bounds the slots of small blocks: past it the
	// per-block hand-off is already amortised.
	MaxUnpacedSlots = 1024
	// LiveSlots is the slack a live source always keeps: 64 blocks, the
	// ring every release before issue 29 had (configs/jetson-alsa.yaml:
	// 6.4 s of 100 ms blocks).
	LiveSlots = 64
	// LiveSlackSeconds is the time a default ring for a live source can
	// absorb when 64 blocks are shorter than that (small blocks at a high
	// rate), within LiveMaxBytes.
	LiveSlackSeconds = 1.0
	// LiveMaxBytes caps the slot data the seconds of slack may add.
	LiveMaxBytes = 64 << 20
	// maxSlots is the largest ring the defaults give (config's MaxRingSlots).
	maxSlots = 1 << 16
)

// RingSource is what the default ring size depends on besides the block.
type RingSource struct {
	// Live is a paced source (an ADC, a sound card, paced synthetic
	// samples): it delivers blocks at Rate whatever the consumer does.
	Live bool
	// Rate is the source's frame rate in Hz (used when Live).
	Rate float64
	// Frames is how many frames the run will read at most, when known
	// (a file's length, a bound on the run); 0 = unknown. A ring is never
	// larger than the blocks that fill it.
	Frames int64
	// MinSlots is a backend's floor, applied before the Frames cap.
	MinSlots int
	// MaxSlots, when > 0, is a backend's ceiling on a live source's
	// slack, applied before MinSlots; it never takes the ring below
	// LiveSlots, and one not a power of two counts as the power of two
	// below it. A backend whose source writes each
	// block into a slot the device reads in place (the CUDA zero-copy
	// transport) finds a slot that has left the cache too slow to write
	// within a short block's period.
	MaxSlots int
	// Views says the backend may take the blocks in place from the
	// source's memory (a CPU backend, a file stored as float32), which
	// Run knows only once the backend has started: the ring is sized
	// from ViewBudgetBytes, and Run lowers its depth to RingBudgetBytes's
	// when the blocks are read into it after all. Set it only for a
	// backend that uses Layout.Slots to size the ring alone, and no
	// RegionSharer: the depth changes under it after Start.
	Views bool
}

// DefaultSlots returns the ring depth for blocks of blockSize frames of
// values float32 values when ring_slots is not given: a power of two, at
// least 2. An unpaced source gets RingBudgetBytes of slots (between
// MinUnpacedSlots and MaxUnpacedSlots); a live source at least LiveSlots
// and up to LiveSlackSeconds of blocks (or src.MaxSlots); ViewBudgetBytes replaces
// RingBudgetBytes where src.Views.
func DefaultSlots(blockSize, values int, src RingSource) int {
	blockSize, values = max(blockSize, 1), max(values, 1)
	slotBytes := int64(blockSize) * int64(values) * 4
	var slots int64
	if src.Live {
		slots = LiveSlots
		if src.Rate > 0 && !math.IsInf(src.Rate, 0) {
			want := math.Ceil(LiveSlackSeconds * src.Rate / float64(blockSize))
			for slots < maxSlots && float64(slots) < want && 2*slots*slotBytes <= LiveMaxBytes &&
				(src.MaxSlots <= 0 || 2*slots <= int64(src.MaxSlots)) {
				slots *= 2
			}
		}
	} else {
		budget := int64(RingBudgetBytes)
		if src.Views {
			budget = ViewBudgetBytes
		}
		slots = MinUnpacedSlots
		for slots < MaxUnpacedSlots && 2*slots*slotBytes <= budget {
			slots *= 2
		}
	}
	slots = max(slots, min(int64(src.MinSlots), maxSlots))
	if src.Frames > 0 {
		blocks := (src.Frames + int64(blockSize) - 1) / int64(blockSize)
		fit := int64(2)
		for fit < blocks {
			fit *= 2
		}
		slots = min(slots, fit)
	}
	return int(slots)
}
