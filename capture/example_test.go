package capture_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/sigproc/sigproc/capture"
	"github.com/sigproc/sigproc/sink"
)

func ExampleNewSynthetic() {
	// A complex tone at a quarter of the sample rate turns by 90° per sample.
	src, err := capture.NewSynthetic(capture.SyntheticConfig{
		Signal:      "tone",
		SampleRate:  8000,
		Complex:     true,
		FrequencyHz: 2000,
		Amplitude:   0.5,
		NumSamples:  4,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer src.Close()
	buf := make([]float32, 2*8) // room for 8 I,Q samples
	n, err := src.Read(context.Background(), buf)
	fmt.Println(n/2, "samples, err:", err)
	for i := 0; i < n; i += 2 {
		fmt.Printf("%+.2f %+.2fj\n", round2(buf[i]), round2(buf[i+1]))
	}
	// Output:
	// 4 samples, err: EOF
	// +0.50 +0.00j
	// +0.00 +0.50j
	// -0.50 +0.00j
	// +0.00 -0.50j
}

// round2 rounds to two decimals, mapping -0 to 0 for tidy printing.
func round2(v float32) float64 { return math.Round(float64(v)*100)/100 + 0 }

func ExampleOpenSigMF() {
	dir, err := os.MkdirTemp("", "sigmf-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	base := filepath.Join(dir, "capture")

	// Record four complex samples as ci16_le.
	rec, err := sink.CreateSigMF(base, sink.SigMFMeta{Datatype: "ci16_le", SampleRate: 2.4e6, FrequencyHz: 100e6})
	if err != nil {
		fmt.Println(err)
		return
	}
	rec.Write([]float32{0.5, -0.5, 0.25, 0, -1, 1, 0, 0.125})
	if err := rec.Close(); err != nil { // also writes capture.sigmf-meta
		fmt.Println(err)
		return
	}

	src, err := capture.OpenSigMF(base + ".sigmf-meta")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer src.Close()
	m := src.Meta()
	fmt.Println(m.Datatype, m.SampleRate, m.FrequencyHz, src.Info().Complex)
	buf := make([]float32, 16)
	n, err := src.Read(context.Background(), buf)
	fmt.Println(buf[:n], err == io.EOF)
	// Output:
	// ci16_le 2.4e+06 1e+08 true
	// [0.5 -0.5 0.25 0 -1 0.9999695 0 0.125] true
}
