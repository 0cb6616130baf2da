// Command traceuse summarises a Go execution trace, such as `sigproc run
// --trace FILE` writes: for how much of the run 0, 1, 2, … goroutines ran
// at once, and how long each goroutine ran, named by the function it
// started in. A run on N cores that keeps fewer than N running shows it
// here (a barrier every block, a producer that cannot keep up), where
// `go tool trace` needs a browser. With -bin, it also prints the run as a
// timeline: in each interval, how many goroutines ran on average, and
// where goroutines most often stopped running (a state and the innermost
// function of this module), which tells a barrier from a spin that yields.
// A trace with regions (runtime/trace.StartRegion: a retune's steps in the
// cuda backend) also gets each region's count, p50, p99 and max, and how
// much of it its goroutine spent off a core, or overlapped a GC. With
// -gaps N, it lists the N longest times a goroutine was off a core (the
// runtime's own goroutines and probe's stall-trace writer, idle by
// design, left out), each
// with the state it left for (runnable: preempted or yielded, waiting for
// a core; waiting: blocked), the reason the runtime gave, and where it
// stopped: what a soak's stalls are, where the blocks over 100 µs come
// from.
//
//	sigproc run big.yaml --trace run.trace
//	go run ./bench/traceuse run.trace
//	go run ./bench/traceuse -bin 2ms run.trace
//	go run ./bench/traceuse -gaps 20 soak.trace
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/exp/trace"
)

func main() {
	bin := flag.Duration("bin", 0, "print a timeline in intervals of this length (0: none)")
	gaps := flag.Int("gaps", 0, "list the N longest times a goroutine was off a core (0: none)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: traceuse [-bin DURATION] [-gaps N] TRACE")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 || *bin < 0 || *gaps < 0 {
		flag.Usage()
		os.Exit(2)
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "traceuse:", err)
		os.Exit(1)
	}
	defer f.Close()
	s, err := summarise(f, *bin, *gaps)
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

	bin     time.Duration    // the timeline's interval, 0 for none
	running []float64        // by interval: goroutines running × ns
	stops   []map[string]int // by interval: stops by state and function

	regions map[string][]region // by region type, in the order they ended

	ngaps int   // how many of the longest gaps to keep (-gaps)
	gaps  []gap // the longest so far, longest first
}

// gap is one time a goroutine was off a core: from its leaving the
// running state to its next run.
type gap struct {
	g      trace.GoID
	at, ns float64 // start (ns from the trace's start) and length
	to     trace.GoState
	reason string // the runtime's reason for the stop ("preempted", "chan receive", …)
	where  string // the innermost function of this module on its stack, "-" for none
}

// stop is a goroutine's last exit from the running state.
type stop struct {
	at     trace.Time
	to     trace.GoState
	reason string
	where  string
}

// region is one runtime/trace region that ended: its length, the part of
// it its goroutine was not running (blocked, or ready but waiting for a
// core), and whether a GC mark phase or a stop-the-world overlapped it.
type region struct {
	ns, offCPU float64
	gc         bool
}

// openRegion is a region begun on a goroutine and not yet ended.
type openRegion struct {
	typ    string
	start  trace.Time
	offCPU float64
	gc     bool
}

// module prefixes the functions a stop is named by.
const module = "github.com/sigproc/sigproc/"

