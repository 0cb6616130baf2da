package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/sigproc/sigproc/stage"
)

// splitChains are the chains TestSplitBitIdentical runs: every kind, each
// fir method (direct, overlap-save; plain and decimating), and chains.
func splitChains(r *rand.Rand, complex bool) map[string]stage.Chain {
	mk := func(st ...stage.Stage) stage.Chain {
		return stage.Chain{SampleRate: 1e6, Complex: complex, Stages: st}
	}
	method := func(s stage.Stage, m string) stage.Stage { s.Method = m; return s }
	return map[string]stage.Chain{
		"shift":              mk(shiftStage(123456)),
		"shift-fractional":   mk(shiftStage(-1234.567)),
		"fir33-direct":       mk(firStage(randTaps(r, 33), 1)),
		"fir129-auto":        mk(firStage(randTaps(r, 129), 1)),
		"fir1025-fft":        mk(method(firStage(randTaps(r, 1025), 1), "fft")),
		"fir300-direct":      mk(method(firStage(randTaps(r, 300), 1), "direct")),
		"fir129÷8":           mk(firStage(randTaps(r, 129), 8)),
		"fir257÷3-fft":       mk(method(firStage(randTaps(r, 257), 3), "fft")),
		"resample":           mk(stage.NewResample(randTaps(r, 61), 3, 2)),
		"resample4:6":        mk(stage.NewResample(randTaps(r, 97), 4, 6)),
		"resample1:5":        mk(stage.NewResample(randTaps(r, 40), 1, 5)),
		"resample7:1":        mk(stage.NewResample(randTaps(r, 5), 7, 1)),
		"shift+fir÷8":        mk(shiftStage(-250000), firStage(randTaps(r, 129), 8)),
		"shift+fir+resample": mk(shiftStage(1000), firStage(randTaps(r, 129), 1), stage.NewResample(randTaps(r, 31), 2, 5)),
		"fir÷4+fir-fft":      mk(firStage(randTaps(r, 65), 4), method(firStage(randTaps(r, 513), 1), "fft")),
	}
}

// runBlocks runs x through a chain of c on workers goroutines in blocks
// of the given sizes, applying retunes[k] before block k, and returns
// the output and the blocks of a stage that were cut into segments.
func runBlocks(t *testing.T, c stage.Chain, workers, maxBlock int, x []float32, sizes []int, retunes map[int][]stage.Retune) ([]float32, int64) {
	t.Helper()
	p, err := newChain(c, maxBlock, workers)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	out := feed(t, p, maxBlock, x, sizes, retunes)
	var cuts int64
	if p.split != nil {
		cuts = p.split.cuts
	}
	return out, cuts
}

// feed runs x through p in blocks of the given sizes, applying retunes[k]
// before block k, and returns the output.
func feed(t *testing.T, p *Chain, maxBlock int, x []float32, sizes []int, retunes map[int][]stage.Retune) []float32 {
	t.Helper()
	c := p.desc
	v := channels(c.Complex)
	dst := make([]float32, p.MaxOut(maxBlock)*c.OutChannels()*channels(c.OutComplex()))
	var out []float32
	at := 0
	for k, n := range sizes {
		for _, rt := range retunes[k] {
			pr, err := p.Prepare(rt.Index, rt.Stage)
			if err != nil {
				t.Fatal(err)
			}
			p.Apply(pr)
		}
		got, err := p.Process(dst, x[at*v:(at+n)*v])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, dst[:got]...)
		at += n
	}
	return out
}

// TestSplitBitIdentical: a chain on 2, 3 or 4 goroutines, its blocks cut
// into segments, outputs the same float32 bits as on one, for every kind
// and chain, real and complex, with random block sizes and retunes
// landing mid-stream.
func TestSplitBitIdentical(t *testing.T) {
	for _, complex := range []bool{false, true} {
		r := rand.New(rand.NewPCG(29, 2))
		for name, c := range splitChains(r, complex) {
			t.Run(fmt.Sprintf("%s/complex=%v", name, complex), func(t *testing.T) { checkSplit(t, r, c) })
		}
	}
}

// retuneAt are the blocks checkSplit retunes before.
var retuneAt = []int{5, 9}

