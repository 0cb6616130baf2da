package main

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// grChannelizeScript runs GNU Radio 3.10's pfb.channelizer_ccf(M, taps,
// oversample_rate) on a raw cf32 file and writes its M outputs as frames
// of M complex values (ch0, ch1, … interleaved, sigproc's layout), as
// many frames as every output has.
//
//	python3 - IN TAPS M OVERSAMPLE OUT
const grChannelizeScript = `
import sys
import numpy as np
from gnuradio import gr, blocks, filter as grfilter

inp, taps_path, m, osr, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
taps = [float(v) for v in open(taps_path).read().split()]
tb = gr.top_block()
ch = grfilter.pfb.channelizer_ccf(m, taps, osr)
tb.connect(blocks.file_source(gr.sizeof_gr_complex, inp, False), ch)
sinks = [blocks.vector_sink_c() for _ in range(m)]
for k, s in enumerate(sinks):
    tb.connect((ch, k), s)
tb.run()
frames = min(len(s.data()) for s in sinks)
np.array([s.data()[:frames] for s in sinks], dtype=np.complex64).T.tofile(out)
`

// TestChannelizeGNURadio runs the channelize stage (the sigproc binary: a
// raw cf32 file through `channelize: {channels: M, decimate: D,
// taps_file}` into a raw cf32 file) and GNU Radio's pfb.channelizer_ccf
// on the same input and taps, critically sampled (D = M) and 2×
// oversampled (D = M/2, oversample_rate 2), and checks the relation
// between them, found empirically on GNU Radio 3.10.
//
// Ours: y_k[n] = Σ_i h[i]·x[nD − i]·exp(−j2πk(nD − i)/M), x[t<0] = 0,
// frame n the input instant nD. GNU Radio's output k, sample n, g_k[n],
// is the same channel k (its default channel map: output k centred at
// k·fs/M, k ≥ M/2 the negative frequencies; no gain on h) but at the
// instant nD + D − 1, the last sample of the n-th block of D, not its
// first, and with a per-channel phase:
//
//	g_k[n] = Σ_i h[i]·x[(n+1)D − 1 − i]·exp(−j2πk((n+2)D − i)/M)
//	       = exp(−j2πk·D/M) · y'_k[n+1],  y' = ours on x′[t] = x[t−1]
//
// that is: delay the input one sample (a zero sample before it), drop our
// first frame and rotate channel k by exp(−j2πkD/M), which is 1 when
// critically sampled and (−1)^k when D = M/2. GNU Radio outputs
// floor(N/M) frames for N inputs when critically sampled and a few less
// than N/D when oversampled (its last frames stay in its history); ours
// has ceil((N+1)/D) for the N+1 samples. The same relation holds for
// other D (checked by hand for M/D = 3, 4, 8), but only D = M and M/2
// are tested here.
//
// Both are float32; the tolerance is 1e-5 of Σ|h|·max|x|, the bound on
// any output, against errors of about 1e-8 of it seen.
func TestChannelizeGNURadio(t *testing.T) {
	py := pythonWith(t, "import numpy; from gnuradio import gr, blocks, filter")
	bin := buildBinary(t)
	const n = 64 * 200 // input samples
	x := noise(n, true, 73)
	for _, tc := range []struct{ m, d int }{{8, 8}, {8, 4}, {64, 64}, {64, 32}} {
		t.Run(fmt.Sprintf("M%d/D%d", tc.m, tc.d), func(t *testing.T) {
			t.Parallel()
			m, d := tc.m, tc.d
			dir := t.TempDir()
			r := rand.New(rand.NewPCG(uint64(m), uint64(d)))
			taps := make([]float32, 5*m+3) // not a multiple of M
			var sumH float64
			var text strings.Builder
			for i := range taps {
				taps[i] = float32(r.NormFloat64())
				sumH += math.Abs(float64(taps[i]))
				text.WriteString(strconv.FormatFloat(float64(taps[i]), 'g', -1, 32) + "\n")
			}
			tapsPath := filepath.Join(dir, "taps.txt")
			if err := os.WriteFile(tapsPath, []byte(text.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			grIn, ourIn := filepath.Join(dir, "x.cf32"), filepath.Join(dir, "x1.cf32")
			writeF32(t, grIn, x)
			writeF32(t, ourIn, append([]float32{0, 0}, x...)) // x′: one zero sample first

			ourOut := filepath.Join(dir, "ours.cf32")
			cfg := writeConfig(t, fmt.Sprintf(`source: {type: file, path: %s, format: cf32_le, sample_rate: 1e6}
block_size: 1000
stages:
  - channelize: {channels: %d, decimate: %d, taps_file: %s}
sink: {type: file, path: %s, format: cf32_le}
log: {level: warn}
`, strconv.Quote(ourIn), m, d, strconv.Quote(tapsPath), strconv.Quote(ourOut)))
			if out, err := exec.Command(bin, "run", "-c", cfg).CombinedOutput(); err != nil {
				t.Fatalf("sigproc run: %v\n%s", err, out)
			}
			grOut := filepath.Join(dir, "gr.cf32")
			cmd := exec.Command(py, "-", grIn, tapsPath, strconv.Itoa(m), strconv.Itoa(m/d), grOut)
			cmd.Stdin = strings.NewReader(grChannelizeScript)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("GNU Radio: %v\n%s", err, out)
			}

			ours, gr := readF32(t, ourOut), readF32(t, grOut)
			frame := 2 * m
			if want := (n + 1 + d - 1) / d * frame; len(ours) != want {
				t.Fatalf("ours: %d values, want %d (ceil(%d/%d) frames of %d channels)", len(ours), want, n+1, d, m)
			}
			if len(gr)%frame != 0 {
				t.Fatalf("GNU Radio: %d values is not whole frames of %d channels", len(gr), m)
			}
			frames := len(gr) / frame
			if frames < n/d-4 || frames > len(ours)/frame-1 {
				t.Fatalf("GNU Radio gave %d frames; want %d..%d", frames, n/d-4, len(ours)/frame-1)
			}
			var maxX float64
			for i := 0; i < len(x); i += 2 {
				maxX = max(maxX, cmplx.Abs(complex(float64(x[i]), float64(x[i+1]))))
			}
			scale := sumH * maxX
			var maxErr, maxOut float64
			worst := ""
			for f := range frames {
				for k := range m {
					rot := cmplx.Rect(1, -2*math.Pi*float64(k*d%m)/float64(m))
					o := ours[(f+1)*frame+2*k:]
					want := rot * complex(float64(o[0]), float64(o[1]))
					g := gr[f*frame+2*k:]
					got := complex(float64(g[0]), float64(g[1]))
					maxOut = max(maxOut, cmplx.Abs(got))
					if e := cmplx.Abs(got - want); e > maxErr {
						maxErr = e
						worst = fmt.Sprintf("GNU Radio frame %d channel %d = %.6g, want exp(-j2π·%d·%d/%d)·ours[%d] = %.6g",
							f, k, got, k, d, m, f+1, want)
					}
				}
			}
			t.Logf("%d frames compared: max |GNU Radio − relation| = %.2e of Σ|h|·max|x| = %.4g", frames, maxErr/scale, scale)
			if maxOut < 1e-2*scale {
				t.Fatalf("GNU Radio's output peaks at %.3g, %.2e of Σ|h|·max|x|: nothing compared", maxOut, maxOut/scale)
			}
			if maxErr > 1e-5*scale {
				t.Fatalf("max error %.3g = %.2e of Σ|h|·max|x| > 1e-5; worst: %s", maxErr, maxErr/scale, worst)
			}
		})
	}
}
