package pipeline

import (
	"errors"
	"fmt"
	"runtime"
	"time"
)

// Realtime are the capture side's real-time settings. The zero value changes
// nothing. They exist because a live ADC or sound card must be read on time:
// a capture loop that migrates between OS threads and cores, or that takes a
// page fault on a swapped-out ring slot, misses its deadline and drops a
// block.
type Realtime struct {
	// LockThread runs the producer goroutine (the one that calls
	// Source.Read) on one OS thread for the whole run
	// (runtime.LockOSThread), so per-thread kernel state (affinity,
	// scheduling policy set by a source) stays with the capture loop.
	LockThread bool
	// CPUs, if not empty, pins that thread to these CPU numbers
	// (sched_setaffinity, Linux only). It implies LockThread: affinity is
	// per thread, so it only means something on a locked one. The thread is
	// discarded when the run ends rather than returned to the Go scheduler
	// with the narrowed mask.
	CPUs []int
	// Mlock locks the ring's memory region into RAM (mlock, Linux only) for
	// the run and unlocks it afterwards, so no slot is paged out. It is
	// bounded by RLIMIT_MEMLOCK; see ErrMemlockLimit.
	Mlock bool
	// BusyPoll makes the consumer (the backend's side of the ring) spin
	// for up to BusyPollSpin waiting for the next block before it parks
	// until the producer wakes it. A parked consumer takes a futex wake,
	// tens of µs on a virtual machine (p50 56-82 µs against 1.26-1.55 µs
	// spinning: sigproc probe --paths cpu at 100 µs pacing on the 2-core
	// dev VM, docs/BENCHMARKS.md); spinning keeps a core busy while blocks flow. It is the
	// consumer's setting, so Enabled does not count it.
	BusyPoll bool
}

// BusyPollSpin is how long a busy-polling consumer spins for the next
// block before it parks: as long as the CUDA backend's consumer, which
// always spins.
const BusyPollSpin = 50 * time.Millisecond

// ErrMemlockLimit is wrapped by Run's error when the ring cannot be locked
// into memory because the locked-memory limit is too low or the process
// lacks the privilege (EPERM, ENOMEM, EAGAIN).
var ErrMemlockLimit = errors.New("pipeline: cannot lock the ring in memory")

// maxCPU bounds CPU numbers: the size of the kernel's default cpu_set_t
// (CPU_SETSIZE), which is what the affinity call takes.
const maxCPU = 1024

// Enabled reports whether any setting is on.
func (r Realtime) Enabled() bool { return r.LockThread || len(r.CPUs) > 0 || r.Mlock }

// lockThread reports whether the producer must lock its OS thread.
func (r Realtime) lockThread() bool { return r.LockThread || len(r.CPUs) > 0 }

// Validate reports whether the settings can be applied on this machine:
// every CPU must be >= 0, given once, and available to this process (on
// Linux, in its affinity mask; elsewhere CPUs and Mlock are not supported).
// Run calls it before starting anything.
func (r Realtime) Validate() error {
	for i, cpu := range r.CPUs {
		switch {
		case cpu < 0:
			return fmt.Errorf("pipeline: realtime CPU %d must be >= 0", cpu)
		case cpu >= maxCPU:
			return fmt.Errorf("pipeline: realtime CPU %d is beyond the %d CPUs an affinity mask can name", cpu, maxCPU)
		}
		for _, prev := range r.CPUs[:i] {
			if prev == cpu {
				return fmt.Errorf("pipeline: realtime CPU %d is given twice", cpu)
			}
		}
	}
	if len(r.CPUs) > 0 {
		if err := checkCPUs(r.CPUs); err != nil {
			return err
		}
	}
	if r.Mlock && !mlockSupported {
		return fmt.Errorf("pipeline: realtime mlock is not supported on %s", runtime.GOOS)
	}
	return nil
}

// startThread applies the thread settings to the calling goroutine, which
// must be the producer, and returns the function to call when it finishes.
func (r Realtime) startThread() (done func(), err error) {
	if !r.lockThread() {
		return func() {}, nil
	}
	runtime.LockOSThread()
	if len(r.CPUs) == 0 {
		return runtime.UnlockOSThread, nil
	}
	// From here on the goroutine exits still locked, so the runtime ends
	// the thread instead of reusing it with this narrowed mask. (The
	// runtime creates new threads from a clean template thread while the
	// calling one is locked, so none inherit the mask either.)
	if err := setAffinity(r.CPUs); err != nil {
		return func() {}, err
	}
	return func() {}, nil
}

// lockRing locks mem into RAM when Mlock is set and returns the function
// that unlocks it.
func (r Realtime) lockRing(mem []byte) (unlock func() error, err error) {
	if !r.Mlock || len(mem) == 0 {
		return func() error { return nil }, nil
	}
	return mlock(mem)
}

// formatCPUs writes a CPU list the way the kernel does: 0-3,6.
func formatCPUs(cpus []int) string {
	var b []byte
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, "%d", cpus[i])
		if j > i {
			b = fmt.Appendf(b, "-%d", cpus[j])
		}
		i = j + 1
	}
	return string(b)
}
