// Command traceuse summarises a Go execution trace, such as `sigproc run
// --trace FILE` writes: for how much of the run 0, 1, 2, … goroutines ran
// at once, and how long each goroutine ran, named by the function it
// started in. A run on N cores that keeps fewer than N running shows it
// here (a barrier every block, a producer that cannot keep up), where
// `go tool trace` needs a browser.
//
//	sigproc run big.yaml --trace run.trace
//	go run ./bench/traceuse run.trace
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"

	"golang.org/x/exp/trace"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: traceuse TRACE")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "traceuse:", err)
		os.Exit(1)
	}
	defer f.Close()
	s, err := summarise(f)
	if err != nil {
		fmt.Fprintln(os.Stderr, "traceuse:", err)
		os.Exit(1)
	}
	s.write(os.Stdout)
}

// summary is what a trace says about the cores' use.
type summary struct {
	span     float64         // ns from the first event to the last
	procs    int             // GOMAXPROCS (the last value seen)
	atOnce   map[int]float64 // goroutines running at once → ns
	byG      map[trace.GoID]float64
	names    map[trace.GoID]string
	runnable float64 // ns goroutines spent ready but not running, summed
}

// summarise reads a trace and sums, over its span, the time each count of
// running goroutines lasted and each goroutine's running time.
func summarise(r io.Reader) (*summary, error) {
	tr, err := trace.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("read trace: %w", err)
	}
	s := &summary{atOnce: map[int]float64{}, byG: map[trace.GoID]float64{}, names: map[trace.GoID]string{}}
	since := map[trace.GoID]trace.Time{} // running since
	ready := map[trace.GoID]trace.Time{} // runnable since
	var first, last trace.Time
	running := 0
	for {
		ev, err := tr.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read trace: %w", err)
		}
		now := ev.Time()
		if first == 0 {
			first, last = now, now
		}
		s.atOnce[running] += float64(now - last)
		last = now
		switch ev.Kind() {
		case trace.EventMetric:
			if m := ev.Metric(); m.Name == "/sched/gomaxprocs:threads" {
				s.procs = int(m.Value.Uint64())
			}
			continue
		case trace.EventStateTransition:
		default:
			continue
		}
		st := ev.StateTransition()
		if st.Resource.Kind != trace.ResourceGoroutine {
			continue
		}
		g := st.Resource.Goroutine()
		from, to := st.Goroutine()
		if s.names[g] == "" {
			s.names[g] = outermost(st.Stack)
			if s.names[g] == "" && from == trace.GoRunning {
				s.names[g] = outermost(ev.Stack())
			}
		}
		if t, ok := ready[g]; ok && to != trace.GoRunnable {
			s.runnable += float64(now - t)
			delete(ready, g)
		}
		if to == trace.GoRunnable {
			ready[g] = now
		}
		switch {
		case to == trace.GoRunning && from != trace.GoRunning:
			since[g] = now
			running++
		case from == trace.GoRunning && to != trace.GoRunning:
			if t, ok := since[g]; ok {
				s.byG[g] += float64(now - t)
				delete(since, g)
				running--
			}
		}
	}
	for g, t := range since { // still running at the end
		s.byG[g] += float64(last - t)
	}
	s.span = float64(last - first)
	if s.span <= 0 {
		return nil, errors.New("the trace holds no time")
	}
	return s, nil
}

// outermost is the function a stack started in, "" for none.
func outermost(st trace.Stack) string {
	name := ""
	for f := range st.Frames() {
		name = f.Func
	}
	return name
}

// mean is the goroutines running at once, averaged over the span.
func (s *summary) mean() float64 {
	var m float64
	for k, ns := range s.atOnce {
		m += float64(k) * ns
	}
	return m / s.span
}

func (s *summary) write(w io.Writer) {
	fmt.Fprintf(w, "trace: %.1f ms, GOMAXPROCS %d, on average %.2f goroutines running\n", s.span/1e6, s.procs, s.mean())
	ks := make([]int, 0, len(s.atOnce))
	for k := range s.atOnce {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	fmt.Fprint(w, "running at once, share of the time:")
	for _, k := range ks {
		if p := 100 * s.atOnce[k] / s.span; p >= 0.05 {
			fmt.Fprintf(w, "  %d: %.1f %%", k, p)
		}
	}
	fmt.Fprintf(w, "\nready but waiting for a core, summed over goroutines: %.1f ms\n", s.runnable/1e6)
	gs := make([]trace.GoID, 0, len(s.byG))
	for g := range s.byG {
		gs = append(gs, g)
	}
	sort.Slice(gs, func(i, j int) bool { return s.byG[gs[i]] > s.byG[gs[j]] })
	fmt.Fprintln(w, "running time by goroutine:")
	for i, g := range gs {
		if i == 20 || s.byG[g] < 0.001*s.span {
			break
		}
		name := s.names[g]
		if name == "" {
			name = "?"
		}
		fmt.Fprintf(w, "  %9.2f ms  %5.1f %%  g%d %s\n", s.byG[g]/1e6, 100*s.byG[g]/s.span, g, name)
	}
}
