package gpubench

import (
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/sigproc/sigproc/backend/cuda"
	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/sink"
)

func TestSampleRanges(t *testing.T) {
	for _, tc := range []struct {
		samples, block int
		want           [][2]int
	}{
		{100, 10, [][2]int{{0, 20}, {50, 60}, {80, 100}}},
		{95, 10, [][2]int{{0, 20}, {50, 60}, {80, 95}}},
		{30, 10, [][2]int{{0, 30}}},
		{5, 10, [][2]int{{0, 5}}},
	} {
		if got := sampleRanges(tc.samples, tc.block); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("sampleRanges(%d, %d) = %v, want %v", tc.samples, tc.block, got, tc.want)
		}
	}
}

// The kept ranges of a stream written block by block are checked against
// the CPU filter, and a wrong sample inside one is caught.
func TestKeepSinkAndVerify(t *testing.T) {
	taps, err := filter.Design(filter.Spec{Type: filter.Lowpass, SampleRate: 1, CutoffHz: 0.1, NumTaps: 33})
	if err != nil {
		t.Fatal(err)
	}
	for _, complex := range []bool{false, true} {
		ch := 1
		if complex {
			ch = 2
		}
		x := make([]float32, 2*5000)
		FillNoise(x, 3)
		y := filter.Convolve(taps, x, complex)
		const block = 700
		for _, ranges := range [][][2]int{sampleRanges(len(x)/ch, block), {{0, len(x) / ch}}} {
			for _, corrupt := range []bool{false, true} {
				k := &keepSink{Sink: sink.NewNull(), ch: ch, ranges: ranges, keep: make([][]float32, len(ranges))}
				out := append([]float32(nil), y...)
				if corrupt {
					out[len(out)-3] += 1 // in the last block: every check covers it
				}
				for off := 0; off < len(out); off += block * ch {
					if err := k.Write(out[off:min(len(out), off+block*ch)]); err != nil {
						t.Fatal(err)
					}
				}
				e, err := verify(taps, x, k, complex)
				if err != nil {
					t.Fatal(err)
				}
				if corrupt != (e > 1e-3) || (!corrupt && e > 1e-6) {
					t.Fatalf("complex=%v ranges=%v corrupt=%v: error %g", complex, ranges, corrupt, e)
				}
			}
		}
	}
}

func TestFillNoiseDeterministic(t *testing.T) {
	a := make([]float32, 3<<20+5)
	b := make([]float32, len(a))
	FillNoise(a, 9)
	FillNoise(b, 9)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different noise")
	}
	for _, v := range a {
		if v < -1 || v >= 1 {
			t.Fatalf("value %v out of [-1, 1)", v)
		}
	}
	FillNoise(b, 10)
	if reflect.DeepEqual(a, b) {
		t.Fatal("different seeds, same noise")
	}
}

func TestReferenceFIRMatchesOneFilter(t *testing.T) {
	taps, err := filter.Design(filter.Spec{Type: filter.Lowpass, SampleRate: 1, CutoffHz: 0.1, NumTaps: 129})
	if err != nil {
		t.Fatal(err)
	}
	for _, complex := range []bool{false, true} {
		x := make([]float32, 2*(3<<16)+10)
		FillNoise(x, 5)
		want := filter.Convolve(taps, x, complex)
		for _, workers := range []int{1, 3, 8} {
			got, err := ReferenceFIR(taps, x, complex, workers)
			if err != nil {
				t.Fatal(err)
			}
			if e := filter.MaxErrRMS(got, want); e > Tolerance {
				t.Fatalf("complex=%v workers=%d: error %g", complex, workers, e)
			}
		}
	}
}

func TestStreamPureBuild(t *testing.T) {
	if cuda.Built() {
		t.Skip("CUDA build")
	}
	_, err := Stream(t.Context(), StreamConfig{Taps: []float32{1}, Block: 256, Slots: 4, Source: StreamMemory, Bytes: 4096, Verify: VerifyNone})
	if !errors.Is(err, cuda.ErrNotBuilt) {
		t.Fatalf("got %v, want ErrNotBuilt", err)
	}
}

func floatBytes(x []float32) []byte {
	b := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

func bytesFloat(b []byte) []float32 {
	x := make([]float32, len(b)/4)
	for i := range x {
		x[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return x
}

// TestStreamRunConfig: bench stream's backend is the one a `sigproc run`
// config with the same settings builds (assemble.Backend): backend cuda,
// explicit unless told, the method on the fir stage as filter.method puts
// it, the pinned limit left to the default unless set.
func TestStreamRunConfig(t *testing.T) {
	taps := []float32{0.25, 0.5, 0.25}
	rc, chain := StreamConfig{Taps: taps, Complex: true, Block: 4096, Slots: 16, Method: filter.MethodFFT, PinSource: true, Device: 1}.runConfig()
	if rc.Backend != "cuda" || rc.CUDA.Transport != string(cuda.TransportExplicit) || rc.CUDA.MaxPinnedMB != 0 ||
		!rc.CUDA.PinSourceOn() || rc.CUDA.Device != 1 || rc.BlockSize != 4096 || rc.RingSlots != 16 {
		t.Errorf("config %+v", rc)
	}
	got, plain := chain.PlainFIR()
	if !plain || !chain.Complex || len(got) != 3 || chain.Stages[0].Method != "fft" {
		t.Errorf("chain %v (method %q)", chain, chain.Stages[0].Method)
	}
	rc, _ = StreamConfig{Taps: taps, Transport: cuda.TransportZeroCopy, MaxPinnedMB: 64}.runConfig()
	if rc.CUDA.Transport != "zero-copy" || rc.CUDA.MaxPinnedMB != 64 {
		t.Errorf("config %+v", rc.CUDA)
	}
}