// summarise reads a trace and sums, over its span, the time each count of
// running goroutines lasted and each goroutine's running time, and with
// bin > 0 the same by interval.
func summarise(r io.Reader, bin time.Duration, ngaps int) (*summary, error) {
	tr, err := trace.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("read trace: %w", err)
	}
	s := &summary{atOnce: map[int]float64{}, byG: map[trace.GoID]float64{}, names: map[trace.GoID]string{}, bin: bin,
		regions: map[string][]region{}, ngaps: ngaps}
	stops := map[trace.GoID]stop{}       // off a core since (-gaps)
	since := map[trace.GoID]trace.Time{} // running since
	ready := map[trace.GoID]trace.Time{} // runnable since
	off := map[trace.GoID]trace.Time{}   // stopped running since (goroutines with open regions)
	open := map[trace.GoID][]*openRegion{}
	gcRanges := map[string]bool{} // GC mark phases and stops-the-world under way, by name and scope
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
		s.spread(float64(last-first), float64(now-first), running)
		last = now
		switch ev.Kind() {
		case trace.EventMetric:
			if m := ev.Metric(); m.Name == "/sched/gomaxprocs:threads" {
				s.procs = int(m.Value.Uint64())
			}
			continue
		case trace.EventRangeBegin, trace.EventRangeActive, trace.EventRangeEnd:
			if rg := ev.Range(); rg.Name == "GC concurrent mark phase" || strings.HasPrefix(rg.Name, "stop-the-world") {
				key := rg.Name + " " + rg.Scope.String()
				if ev.Kind() == trace.EventRangeEnd {
					delete(gcRanges, key)
				} else {
					gcRanges[key] = true
					for _, rs := range open {
						for _, r := range rs {
							r.gc = true
						}
					}
				}
			}
			continue
		case trace.EventRegionBegin:
			g := ev.Goroutine()
			open[g] = append(open[g], &openRegion{typ: ev.Region().Type, start: now, gc: len(gcRanges) > 0})
			continue
		case trace.EventRegionEnd:
			g := ev.Goroutine()
			rs := open[g]
			if len(rs) == 0 { // begun before the trace started
				continue
			}
			r := rs[len(rs)-1]
			open[g] = rs[:len(rs)-1]
			s.regions[r.typ] = append(s.regions[r.typ], region{ns: float64(now - r.start), offCPU: r.offCPU, gc: r.gc})
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
			if t, ok := off[g]; ok {
				for _, r := range open[g] {
					r.offCPU += float64(now - max(t, r.start))
				}
				delete(off, g)
			}
			if p, ok := stops[g]; ok && !idle(s.names[g]) {
				s.addGap(gap{g: g, at: float64(p.at - first), ns: float64(now - p.at), to: p.to, reason: p.reason, where: p.where})
				delete(stops, g)
			}
		case from == trace.GoRunning && to != trace.GoRunning:
			if t, ok := since[g]; ok {
				s.byG[g] += float64(now - t)
				delete(since, g)
				running--
			}
			if len(open[g]) > 0 {
				off[g] = now
			}
			if s.ngaps > 0 && to != trace.GoNotExist {
				stops[g] = stop{at: now, to: to, reason: st.Reason, where: innermost(ev.Stack())}
			}
			s.stopped(float64(now-first), to, ev.Stack())
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

// spread adds running goroutines over [a, b) (ns from the start) to the
// timeline's intervals.
func (s *summary) spread(a, b float64, running int) {
	if s.bin <= 0 {
		return
	}
	w := float64(s.bin)
	for a < b {
		k := int(a / w)
		e := min(b, float64(k+1)*w)
		for len(s.running) <= k {
			s.running = append(s.running, 0)
		}
		s.running[k] += float64(running) * (e - a)
		a = e
	}
}

// stopped counts a goroutine leaving the running state at t (ns from the
// start) for state to, named by the innermost function of this module on
// its stack.
func (s *summary) stopped(t float64, to trace.GoState, st trace.Stack) {
	if s.bin <= 0 {
		return
	}
	k := int(t / float64(s.bin))
	for len(s.stops) <= k {
		s.stops = append(s.stops, nil)
	}
	if s.stops[k] == nil {
		s.stops[k] = map[string]int{}
	}
	s.stops[k][to.String()+" "+innermost(st)]++
}

// innermost is the innermost function of this module on a stack, "-" for
// none.
func innermost(st trace.Stack) string {
	for f := range st.Frames() {
		if strings.HasPrefix(f.Func, module) {
			return strings.TrimPrefix(f.Func, module)
		}
	}
	return "-"
}

// idle says whether a goroutine named name is off a core by design, so
// that its gaps say nothing of a stall: the runtime's own, and the
// goroutine that waits to write sigproc probe's stall trace.
func idle(name string) bool {
	return strings.HasPrefix(name, "runtime") || strings.Contains(name, "stallTrace")
}

// addGap keeps p if it is among the ngaps longest.
func (s *summary) addGap(p gap) {
	if len(s.gaps) == s.ngaps && p.ns <= s.gaps[len(s.gaps)-1].ns {
		return
	}
	i := sort.Search(len(s.gaps), func(i int) bool { return s.gaps[i].ns < p.ns })
	s.gaps = slices.Insert(s.gaps, i, p)
	if len(s.gaps) > s.ngaps {
		s.gaps = s.gaps[:s.ngaps]
	}
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
	fmt.Fprint(w, "running at once, share of the time:")
	for _, k := range slices.Sorted(maps.Keys(s.atOnce)) {
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
	s.writeRegions(w)
	s.writeGaps(w)
	if s.bin <= 0 {
		return
	}
	fmt.Fprintf(w, "timeline by %v: goroutines running on average; stops, and the commonest (state, function)\n", s.bin)
	for k, ns := range s.running {
		top, most, all := "", 0, 0
		if k < len(s.stops) {
			for name, n := range s.stops[k] {
				all += n
				if n > most || n == most && name < top {
					top, most = name, n
				}
			}
		}
		fmt.Fprintf(w, "  %8.1f ms  %5.2f  %5d stops", float64(k)*float64(s.bin)/1e6, ns/float64(s.bin), all)
		if most > 0 {
			fmt.Fprintf(w, ", %d %s", most, top)
		}
		fmt.Fprintln(w)
	}
}

// writeRegions prints each region type's count and lengths, the time its
// goroutine spent off a core inside it, and how many overlapped a GC.
func (s *summary) writeRegions(w io.Writer) {
	if len(s.regions) == 0 {
		return
	}
	fmt.Fprintln(w, "regions (µs): count, p50, p99, max; off a core inside them p50, max; how many overlapped a GC")
	for _, t := range slices.Sorted(maps.Keys(s.regions)) {
		rs := s.regions[t]
		ns, offs := make([]float64, len(rs)), make([]float64, len(rs))
		gc := 0
		for i, r := range rs {
			ns[i], offs[i] = r.ns, r.offCPU
			if r.gc {
				gc++
			}
		}
		slices.Sort(ns)
		slices.Sort(offs)
		q := func(v []float64, p float64) float64 { return v[int(p*float64(len(v)-1))] / 1e3 }
		fmt.Fprintf(w, "  %-32s %6d  p50 %9.2f  p99 %9.2f  max %9.2f  off p50 %8.2f max %9.2f  gc %d\n",
			t, len(rs), q(ns, .5), q(ns, .99), q(ns, 1), q(offs, .5), q(offs, 1), gc)
	}
}

// writeGaps lists the longest times off a core (-gaps).
func (s *summary) writeGaps(w io.Writer) {
	if s.ngaps == 0 {
		return
	}
	fmt.Fprintf(w, "the %d longest times a goroutine was off a core: at (ms), µs, goroutine, left for, reason, where\n", len(s.gaps))
	for _, p := range s.gaps {
		name := s.names[p.g]
		if name == "" {
			name = "?"
		}
		reason := p.reason
		if reason == "" {
			reason = "-"
		}
		fmt.Fprintf(w, "  %10.3f  %10.1f  g%d %s  %s  %s  %s\n", p.at/1e6, p.ns/1e3, p.g, name, p.to, reason, p.where)
	}
}
