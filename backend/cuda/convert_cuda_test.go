//go:build cuda

package cuda

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/sigproc/sigproc/capture"
	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/internal/wavtest"
	"github.com/sigproc/sigproc/pipeline"
)

// wavFile returns a PCM WAV file of frames frames of ch channels of bits
// bits each, random.
func wavFile(r *rand.Rand, frames, ch, bits int) []byte {
	data := make([]byte, frames*ch*bits/8)
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	return append(wavtest.Header(ch, bits, 48000, len(data)), data...)
}

// TestExplicitConvertsOnDevice runs integer recordings through the
// explicit transport in place, converted on the GPU (kernels/convert.cu),
// read into the ring as stored (read_share 1) and converted there too, and
// read into the ring converted by the CPU: the outputs are equal bit
// for bit (the same float32 inputs through the same kernels), equal the
// float64 convolution of the CPU's decoding, and the stored bytes, not
// floats, crossed to the device.
func TestExplicitConvertsOnDevice(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	raw := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	cases := []struct {
		name, file, format string
		data               []byte
		ch                 int
		complex            bool
		enc                string
	}{
		{"cs8", "rec.cs8", "cs8", raw(2 * 300007), 1, true, pipeline.EncInt8},
		{"cu8", "rec.cu8", "cu8", raw(2 * 300007), 1, true, pipeline.EncUint8SDR},
		{"ci16_le", "rec.ci16", "ci16_le", raw(4 * 300007), 1, true, pipeline.EncInt16},
		{"ri16_le, 3 channels", "rec.ri16", "ri16_le", raw(6 * 100003), 3, false, pipeline.EncInt16},
		{"wav 8-bit", "rec.wav", "", wavFile(r, 300007, 1, 8), 1, false, pipeline.EncUint8Half},
		{"wav 24-bit stereo", "rec.wav", "", wavFile(r, 150001, 2, 24), 2, false, pipeline.EncInt24},
		{"wav 32-bit", "rec.wav", "", wavFile(r, 300007, 1, 32), 1, false, pipeline.EncInt32},
	}
	taps := randSignal(r, 65)
	const block = 65536
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), c.file)
			if err := os.WriteFile(path, c.data, 0o644); err != nil {
				t.Fatal(err)
			}
			// Every window pinned in place (read_share 0), read and
			// decoded by the CPU (the reference), and every window read
			// into the ring as stored (read_share 1, the default).
			var outs [3][]float32
			var x []float32
			zero := 0.0
			for i, share := range []*float64{&zero, nil, nil} {
				inPlace := i != 1
				src, err := capture.Open(context.Background(), path, capture.FileOptions{Format: c.format, SampleRate: 48000, Channels: c.ch, Complex: c.complex})
				if err != nil {
					t.Fatal(err)
				}
				if !inPlace { // the CPU's decoding, for the reference
					all, err := capture.Open(context.Background(), path, capture.FileOptions{Format: c.format, SampleRate: 48000, Channels: c.ch, Complex: c.complex})
					if err != nil {
						t.Fatal(err)
					}
					x = make([]float32, len(c.data))
					n, _ := all.Read(context.Background(), x)
					x = x[:n]
					all.Close()
				}
				vals := src.Info().Channels()
				o := testOptions(TransportExplicit)
				o.PinSource, o.ReadShare = inPlace, share
				be, err := NewBackend(taps, false, o)
				if err != nil {
					t.Fatal(err)
				}
				snk := &collect{}
				var conv, pinned bool
				_, err = pipeline.Run(context.Background(), src, be, snk, pipeline.Config{BlockSize: block, Channels: vals, Slots: 8},
					pipeline.Options{OnBlock: func(pipeline.Output, int64) {
						x := be.(*backend).tr.(*explicit)
						conv, pinned = x.conv != nil, x.region != nil
					}})
				if errs := errors.Join(err, be.Close(), src.Close()); errs != nil {
					t.Fatal(errs)
				}
				if conv != inPlace || pinned != (i == 0) {
					t.Fatalf("run %d: converted on the device %v, pinned %v", i, conv, pinned)
				}
				outs[i] = snk.got
			}
			for k, how := range map[int]string{0: "in place", 2: "read as stored"} {
				if len(outs[k]) != len(outs[1]) {
					t.Fatalf("%d values converted on the device (%s), %d on the CPU", len(outs[k]), how, len(outs[1]))
				}
				for i := range outs[k] {
					if math.Float32bits(outs[k][i]) != math.Float32bits(outs[1][i]) {
						t.Fatalf("value %d: %v converted on the device (%s), %v on the CPU", i, outs[k][i], how, outs[1][i])
					}
				}
			}
			want := convolveLanes(taps, x, capture.Info{Complex: c.complex, NumChannels: c.ch}.Channels())
			if e := filter.MaxErrRMS(outs[1], want); e > 1e-5 {
				t.Fatalf("max relative error %g against the float64 convolution", e)
			}
		})
	}
}

// convolveLanes is filter.Convolve on each of lanes interleaved lanes.
func convolveLanes(taps, x []float32, lanes int) []float32 {
	y := make([]float32, len(x))
	lane := make([]float32, len(x)/lanes)
	for c := range lanes {
		for i := range lane {
			lane[i] = x[i*lanes+c]
		}
		for i, v := range filter.Convolve(taps, lane, false) {
			y[i*lanes+c] = v
		}
	}
	return y
}