// checkSplit runs c on 1 goroutine and on 2, 3 and 4, in random blocks
// of up to 64 Ki samples, with retunes of every retunable stage before
// the blocks retuneAt, and fails unless every output is bit-identical
// and, where a kind splits, some block was cut into segments.
func checkSplit(t *testing.T, r *rand.Rand, c stage.Chain) {
	t.Helper()
	const maxBlock = 1 << 16
	v := channels(c.Complex)
	var sizes []int
	total := 0
	for len(sizes) < 14 {
		n := 1 + r.IntN(maxBlock)
		if len(sizes)%3 == 0 {
			n = maxBlock - r.IntN(64)
		}
		sizes = append(sizes, n)
		total += n
	}
	x := randTaps(r, total*v)
	retunes := map[int][]stage.Retune{}
	for i, s := range c.Stages {
		if _, ok := s.Def().(stage.Resumer); !ok {
			continue
		}
		for _, k := range retuneAt {
			s2 := s
			s2.FrequencyHz = s.FrequencyHz / 3
			if len(s.Taps) > 0 {
				s2.Taps = randTaps(r, len(s.Taps)+k)
			}
			retunes[k] = append(retunes[k], stage.Retune{Index: i, Stage: s2})
		}
	}
	want, _ := runBlocks(t, c, 1, maxBlock, x, sizes, retunes)
	for _, w := range []int{2, 3, 4} {
		got, cuts := runBlocks(t, c, w, maxBlock, x, sizes, retunes)
		if len(got) != len(want) {
			t.Fatalf("%d workers: %d values, want %d", w, len(got), len(want))
		}
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%d workers: value %d is %v, one worker %v", w, i, got[i], want[i])
			}
		}
		splittable := false
		for _, s := range c.Stages {
			_, ok := s.Def().(stage.Splitter)
			splittable = splittable || ok
		}
		if splittable && cuts == 0 {
			t.Errorf("%d workers: no block was cut into segments", w)
		}
	}
}

// TestSoloCutBitIdentical: on one goroutine, blocks of a view (the
// source's memory, checked by the chain) long enough to hold soloSegments
// segments are checked and filtered a segment at a time, and the output
// is bit-identical to filtering each block whole, for every kind and
// chain, real and complex, with retunes landing mid-stream; the check
// sees every value once.
func TestSoloCutBitIdentical(t *testing.T) {
	const maxBlock = soloSegments * SegmentFrames
	for _, complex := range []bool{false, true} {
		r := rand.New(rand.NewPCG(31, 7))
		for name, c := range splitChains(r, complex) {
			t.Run(fmt.Sprintf("%s/complex=%v", name, complex), func(t *testing.T) {
				v := channels(c.Complex)
				sizes := []int{maxBlock, maxBlock - 77, 1 + r.IntN(maxBlock), maxBlock, 3 * SegmentFrames, maxBlock}
				total := 0
				for _, n := range sizes {
					total += n
				}
				x := randTaps(r, total*v)
				retunes := map[int][]stage.Retune{}
				for i, s := range c.Stages {
					if _, ok := s.Def().(stage.Resumer); ok {
						s2 := s
						s2.FrequencyHz = s.FrequencyHz / 3
						retunes[3] = append(retunes[3], stage.Retune{Index: i, Stage: s2})
					}
				}
				// The reference filters every block whole: no splitter.
				ref, err := newChain(c, maxBlock, 1)
				if err != nil {
					t.Fatal(err)
				}
				ref.split.close()
				ref.split = nil
				want := feed(t, ref, maxBlock, x, sizes, retunes)
				ref.Close()

				p, err := newChain(c, maxBlock, 1)
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close()
				if p.split == nil || p.split.pool != nil {
					t.Fatalf("one goroutine, blocks of %d: splitter %v", maxBlock, p.split)
				}
				p.useMapped(unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), 4*len(x)))
				var checked atomic.Int64
				p.checkViews(func(v []float32) error { checked.Add(int64(len(v))); return nil })
				got := feed(t, p, maxBlock, x, sizes, retunes)
				if checked.Load() != int64(len(x)) {
					t.Errorf("the check saw %d values of %d", checked.Load(), len(x))
				}
				if len(got) != len(want) {
					t.Fatalf("%d values, want %d", len(got), len(want))
				}
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("value %d is %v, whole blocks %v", i, got[i], want[i])
					}
				}
				if _, ok := c.Stages[0].Def().(stage.Splitter); ok && p.split.cuts == 0 {
					t.Error("no block was cut into segments")
				}
			})
		}
	}
}

