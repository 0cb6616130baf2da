package metrics

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/sigproc/sigproc/backend/cpu"
	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/pipeline"
)

// gatedSource yields total samples of ones, then io.EOF. Its second read
// waits until the sink holds the first block and the sink's first write
// waits for EOF, so under PolicyDrop the drop count is exact (as in the
// pipeline tests) and under PolicyBlock nothing is lost.
type gatedSource struct {
	total, pos int
	reads      int
	entered    chan struct{} // closed by the sink's first write
	eof        chan struct{} // closed at EOF
	gate       bool
	closeEOF   bool // close eof without gating
}

// failingBackend fails on its failAt-th Next call (1-based), once the source
// is at EOF: every block is published by then, so the loss is exact.
type failingBackend struct {
	pipeline.Backend
	calls, failAt int
	eof           chan struct{}
}

func (b *failingBackend) Next(ctx context.Context) (pipeline.Output, error) {
	b.calls++
	if b.calls == b.failAt {
		<-b.eof
		return pipeline.Output{}, errors.New("kernel fault")
	}
	return b.Backend.Next(ctx)
}

func (s *gatedSource) Read(ctx context.Context, dst []float32) (int, error) {
	if s.gate && s.reads == 1 {
		<-s.entered
	}
	s.reads++
	n := min(len(dst), s.total-s.pos)
	for i := range dst[:n] {
		dst[i] = 1
	}
	s.pos += n
	if n < len(dst) {
		if s.gate || s.closeEOF {
			close(s.eof)
		}
		return n, io.EOF
	}
	return n, nil
}

type gatedSink struct {
	once    sync.Once
	entered chan struct{}
	eof     chan struct{}
	gate    bool
}

func (s *gatedSink) Write([]float32) error {
	if s.gate {
		s.once.Do(func() { close(s.entered); <-s.eof })
	}
	return nil
}

// scrape GETs /metrics and returns the unlabelled and labelled sample
// values by their full series name (e.g. `sigproc_backend_info{backend="cpu"}`).
func scrape(t *testing.T, addr string) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	vals := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("bad exposition line %q: %v", line, err)
		}
		vals[line[:i]] = v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return vals
}

func TestScrapeEqualsRunStats(t *testing.T) {
	const block, slots = 64, 4
	tests := []struct {
		name    string
		samples int
		policy  pipeline.Policy
		gate    bool
		drops   uint64
		slots   int
		failAt  int    // the backend fails on this Next call; 0 = never
		filterB uint64 // blocks dropped at the filter
	}{
		{"block policy, partial last block", 64*50 + 10, pipeline.PolicyBlock, false, 0, slots, 0, 0},
		// Block 0 is held by the sink, blocks 1..4 fill the ring, the
		// other 45 blocks (the last one partial) are dropped.
		{"drop policy", 64*49 + 10, pipeline.PolicyDrop, true, 45, slots, 0, 0},
		// All 20 blocks fit in the ring; the backend outputs 7 and fails.
		{"backend fails", 64 * 20, pipeline.PolicyBlock, false, 0, 32, 8, 13},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entered, eof := make(chan struct{}), make(chan struct{})
			src := &gatedSource{total: tt.samples, entered: entered, eof: eof, gate: tt.gate, closeEOF: tt.failAt > 0}
			snk := &gatedSink{entered: entered, eof: eof, gate: tt.gate}
			fir, err := filter.NewFIR([]float32{0.5, 0.5}, false, block)
			if err != nil {
				t.Fatal(err)
			}
			be := cpu.NewBackend(fir)
			if tt.failAt > 0 {
				be = &failingBackend{Backend: be, failAt: tt.failAt, eof: eof}
			}
			m := New(be.Name())
			srv, err := Serve("127.0.0.1:0", m.Handler())
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Shutdown(context.Background())

			st, err := pipeline.Run(context.Background(), src, be, snk,
				pipeline.Config{BlockSize: block, Slots: tt.slots, Policy: tt.policy}, m.Instrument(pipeline.Options{}))
			if tt.failAt == 0 && err != nil {
				t.Fatal(err)
			}
			if tt.failAt > 0 && (err == nil || !strings.Contains(err.Error(), "kernel fault")) {
				t.Fatalf("err %v, want the backend's failure", err)
			}
			m.Update(st)
			if st.DroppedBlocks != tt.drops {
				t.Fatalf("run dropped %d blocks, want %d (%v)", st.DroppedBlocks, tt.drops, st)
			}
			if st.DroppedFilterBlocks != tt.filterB || st.DroppedFilterSamples != tt.filterB*block {
				t.Fatalf("run dropped %d blocks at the filter, want %d (%v)", st.DroppedFilterBlocks, tt.filterB, st)
			}
			got := scrape(t, srv.Addr())
			want := map[string]uint64{
				"sigproc_samples_in_total":              st.SamplesIn,
				"sigproc_samples_filtered_total":        st.SamplesFiltered,
				"sigproc_samples_written_total":         st.SamplesWritten,
				"sigproc_blocks_total":                  st.Blocks,
				"sigproc_dropped_capture_blocks_total":  st.DroppedBlocks,
				"sigproc_dropped_capture_samples_total": st.DroppedSamples,
				"sigproc_dropped_filter_blocks_total":   st.DroppedFilterBlocks,
				"sigproc_dropped_filter_samples_total":  st.DroppedFilterSamples,
				"sigproc_gaps_total":                    st.Gaps,
				// The names before the capture/filter split.
				"sigproc_samples_out_total":                       st.SamplesOut,
				"sigproc_dropped_blocks_total":                    st.DroppedBlocks,
				"sigproc_dropped_samples_total":                   st.DroppedSamples,
				"sigproc_block_latency_seconds_count":             st.Blocks, // one observation per block
				`sigproc_backend_info{backend="cpu"}`:             1,
				`sigproc_block_latency_seconds_bucket{le="+Inf"}`: st.Blocks,
			}
			for name, w := range want {
				v, ok := got[name]
				if !ok {
					t.Errorf("%s missing from /metrics", name)
				} else if v != float64(w) {
					t.Errorf("%s = %v, want %d", name, v, w)
				}
			}
			if st.SamplesIn != uint64(tt.samples) {
				t.Errorf("samples in %d, want %d", st.SamplesIn, tt.samples)
			}
			if st.DroppedSamples+st.DroppedFilterSamples+st.SamplesFiltered != st.SamplesIn {
				t.Errorf("loss accounting does not add up: %v", st)
			}
			if _, ok := got["go_goroutines"]; !ok {
				t.Error("go runtime metrics missing")
			}
		})
	}
}

func TestServeReportsPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, err = Serve(ln.Addr().String(), New("cpu").Handler())
	if !errors.Is(err, syscall.EADDRINUSE) || !strings.Contains(err.Error(), "metrics: listen on "+ln.Addr().String()) {
		t.Fatalf("err = %v, want address in use for %s", err, ln.Addr())
	}
}

func TestShutdownClosesListener(t *testing.T) {
	srv, err := Serve("127.0.0.1:0", New("cpu").Handler())
	if err != nil {
		t.Fatal(err)
	}
	addr := srv.Addr()
	if got := scrape(t, addr); got[`sigproc_backend_info{backend="cpu"}`] != 1 {
		t.Fatalf("backend info missing before shutdown")
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatalf("second Shutdown: %v", err)
	}
	if resp, err := http.Get("http://" + addr + "/metrics"); err == nil {
		resp.Body.Close()
		t.Fatal("GET after Shutdown succeeded")
	}
	// The port is free again: a new server can bind it.
	srv2, err := Serve(addr, New("cpu").Handler())
	if err != nil {
		t.Fatalf("rebind %s: %v", addr, err)
	}
	srv2.Shutdown(context.Background())
}

func TestInstrumentChainsHooks(t *testing.T) {
	m := New("cpu")
	var progress, blocks int
	opts := m.Instrument(pipeline.Options{
		Progress: func(pipeline.Stats) { progress++ },
		OnBlock:  func(pipeline.Output, int64) { blocks++ },
	})
	opts.Progress(pipeline.Stats{SamplesIn: 7, SamplesWritten: 5, SamplesOut: 5})
	opts.OnBlock(pipeline.Output{Timestamp: 1000}, 3000)
	if progress != 1 || blocks != 1 {
		t.Errorf("previous hooks called %d, %d times, want 1, 1", progress, blocks)
	}
	if m.in.Load() != 7 || m.out.Load() != 5 {
		t.Errorf("snapshot not stored: in %d out %d", m.in.Load(), m.out.Load())
	}
}

func TestObserveBlockLatency(t *testing.T) {
	m := New("cpu")
	m.ObserveBlock(pipeline.Output{Timestamp: 1_000_000}, 1_000_000+3_000_000) // 3 ms
	m.ObserveBlock(pipeline.Output{Timestamp: 5}, 2)                           // negative: clamped to 0
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "sigproc_block_latency_seconds" {
			continue
		}
		h := mf.GetMetric()[0].GetHistogram()
		if h.GetSampleCount() != 2 || h.GetSampleSum() != 0.003 {
			t.Fatalf("count %d sum %v, want 2, 0.003", h.GetSampleCount(), h.GetSampleSum())
		}
		return
	}
	t.Fatal("histogram not gathered")
}

func BenchmarkObserveBlock(b *testing.B) {
	m := New("cpu")
	out := pipeline.Output{Timestamp: 1000}
	b.ReportAllocs()
	for i := range b.N {
		m.ObserveBlock(out, int64(2000+i))
	}
}

func BenchmarkUpdate(b *testing.B) {
	m := New("cpu")
	b.ReportAllocs()
	for i := range b.N {
		m.Update(pipeline.Stats{SamplesIn: uint64(i)})
	}
}
