//go:build linux

package pipeline

import (
	"bufio"
	"context"
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// probeSource wraps countSource and records, from inside Read (the producer
// goroutine), the thread it runs on, that thread's affinity and the
// process's locked memory.
type probeSource struct {
	countSource
	tids   map[int]bool
	masks  []unix.CPUSet
	vmLck  []int64 // kB
	errors []error
}

func (s *probeSource) Read(ctx context.Context, dst []float32) (int, error) {
	if s.tids == nil {
		s.tids = map[int]bool{}
	}
	s.tids[unix.Gettid()] = true
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		s.errors = append(s.errors, err)
	}
	s.masks = append(s.masks, set)
	kb, err := vmLckKB()
	if err != nil {
		s.errors = append(s.errors, err)
	}
	s.vmLck = append(s.vmLck, kb)
	return s.countSource.Read(ctx, dst)
}

// vmLckKB reads the process's locked memory from /proc/self/status.
func vmLckKB() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmLck:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, errors.New("no VmLck in /proc/self/status")
}

// allowedCPUs is the process's affinity mask as a list.
func allowedCPUs(t *testing.T) []int {
	t.Helper()
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	var cpus []int
	for c := 0; c < maxCPU; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

func TestRunPinsCaptureThread(t *testing.T) {
	allowed := allowedCPUs(t)
	cpu := allowed[0] // CPU 0 unless a cpuset excludes it
	for _, rt := range []Realtime{
		{LockThread: true, CPUs: []int{cpu}},
		{CPUs: []int{cpu}}, // implies LockThread
	} {
		// Slots 2 and many blocks make the producer wait on the
		// consumer, parking the goroutine, so an unlocked one would
		// likely resume on another thread.
		src := &probeSource{countSource: countSource{total: 64 * 64, ch: 1}}
		st, err := Run(context.Background(), src, &scaleBackend{}, &sliceSink{},
			Config{BlockSize: 64, Slots: 2, Realtime: rt}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if st.SamplesOut != 64*64 {
			t.Fatalf("stats %+v", st)
		}
		if len(src.errors) > 0 {
			t.Fatal(src.errors[0])
		}
		for i, m := range src.masks {
			if m.Count() != 1 || !m.IsSet(cpu) {
				t.Fatalf("%+v: read %d ran with affinity of %d CPUs (cpu %d set: %v), want only CPU %d",
					rt, i, m.Count(), cpu, m.IsSet(cpu), cpu)
			}
		}
		if len(src.tids) != 1 {
			t.Fatalf("%+v: reads ran on %d threads, want 1", rt, len(src.tids))
		}
	}
	// The test goroutine's own thread keeps the full mask.
	if got := allowedCPUs(t); len(got) != len(allowed) {
		t.Fatalf("affinity of the test's thread changed to %v", got)
	}
}

func TestRunLockThreadKeepsOneThread(t *testing.T) {
	src := &probeSource{countSource: countSource{total: 64 * 64, ch: 1}}
	_, err := Run(context.Background(), src, &scaleBackend{}, &sliceSink{},
		Config{BlockSize: 64, Slots: 2, Realtime: Realtime{LockThread: true}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(src.tids) != 1 {
		t.Fatalf("reads ran on %d threads, want 1", len(src.tids))
	}
	if n := src.masks[0].Count(); n != len(allowedCPUs(t)) {
		t.Fatalf("LockThread alone narrowed affinity to %d CPUs", n)
	}
}

func TestRealtimeValidateRejectsUnavailableCPU(t *testing.T) {
	allowed := allowedCPUs(t)
	bad := -1
	for c := 0; c < maxCPU && bad < 0; c++ {
		if !contains(allowed, c) {
			bad = c
		}
	}
	if bad < 0 {
		t.Skip("every CPU number is in the affinity mask")
	}
	// On an unrestricted machine this is runtime.NumCPU().
	if len(allowed) == allowed[len(allowed)-1]+1 && bad != runtime.NumCPU() {
		t.Fatalf("first unavailable CPU %d, NumCPU %d", bad, runtime.NumCPU())
	}
	err := Realtime{CPUs: []int{allowed[0], bad}}.Validate()
	want := "pipeline: realtime CPU " + strconv.Itoa(bad) + " is not available to this process (allowed: " + formatCPUs(allowed) + ")"
	if err == nil || err.Error() != want {
		t.Fatalf("Validate() = %v, want %q", err, want)
	}
	if err := (Realtime{CPUs: allowed}).Validate(); err != nil {
		t.Fatalf("all allowed CPUs rejected: %v", err)
	}
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// checkMemlockMessage asserts the error names the limit and how to raise it.
func checkMemlockMessage(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, ErrMemlockLimit) {
		t.Fatalf("error %v does not wrap ErrMemlockLimit", err)
	}
	for _, want := range []string{"RLIMIT_MEMLOCK", "ulimit -l", "LimitMEMLOCK=", "mlock 4", "lock the ring"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not mention %q", err, want)
		}
	}
}

func TestRunMlockLocksRingDuringRun(t *testing.T) {
	before, err := vmLckKB()
	if err != nil {
		t.Skip(err)
	}
	const block, slots = 256, 4
	l := Layout{BlockSize: block, Channels: 1, Slots: slots}
	src := &probeSource{countSource: countSource{total: block * 8, ch: 1}}
	st, err := Run(context.Background(), src, &scaleBackend{}, &sliceSink{},
		Config{BlockSize: block, Slots: slots, Realtime: Realtime{Mlock: true}}, Options{})
	if err != nil {
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOMEM) || errors.Is(err, unix.EAGAIN) {
			checkMemlockMessage(t, err)
			t.Skipf("mlock not allowed under this RLIMIT_MEMLOCK (message checked): %v", err)
		}
		t.Fatal(err)
	}
	if st.SamplesOut != block*8 || len(src.errors) > 0 {
		t.Fatalf("stats %+v, probe errors %v", st, src.errors)
	}
	page := int64(os.Getpagesize())
	minKB := (int64(l.Size()) + page - 1) / page * page / 1024
	for i, kb := range src.vmLck {
		if kb-before < minKB {
			t.Fatalf("read %d: VmLck %d kB, was %d kB before the run; want %d kB more for the %d-byte ring",
				i, kb, before, minKB, l.Size())
		}
	}
	after, err := vmLckKB()
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Fatalf("VmLck %d kB after the run, %d kB before: ring not unlocked", after, before)
	}
}

// TestRunMlockOverLimit lowers the soft RLIMIT_MEMLOCK to 0 so mlock fails
// for an unprivileged process, and checks the message.
func TestRunMlockOverLimit(t *testing.T) {
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_MEMLOCK, &old); err != nil {
		t.Fatal(err)
	}
	low := unix.Rlimit{Cur: 0, Max: old.Max}
	if err := unix.Setrlimit(unix.RLIMIT_MEMLOCK, &low); err != nil {
		t.Skipf("cannot lower RLIMIT_MEMLOCK: %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Setrlimit(unix.RLIMIT_MEMLOCK, &old); err != nil {
			t.Errorf("restore RLIMIT_MEMLOCK: %v", err)
		}
	})
	src := &countSource{total: 1024, ch: 1}
	_, err := Run(context.Background(), src, &scaleBackend{}, &sliceSink{},
		Config{BlockSize: 256, Slots: 4, Realtime: Realtime{Mlock: true}}, Options{})
	if err == nil {
		t.Skip("mlock ignored the limit (CAP_IPC_LOCK, e.g. root)")
	}
	checkMemlockMessage(t, err)
	if !strings.Contains(err.Error(), "RLIMIT_MEMLOCK is 0 bytes") {
		t.Fatalf("error %q does not report the current limit", err)
	}
	if src.reads != 0 {
		t.Fatal("source was read after mlock failed")
	}
}

func TestMlockError(t *testing.T) {
	tests := []struct {
		err   error
		limit bool
	}{
		{unix.EPERM, true},
		{unix.ENOMEM, true},
		{unix.EAGAIN, true},
		{unix.EINVAL, false},
	}
	for _, tt := range tests {
		err := mlockError(4096, tt.err)
		if !errors.Is(err, tt.err) {
			t.Errorf("%v: error %v does not wrap the errno", tt.err, err)
		}
		if tt.limit {
			checkMemlockMessage(t, err)
		} else if errors.Is(err, ErrMemlockLimit) {
			t.Errorf("%v: %v blames the limit", tt.err, err)
		}
	}
}
