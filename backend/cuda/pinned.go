package cuda

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/sigproc/sigproc/internal/cudrv"
	"github.com/sigproc/sigproc/pipeline"
)

// Pinned (page-locked) host memory is taken from the host's RAM and never
// swapped: the ring and the output buffers of the explicit transport, the
// mapped rings of zero-copy, the windows of a source pinned in place. The
// budget for it follows the block and the host: a configuration takes
// what its blocks need, up to a share of the host's memory.

// HostMemory is the memory of the machine the backend runs on, what the
// default pinned budget is sized from.
type HostMemory struct {
	// Bytes is the memory the process may use: MemTotal, or a lower
	// cgroup limit (ReadHostMemory); 0 when unknown.
	Bytes int64
	// Integrated is a GPU that shares that memory (a Jetson): the
	// device's own allocations come out of it too, so pinned memory gets
	// half the share it gets beside a discrete GPU.
	Integrated bool
}

const (
	// pinnedMaxDefault caps the default budget, whatever the host: 16 GiB
	// holds a 64-slot ring of 4 Mi complex samples four times over.
	pinnedMaxDefault = 16 << 30
	// pinnedUnknownDefault is the default budget when the host's memory
	// cannot be read.
	pinnedUnknownDefault = 1 << 30
)

// limits returns the default budget (without cuda.max_pinned_mb) and the
// most any setting may pin (0: no bound known). Beside a discrete GPU:
// a quarter of the memory by default, half at most; on an integrated GPU,
// an eighth and a quarter.
func (h HostMemory) limits() (def, ceiling int64) {
	if h.Bytes <= 0 {
		return pinnedUnknownDefault, 0
	}
	div := int64(2)
	if h.Integrated {
		div = 4
	}
	ceiling = h.Bytes / div
	return min(ceiling/2, pinnedMaxDefault), ceiling
}

func (h HostMemory) String() string {
	kind := "host"
	if h.Integrated {
		kind = "host (shared with its integrated GPU)"
	}
	return fmt.Sprintf("%s with %d MiB of memory", kind, h.Bytes>>20)
}

// PinnedBudget returns the pinned host memory a backend may take when its
// configuration needs need bytes: configured (cuda.max_pinned_mb, in
// bytes) when it is set, else a default sized from the host's memory
// (HostMemory.limits), which leaves what the blocks do not need to a
// source pinned in place. It refuses, naming the setting to change, a
// need above the budget and a configured limit above what the host
// allows. Nothing is pinned: the backend calls it before the run starts.
func PinnedBudget(need, configured int64, host HostMemory) (int64, error) {
	def, ceiling := host.limits()
	mib := func(n int64) int64 { return (n + (1<<20 - 1)) >> 20 }
	smaller := "lower block_size or ring_slots"
	switch {
	case configured > 0 && ceiling > 0 && configured > ceiling:
		return 0, fmt.Errorf("%w: cuda.max_pinned_mb is %d MiB, more than this %s allows (%d MiB); lower cuda.max_pinned_mb",
			ErrPinnedLimit, configured>>20, host, ceiling>>20)
	case ceiling > 0 && need > ceiling:
		return 0, fmt.Errorf("%w: this configuration needs %d MiB of pinned host memory, more than this %s allows (%d MiB); %s",
			ErrPinnedLimit, mib(need), host, ceiling>>20, smaller)
	case configured > 0 && need > configured:
		return 0, fmt.Errorf("%w: this configuration needs %d MiB of pinned host memory, the limit (cuda.max_pinned_mb) is %d MiB; raise cuda.max_pinned_mb to at least %d or leave it unset, or %s",
			ErrPinnedLimit, mib(need), configured>>20, mib(need), smaller)
	case configured > 0:
		return configured, nil
	case need > def && ceiling > 0:
		return 0, fmt.Errorf("%w: this configuration needs %d MiB of pinned host memory, more than the default budget of %d MiB on this %s; set cuda.max_pinned_mb to at least %d (this host allows up to %d), or %s",
			ErrPinnedLimit, mib(need), def>>20, host, mib(need), ceiling>>20, smaller)
	case need > def:
		return 0, fmt.Errorf("%w: this configuration needs %d MiB of pinned host memory, more than the default budget of %d MiB (this host's memory is unknown); set cuda.max_pinned_mb to at least %d, or %s",
			ErrPinnedLimit, mib(need), def>>20, mib(need), smaller)
	}
	return def, nil
}

