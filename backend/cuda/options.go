package cuda

import (
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/sigproc/sigproc/filter"
)

// ErrNotBuilt is returned by NewBackend in a binary built without the cuda tag.
var ErrNotBuilt = errors.New("gpu: this sigproc was built without CUDA support; build it with `make cuda` (go build -tags cuda) and run build/sigproc-cuda")

// Transport is how blocks reach the GPU.
type Transport string

const (
	// TransportAuto picks explicit for a chain of stages; for a plain FIR,
	// zero-copy on integrated GPUs and for blocks up to ZeroCopyMaxBlock
	// samples on discrete ones, where its kernel fits the shared memory
	// (block, channels and taps), explicit otherwise.
	TransportAuto Transport = "auto"
	// TransportZeroCopy is the persistent kernel polling mapped host memory.
	TransportZeroCopy Transport = "zero-copy"
	// TransportExplicit copies each block from pinned memory, launches the
	// kernel and copies the result back.
	TransportExplicit Transport = "explicit"
	// TransportExplicitPageable is TransportExplicit from ordinary
	// (pageable) Go memory, to show what pinning buys.
	TransportExplicitPageable Transport = "explicit-pageable"
)

// ZeroCopyMaxBlock is the largest block (samples) for which TransportAuto
// chooses zero-copy on a discrete GPU. On the H200 (PCIe Gen5) zero-copy
// won at 1024 samples and lost from 4096 up, where one polling thread
// block cannot keep enough reads in flight; see docs/BENCHMARKS.md.
const ZeroCopyMaxBlock = 2048

// ParseTransport checks a transport name.
func ParseTransport(s string) (Transport, error) {
	switch t := Transport(s); t {
	case TransportAuto, TransportZeroCopy, TransportExplicit, TransportExplicitPageable:
		return t, nil
	case "":
		return TransportAuto, nil
	}
	return "", fmt.Errorf("gpu: unknown transport %q (want auto, zero-copy, explicit or explicit-pageable)", s)
}

// Options configure the CUDA backend.
type Options struct {
	Device    int
	Transport Transport
	// MaxPinned is the pinned host memory the backend may take, bytes;
	// 0 sizes it from the host (PinnedBudget).
	MaxPinned int64
	// HostMemory is the host memory the default pinned budget is sized
	// from, bytes; 0 reads it (ReadHostMemory).
	HostMemory    int64
	Watchdog      time.Duration // a kernel whose heartbeat stalls this long is an error; 0 = 2 s
	WriteCombined bool          // map the input ring write-combined (host writes only)
	// NoDemote skips the CLDEMOTE of each written input line (zero-copy),
	// for an A/B: a 2048-sample complex block's 512 lines took ~4 µs to
	// demote on an H100 host, a 256-sample block's 32 saved 0.23 µs.
	NoDemote bool
	// PinSource lets the explicit transport take blocks in place from a
	// source whose samples lie in memory (a mapped float32 recording),
	// pinning it window by window, instead of having them copied into the
	// ring (see UseRegion).
	PinSource bool
	// PinWindow is the size of the windows a source pinned in place is
	// pinned in, bytes (0: half the bytes of the blocks in flight, at most
	// DefaultPinWindow; see pinWindow), and PinThreads the threads
	// that pin them (0: DefaultPinThreads); see planRegion.
	PinWindow  int64
	PinThreads int
	// ReadShare is the share of the windows of a source taken in place
	// that the CPU reads into the ring instead, as stored, spread evenly,
	// so that the CPU's copies and the pinning add up: 0 to 1, nil for
	// DefaultReadShare (DefaultReadShareEncoded for stored integers).
	ReadShare *float64
	PTXDir    string // load fir.ptx, batch.ptx, chain.ptx and ols.ptx from this directory instead of the embedded PTX
	// Method is how the explicit transport convolves: direct (the batch
	// kernel), fft (overlap-save with cuFFT, OLSFIR) or auto (fft from
	// FFTCrossoverTaps up). The zero-copy kernel is always direct.
	Method  filter.Method
	StallAt int64 // fault injection: the kernel hangs at this block (1-based); 0 = never
	Timing  bool  // record GPU-side per-block times (zero-copy), see ComputeTimes
	Split   int   // zero-copy: lanes per output pair (1, 2, 4, ... 32); 0 = automatic
	Log     zerolog.Logger
}

func (o Options) validate() error {
	if o.PinWindow < 0 || o.PinThreads < 0 {
		return fmt.Errorf("gpu: pin window %d and pin threads %d must not be negative", o.PinWindow, o.PinThreads)
	}
	if s := o.ReadShare; s != nil && !(*s >= 0 && *s <= 1) {
		return fmt.Errorf("gpu: read share %v is not in 0..1", *s)
	}
	if o.Split < 0 || o.Split > 32 || o.Split&(o.Split-1) != 0 {
		return fmt.Errorf("gpu: split %d is not a power of two in 1..32", o.Split)
	}
	return nil
}

func (o Options) watchdog() time.Duration {
	if o.Watchdog <= 0 {
		return 2 * time.Second
	}
	return o.Watchdog
}

// ErrWatchdog is wrapped by the error a backend returns when the kernel
// stops making progress.
var ErrWatchdog = errors.New("gpu: watchdog: kernel made no progress")

// ErrPinnedLimit is wrapped by the error returned when a configuration needs
// more pinned memory than the budget allows (PinnedBudget); nothing is
// allocated.
var ErrPinnedLimit = errors.New("gpu: pinned memory limit")

// FallbackEnv is set, with the reason, when the cuda binary found CUDA
// unusable at start-up and re-executed the CPU-only binary (gpu/cuinit).
const FallbackEnv = "SIGPROC_CUDA_UNAVAILABLE"
