package filter_test

import (
	"fmt"
	"log"
	"math"

	"github.com/sigproc/sigproc/filter"
)

// Design a 4 kHz lowpass for a 48 kHz stream and run two tones through
// it in blocks: the 500 Hz tone passes, the 12 kHz tone is removed.
func Example() {
	const rate = 48000.0
	taps, err := filter.Design(filter.Spec{
		Type:       filter.Lowpass,
		SampleRate: rate,
		CutoffHz:   4000,
		NumTaps:    129,
		Window:     filter.WindowBlackman,
	})
	if err != nil {
		log.Fatal(err)
	}
	const block = 480
	fir, err := filter.NewFIR(taps, false, block)
	if err != nil {
		log.Fatal(err)
	}

	rms := func(hz float64) float64 {
		fir.Reset()
		buf := make([]float32, block)
		var sum float64
		for b := 0; b < 20; b++ {
			for i := range buf {
				n := float64(b*block + i)
				buf[i] = float32(math.Sin(2 * math.Pi * hz * n / rate))
			}
			if err := fir.Process(buf, buf); err != nil { // in place
				log.Fatal(err)
			}
			if b >= 10 { // skip the start-up transient
				for _, v := range buf {
					sum += float64(v) * float64(v)
				}
			}
		}
		return math.Sqrt(sum / (10 * block))
	}
	fmt.Printf("500 Hz out: %.3f RMS (in: 0.707)\n", rms(500))
	atten := -20 * math.Log10(rms(12000)/math.Sqrt(0.5))
	fmt.Printf("12 kHz attenuated by more than 70 dB: %v\n", atten > 70)
	// Output:
	// 500 Hz out: 0.707 RMS (in: 0.707)
	// 12 kHz attenuated by more than 70 dB: true
}

// Check a filter's output against the direct convolution, as the GPU tests
// and the probe do: the worst error relative to the reference's RMS.
func ExampleMaxErrRMS() {
	taps := []float32{0.25, 0.5, 0.25}
	x := []float32{1, 0, 0, 0, -1, 0}
	want := filter.Convolve(taps, x, false)
	got := append([]float32(nil), want...)
	got[1] += 1e-7
	fmt.Printf("%.1e\n", filter.MaxErrRMS(got, want))
	// Output: 3.5e-07
}

// A decimate-by-4 moving average: only every 4th output is computed, and
// the phase carries across blocks whose length 4 does not divide.
func ExampleDecimator() {
	d, err := filter.NewDecimator([]float32{0.25, 0.25, 0.25, 0.25}, 4, false, 16)
	if err != nil {
		panic(err)
	}
	x := []float32{4, 4, 4, 4, 8, 8, 8, 8, 0, 0}
	y := make([]float32, d.MaxOut(10))
	n1, _ := d.Process(y, x[:5])      // outputs at samples 0 and 4
	n2, _ := d.Process(y[n1:], x[5:]) // output at sample 8
	fmt.Println(y[:n1+n2])
	// Output: [1 5 6]
}

// ExampleBankTaps: a 3-tap prototype for a 2-channel bank is padded to
// P·M = 4 taps and reversed.
func ExampleBankTaps() {
	fmt.Println(filter.BankTaps([]float32{1, 2, 3}, 2))
	// Output: [0 3 2 1]
}