// RegionBudget returns the pinned memory a run whose budget is budget
// (PinnedBudget, for a configured cuda.max_pinned_mb of configured bytes)
// may take in all with a source pinned in place: the budget when it was
// configured, else the most the host allows (HostMemory.limits: half its
// memory, a quarter beside an integrated GPU). A recording's pages are
// the page cache's, in memory already: pinning them takes no memory, it
// only keeps them there while they are copied, so a file that fits is
// pinned whole rather than window by window.
func RegionBudget(budget, configured int64, host HostMemory) int64 {
	if _, ceiling := host.limits(); configured == 0 && ceiling > budget {
		return ceiling
	}
	return budget
}

// ReadHostMemory returns the memory this process may use: MemTotal from
// /proc/meminfo, lowered to the cgroup's memory.max when one is set; 0
// when neither can be read (not Linux).
func ReadHostMemory() int64 {
	var total int64
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		total = parseMemTotal(string(b))
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if lim := parseCgroupMax(string(b)); lim > 0 && (total == 0 || lim < total) {
			total = lim
		}
	}
	return total
}

// parseMemTotal returns /proc/meminfo's MemTotal in bytes, 0 if absent.
func parseMemTotal(meminfo string) int64 {
	for line := range strings.Lines(meminfo) {
		rest, ok := strings.CutPrefix(line, "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb <= 0 || kb > 1<<50 {
			return 0
		}
		return kb << 10
	}
	return 0
}

// parseCgroupMax returns a cgroup v2 memory.max in bytes, 0 for "max"
// (no limit) or anything unreadable.
func parseCgroupMax(s string) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// explicitGeometry returns the blocks the explicit transport keeps in
// flight for a ring of slots slots: at most half the ring, so the producer
// always has free slots to read into, and at most 8. On an H100 host
// (2026-12-06, a 16 GiB cf32 file, three rounds alternating), 16 in
// flight ran 8-12 % slower than 8 with the default 32 slots: the readers
// then had 16 slots to fill, not 24, and bound the run.
func explicitGeometry(slots int) (inFlight int) {
	return max(1, min(8, slots/2))
}

// transportPinned is the pinned host memory transport t (resolved, not
// auto) takes for a plain fir of ntaps taps, or a chain with at most
// maxOut output values per block, on l's blocks, on a device with optin
// bytes of shared memory per block, with the zero-copy timing array when
// timing: computed before anything is allocated, so a configuration that
// would exceed the budget is refused up front.
func transportPinned(t Transport, l pipeline.Layout, ntaps, optin int, timing bool, maxOut int) int64 {
	switch t {
	case TransportZeroCopy:
		return zeroCopyPinned(l, ntaps, optin, timing, maxOut)
	case TransportExplicit:
		return explicitPinned(l, maxOut)
	}
	return 2 * cudrv.PageAlign(BatchMaxTaps*4) // explicit-pageable: a retunable fir's tap staging only
}

// zeroCopyPinned is the pinned memory the zero-copy transport takes: the
// control block, the input and output rings of tagged words (outVals
// output values a block at most), the retune parameter block for the most
// taps the kernel keeps history for, and the timing array when timing.
func zeroCopyPinned(l pipeline.Layout, ntaps, optin int, timing bool, outVals int) int64 {
	words, outWords := int64(evenWords(l)), int64((outVals+1)&^1)
	hcap := retuneCapacity(ntaps, l.BlockSize, l.Channels, optin)
	n := cudrv.PageAlign(ctrlSize) + cudrv.PageAlign(int64(l.Slots)*words*8) + cudrv.PageAlign(int64(l.Slots)*outWords*8) +
		cudrv.PageAlign(int64(paramFloats(hcap))*4)
	if timing {
		n += timesCap * timesWords * 8
	}
	return n
}

// explicitPinned is the pinned memory the explicit transport takes: the
// ring and one output buffer per buffer set, for a filter with at most
// outVals output values per block (more than its input when it upsamples),
// and a retunable FIR's two tap staging buffers.
func explicitPinned(l pipeline.Layout, outVals int) int64 {
	inFlight := explicitGeometry(l.Slots)
	return cudrv.PageAlign(int64(l.Size())) + int64(inFlight+1)*cudrv.PageAlign(int64(outVals)*4) +
		2*cudrv.PageAlign(BatchMaxTaps*4)
}

