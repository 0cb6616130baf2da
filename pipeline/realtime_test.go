package pipeline

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestRealtimeValidateRejectsBadCPUs(t *testing.T) {
	tests := []struct {
		name string
		rt   Realtime
		want string
	}{
		{"negative", Realtime{CPUs: []int{-1}}, "CPU -1 must be >= 0"},
		{"negative after good", Realtime{LockThread: true, CPUs: []int{0, -3}}, "CPU -3 must be >= 0"},
		{"beyond mask size", Realtime{CPUs: []int{maxCPU}}, "beyond the 1024 CPUs"},
		{"duplicate", Realtime{CPUs: []int{0, 0}}, "CPU 0 is given twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.rt.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestRealtimeZeroValueIsOff(t *testing.T) {
	var rt Realtime
	if rt.Enabled() || rt.lockThread() {
		t.Fatal("zero Realtime reports settings on")
	}
	if err := rt.Validate(); err != nil {
		t.Fatal(err)
	}
	// LockThread alone is portable.
	if err := (Realtime{LockThread: true}).Validate(); err != nil {
		t.Fatal(err)
	}
	if !(Realtime{CPUs: []int{0}}).lockThread() {
		t.Fatal("CPUs must imply LockThread")
	}
}

// TestRunRejectsBadRealtimeBeforeStart checks that a bad setting fails the
// run before the backend is started or the source read.
func TestRunRejectsBadRealtimeBeforeStart(t *testing.T) {
	for _, rt := range []Realtime{
		{CPUs: []int{-1}},
		{LockThread: true, CPUs: []int{1 << 20}},
		{CPUs: []int{0, 0}},
	} {
		src := &countSource{total: 64, ch: 1}
		be := &scaleBackend{}
		_, err := Run(context.Background(), src, be, &sliceSink{}, Config{BlockSize: 16, Slots: 4, Realtime: rt}, Options{})
		if err == nil || !strings.HasPrefix(err.Error(), "pipeline: realtime CPU") {
			t.Fatalf("%+v: Run error = %v, want a realtime CPU error", rt, err)
		}
		if be.ring != nil || src.reads != 0 {
			t.Fatalf("%+v: backend started or source read before the check", rt)
		}
	}
}

func TestRunLockThreadDeliversEverything(t *testing.T) {
	const total = 1000
	src := &countSource{total: total, ch: 1}
	snk := &sliceSink{}
	st, err := Run(context.Background(), src, &scaleBackend{}, snk,
		Config{BlockSize: 64, Slots: 2, Realtime: Realtime{LockThread: true}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st.SamplesOut != total || len(snk.got) != total {
		t.Fatalf("stats %+v, sink got %d values", st, len(snk.got))
	}
}

func TestRealtimeUnsupportedOffLinux(t *testing.T) {
	if runtime.GOOS == "linux" {
		t.Skip("CPUs and Mlock are supported on linux")
	}
	for _, rt := range []Realtime{{CPUs: []int{0}}, {Mlock: true}} {
		err := rt.Validate()
		if err == nil || !strings.Contains(err.Error(), "not supported on "+runtime.GOOS) {
			t.Fatalf("%+v: Validate() = %v, want not supported on %s", rt, err, runtime.GOOS)
		}
	}
}

func TestFormatCPUs(t *testing.T) {
	tests := []struct {
		in   []int
		want string
	}{
		{nil, ""},
		{[]int{2}, "2"},
		{[]int{0, 1, 2, 3}, "0-3"},
		{[]int{0, 1, 2, 3, 6, 8, 9}, "0-3,6,8-9"},
	}
	for _, tt := range tests {
		if got := formatCPUs(tt.in); got != tt.want {
			t.Errorf("formatCPUs(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestRunBusyPoll: BusyPoll makes the ring's consumer spin for
// BusyPollSpin before it parks, and never shortens a longer spin a
// backend set itself (the CUDA backend's).
func TestRunBusyPoll(t *testing.T) {
	tests := []struct {
		name     string
		busy     bool
		own      time.Duration // the backend's own spin
		wantSpin time.Duration
	}{
		{"off", false, 0, 0},
		{"on", true, 0, BusyPollSpin},
		{"backend spins longer", true, time.Second, time.Second},
		{"backend spins, off", false, time.Millisecond, time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			be := &spinBackend{own: tt.own}
			_, err := Run(context.Background(), &countSource{total: 64 * 8, ch: 1}, be, &sliceSink{},
				Config{BlockSize: 64, Slots: 2, Realtime: Realtime{BusyPoll: tt.busy}}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if be.ring.spin != tt.wantSpin {
				t.Fatalf("ring spins %v, want %v", be.ring.spin, tt.wantSpin)
			}
		})
	}
}

// spinBackend is scaleBackend with a spin of its own set at Start.
type spinBackend struct {
	scaleBackend
	own time.Duration
}

func (b *spinBackend) Start(ctx context.Context, l Layout) (*Ring, error) {
	r, err := b.scaleBackend.Start(ctx, l)
	if r != nil {
		r.SetSpin(b.own)
	}
	return r, err
}