// TestSplitFollowsGOMAXPROCS: NewChain cuts blocks for GOMAXPROCS
// goroutines, and the result does not depend on it.
func TestSplitFollowsGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	r := rand.New(rand.NewPCG(3, 4))
	c := stage.Chain{SampleRate: 1e6, Complex: true, Stages: []stage.Stage{shiftStage(1e5), firStage(randTaps(r, 129), 1)}}
	x := randTaps(r, 2*3*65536)
	var want []float32
	for _, procs := range []int{1, 2, 4} {
		runtime.GOMAXPROCS(procs)
		p, err := NewChain(c, 1<<16)
		if err != nil {
			t.Fatal(err)
		}
		if (p.split != nil) != (procs > 1) || (p.split != nil && p.split.pool == nil) {
			t.Fatalf("GOMAXPROCS %d: splitter %v", procs, p.split != nil)
		}
		dst := make([]float32, 2*p.MaxOut(1<<16))
		var out []float32
		for at := 0; at < len(x); at += 2 << 16 {
			n, err := p.Process(dst, x[at:at+2<<16])
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, dst[:n]...)
		}
		p.Close()
		if want == nil {
			want = out
			continue
		}
		for i := range out {
			if math.Float32bits(out[i]) != math.Float32bits(want[i]) {
				t.Fatalf("GOMAXPROCS %d: value %d differs", procs, i)
			}
		}
	}
}

// TestSplitProcessAllocs: cutting blocks into segments allocates nothing.
func TestSplitProcessAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	c := stage.Chain{SampleRate: 1e6, Complex: true, Stages: []stage.Stage{shiftStage(1e5), firStage(randTaps(r, 129), 1), firStage(randTaps(r, 33), 4)}}
	for _, tc := range []struct {
		name           string
		workers, block int
		views          bool
	}{
		{"4 goroutines", 4, 1 << 16, false},
		{"one goroutine cutting views", 1, soloSegments * SegmentFrames, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := newChain(c, tc.block, tc.workers)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			x := randTaps(r, 2*tc.block)
			if tc.views {
				p.useMapped(unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), 4*len(x)))
				p.checkViews(func([]float32) error { return nil })
			}
			dst := make([]float32, 2*p.MaxOut(tc.block))
			p.Process(dst, x) // starts the pool's goroutines
			if a := testing.AllocsPerRun(20, func() { p.Process(dst, x) }); a != 0 {
				t.Errorf("Process allocates %v times", a)
			}
			if p.split.cuts == 0 {
				t.Error("no block was cut")
			}
		})
	}
}

// BenchmarkSplitFIR is the 129-tap complex FIR on 64 Ki blocks, on 1 and
// on GOMAXPROCS goroutines, and with the blocks taken in place from the
// source's memory (mapped: every goroutine guarded against its faults).
func BenchmarkSplitFIR(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, taps := range []int{33, 129, 1025} {
		c := stage.Chain{SampleRate: 1e6, Complex: true, Stages: []stage.Stage{firStage(randTaps(r, taps), 1)}}
		for _, w := range []int{1, defaultWorkers()} {
			for _, view := range []string{"read", "mapped", "checked"} {
				b.Run(fmt.Sprintf("taps=%d/workers=%d/%s", taps, w, view), func(b *testing.B) {
					benchSplitFIR(b, r, c, w, view)
				})
			}
		}
	}
}

// benchSplitFIR runs c on w goroutines on blocks read into the ring
// (view "read"), taken in place from the source's memory ("mapped"), and
// taken in place and checked for NaN on the way ("checked", each segment
// its part, as a ScanLeaver's views are).
func benchSplitFIR(b *testing.B, r *rand.Rand, c stage.Chain, w int, view string) {
	p, err := newChain(c, 1<<16, w)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	x := randTaps(r, 2<<16)
	if view != "read" {
		p.useMapped(unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), 4*len(x)))
	}
	var nans atomic.Int64
	if view == "checked" {
		p.checkViews(func(v []float32) error { // the exponent's carry into the sign: NaN or ±Inf
			var acc uint32
			for _, f := range v {
				acc |= math.Float32bits(f)&0x7f800000 + 0x00800000
			}
			if acc&0x80000000 != 0 {
				nans.Add(1)
			}
			return nil
		})
	}
	dst := make([]float32, 2<<16)
	b.SetBytes(8 << 16)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Process(dst, x); err != nil {
			b.Fatal(err)
		}
	}
}
