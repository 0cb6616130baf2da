package cuda

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/sigproc/sigproc/backend/cpu"
	"github.com/sigproc/sigproc/capture"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/sink"
	"github.com/sigproc/sigproc/stage"
)

// countersRun is what a run through runCounters leaves: the summary's
// counters (times cleared, they differ run to run) and the SigMF meta.
type countersRun struct {
	stats pipeline.Stats
	meta  []byte
}

// runCounters runs the chain c over x through be in blocks of block
// samples into a SigMF recording, as `sigproc run` does (pipeline.Run,
// then the sink told the total input), and returns the counters and the
// recording's metadata.
func runCounters(t *testing.T, be pipeline.Backend, c stage.Chain, x []float32, block int) countersRun {
	t.Helper()
	src, err := capture.NewMemory(x, capture.Info{SampleRate: c.SampleRate, Complex: c.Complex, NumChannels: c.Channels})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	format := "rf32_le"
	if c.OutComplex() {
		format = "cf32_le"
	}
	base := filepath.Join(t.TempDir(), "out")
	snk, err := sink.CreateSigMF(base, sink.SigMFMeta{Datatype: format, SampleRate: c.OutRate(), InputRate: c.SampleRate,
		Channels: c.ChannelCount(), Description: c.String()})
	if err != nil {
		t.Fatal(err)
	}
	st, err := pipeline.Run(context.Background(), src, be, snk,
		pipeline.Config{BlockSize: block, Complex: c.Complex, Channels: c.Channels, OutComplex: c.OutComplex(), Slots: 8},
		pipeline.Options{})
	if cerr := be.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatalf("%s: %v", be.Name(), err)
	}
	snk.EndInput(st.SamplesIn)
	if err := snk.Close(); err != nil {
		t.Fatal(err)
	}
	meta, err := os.ReadFile(snk.MetaPath())
	if err != nil {
		t.Fatal(err)
	}
	// Times differ from run to run, and only a GPU backend measures its
	// device's (the counters are what is compared).
	st.Startup, st.Wall, st.SourceBusy, st.SinkBusy, st.Device = 0, 0, 0, 0, nil
	return countersRun{st, meta}
}

// compareCounters fails unless got (a GPU-side run) reports what want
// (the CPU backend) does: the same counters and a byte-equal SigMF meta.
func compareCounters(t *testing.T, name string, got, want countersRun) {
	t.Helper()
	// The CPU backend takes a source in memory in place; the test's
	// backend reads it into the ring.
	g, w := got.stats, want.stats
	g.BlocksInPlace, w.BlocksInPlace = 0, 0
	if g != w {
		t.Errorf("%s: counters\n got  %v\n want %v (cpu)", name, got.stats, want.stats)
	}
	if string(got.meta) != string(want.meta) {
		t.Errorf("%s: SigMF meta differs from the CPU's (%d bytes against %d):\n%s\nwant\n%s", name, len(got.meta), len(want.meta), got.meta, want.meta)
	}
}

// outputBackend runs the CPU chain and hands each block on through
// blockOutput, as the GPU transports do: it checks the accounting the
// transports share, without a GPU.
type outputBackend struct {
	chain *cpu.Chain
	ring  *pipeline.Ring
	l     pipeline.Layout
	out   []float32
}

func (b *outputBackend) Name() string { return "output" }

func (b *outputBackend) Start(_ context.Context, l pipeline.Layout) (*pipeline.Ring, error) {
	r, err := pipeline.NewRing(pipeline.AlignedBytes(l.Size()), l)
	d := b.chain.Desc()
	b.ring, b.l = r, l
	b.out = make([]float32, b.chain.MaxOut(l.BlockSize)*pipeline.FrameValues(d.Channels, d.OutComplex()))
	return r, err
}

func (b *outputBackend) Next(ctx context.Context) (pipeline.Output, error) {
	blk, err := b.ring.Next(ctx)
	if err != nil {
		return pipeline.Output{}, err
	}
	n, err := b.chain.Process(b.out, blk.Samples)
	b.ring.Release()
	if err != nil {
		return pipeline.Output{}, err
	}
	return blockOutput(blk.Seq, blk.Timestamp, len(blk.Samples), b.l.Channels, b.out[:n]), nil
}