// A source pinned in place (Options.PinSource) is pinned in windows, on
// the backend's goroutine between its submissions (pinnedRegion): a window
// must pin within the time the blocks in flight take to copy (8 blocks of
// 16 MiB: 2.5 ms at 50 GiB/s). Pinning costs about 0.2 ms a call plus
// 1 ms per 38 MiB on the H200 host, so larger windows pin faster: 64 MiB
// ones ran a 16 GiB file at 3.85 GS/s with 16 MiB blocks, 32 MiB ones at
// 3.1 with 8 MiB blocks. A second thread pinning at once gained nothing.
// Where the blocks in flight hold less (a cs8 file's blocks are 4 MiB as
// stored: 32 MiB in flight, so a 16 MiB window), the window shrinks with
// them (pinWindow).
const (
	// DefaultPinWindow is the largest window when Options.PinWindow is 0.
	DefaultPinWindow = 64 << 20
	// DefaultPinThreads is the pinning threads when Options.PinThreads is 0.
	DefaultPinThreads = 1
	// DefaultReadShare is Options.ReadShare's default for float32
	// values, and DefaultReadShareEncoded for stored integers, which the
	// CPU reads without scanning them. On the H200 hosts, 8 GiB of page
	// cache reached the GPU at 40-50 GiB/s with every other or every third
	// window read by the CPU, against 25-44 pinning every window and 26-49
	// reading every one (bench/feedprobe.cu, hybrid). sigproc ran a 16 GiB
	// cf32 file at 4.4-4.9 GS/s with 0.5 (0.67 and 0.75: 4.0-4.1, 0:
	// 3.5-4.2). Stored integers are fewer bytes for the CPU to copy
	// (a cs8 sample is 2), and on an H100 host (2026-12-06, two rounds
	// alternating) a 16 GiB cs8 file into a 1024-channel bank ran at
	// 20.7-21.2 GS/s with every window read, 20.1-20.3 with 0.9,
	// 17.7-18.1 with 0.75 and 10.7-11.4 with 0: every pin stalls the
	// copies queued meanwhile (the driver's lock, see pinnedRegion), and
	// the readers alone keep PCIe at 80 % of pinned H2D.
	DefaultReadShare        = 0.5
	DefaultReadShareEncoded = 1
	// minWindow is the smallest window worth pinning: below it the
	// per-call cost of pinning dominates.
	minWindow = 16 << 20
)

// pinWindow is the window a region is pinned in when Options.PinWindow
// is 0, for blocks in flight that hold inFlight bytes as stored: half of
// them, so that the copies queued before a pin outlast it, within
// minWindow..DefaultPinWindow. A 16 GiB cs8 file through shift + FIR ÷8,
// 8 blocks of 8 MiB in flight, ran at 15.1-15.8 GS/s with 32 MiB windows
// against 12.1-13.2 with 64 MiB ones, on the same H200 host.
func pinWindow(inFlight int64) int64 {
	return max(minWindow, min(DefaultPinWindow, inFlight/2)) &^ 4095
}

// regionPlan is how a source's memory of some size is pinned: windows of
// window bytes, up to ahead of them pinned (or being pinned) at once, on
// threads threads; keep when the whole region fits the room, so that no
// window is unpinned before the run ends.
type regionPlan struct {
	window  int64
	ahead   int
	threads int
	keep    bool
	// share of the windows is read into the ring rather than pinned
	// (read).
	share float64
}

// read reports whether window w is read into the ring, not pinned: those
// where the share's running count steps, spread evenly (0.5: every
// other, from the second).
func (p regionPlan) read(w int) bool {
	return p.share > 0 && math.Floor(float64(w+1)*p.share) > math.Floor(float64(w)*p.share)
}

// pinned counts the windows in [from, to) that are pinned, not read.
func (p regionPlan) pinned(from, to int) int {
	n := 0
	for w := from; w < to; w++ {
		if !p.read(w) {
			n++
		}
	}
	return n
}

// inPlace reports whether the n bytes at offset off touch no window that
// is read.
func (p regionPlan) inPlace(off, n int64) bool {
	if p.share <= 0 {
		return true
	}
	for w := off / p.window; w <= (off+max(n, 1)-1)/p.window; w++ {
		if p.read(int(w)) {
			return false
		}
	}
	return true
}

// planRegion plans the pinning of a region of size bytes within room
// bytes of the pinned budget, with windows of window bytes (0: the
// default) on threads threads (0: the default). Windows are at least
// minWindow, page-aligned, and small enough that twice the threads fit
// the room (so the next windows pin while the copies read the current
// ones); ok is false when they cannot be.
func planRegion(size, room, window int64, threads int) (regionPlan, bool) {
	if window <= 0 {
		window = DefaultPinWindow
	}
	if threads <= 0 {
		threads = DefaultPinThreads
	}
	window = min(window, max(size, minWindow), room/int64(2*threads)) &^ 4095
	if window < minWindow || size <= 0 {
		return regionPlan{}, false
	}
	p := regionPlan{window: window, threads: threads, ahead: int(room / window)}
	if n := (size + window - 1) / window; n*window <= room {
		p.keep, p.ahead = true, int(n)
	}
	return p, true
}