func (b *outputBackend) Close() error { b.chain.Close(); return nil }

// countersCase is a chain and a stream of total samples in blocks of
// block; the chains change the rate, the format, both, or neither.
type countersCase struct {
	name  string
	chain stage.Chain
	total int
	block int
}

func countersCases() []countersCase {
	r := rand.New(rand.NewPCG(26, 1))
	taps := func(n int) []float32 { return noise(r, n) }
	shift := stage.Stage{Kind: stage.KindShift, FrequencyHz: -25e6}
	fir := func(n, m int) stage.Stage { return stage.Stage{Kind: stage.KindFIR, Taps: taps(n), Decimate: m} }
	res := stage.Stage{Kind: stage.KindResample, Taps: taps(48), Up: 3, Down: 2}
	ch := func(cplx bool, channels int, s ...stage.Stage) stage.Chain {
		return stage.Chain{SampleRate: 200e6, Complex: cplx, Channels: channels, Stages: s}
	}
	return []countersCase{
		// The user run of the GPU-suite issue: shift + fir 129 ÷8, complex.
		{"shift+fir129/8 complex", ch(true, 0, shift, fir(129, 8)), 1 << 18, 1 << 13},
		{"fir129/8 real, short last block", ch(false, 0, fir(129, 8)), 100003, 4096},
		{"shift real to complex", ch(false, 0, shift), 50000, 4096},
		{"resample 3/2 complex", ch(true, 0, res), 50001, 4096},
		{"fir64 complex", ch(true, 0, fir(64, 1)), 50000, 4096},
		{"fir64 4 channels", ch(false, 4, fir(64, 1)), 50000, 1024},
	}
}

func noise(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(2*r.Float64() - 1)
	}
	return x
}

func (tc countersCase) input() []float32 {
	return noise(rand.New(rand.NewPCG(26, 2)), tc.total*pipeline.FrameValues(tc.chain.Channels, tc.chain.Complex))
}

// cpuCounters is the reference: the CPU backend's run of tc.
func cpuCounters(t *testing.T, tc countersCase) countersRun {
	t.Helper()
	be, err := cpu.New(tc.chain, tc.block)
	if err != nil {
		t.Fatal(err)
	}
	return runCounters(t, be, tc.chain, tc.input(), tc.block)
}

// TestBlockOutputCountsLikeCPU: what the GPU transports hand the pipeline
// for a block (blockOutput) gives the CPU backend's summary counters and
// SigMF meta, whatever the chain does to the rate and format. Before, a
// ÷8 chain counted 7/8 of its input as filter drops and wrote a capture
// segment and a gap annotation for every block.
func TestBlockOutputCountsLikeCPU(t *testing.T) {
	for _, tc := range countersCases() {
		want := cpuCounters(t, tc)
		ch, err := cpu.NewChain(tc.chain, tc.block)
		if err != nil {
			t.Fatal(err)
		}
		got := runCounters(t, &outputBackend{chain: ch}, tc.chain, tc.input(), tc.block)
		compareCounters(t, tc.name, got, want)
		st := got.stats
		if st.SamplesFiltered != st.SamplesIn || st.DroppedFilterSamples != 0 || st.Gaps != 0 {
			t.Errorf("%s: %v: every input sample should be filtered", tc.name, st)
		}
	}
}

func TestBlockOutputIn(t *testing.T) {
	out := make([]float32, 6)
	for _, tt := range []struct{ values, frame, want int }{
		{4096, 1, 4096}, {8192, 2, 4096}, {8, 8, 1}, {0, 2, 0},
	} {
		o := blockOutput(7, 99, tt.values, tt.frame, out)
		if o.In != tt.want || o.Seq != 7 || o.Timestamp != 99 || len(o.Samples) != 6 {
			t.Errorf("blockOutput(%d values, %d per frame) = %+v, want In %d", tt.values, tt.frame, o, tt.want)
		}
	}
}
