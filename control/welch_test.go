package control

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// scipyPython returns a python with scipy, skipping without one except
// in CI (CI=true), where it fails: make scipy-deps installs it.
func scipyPython(t *testing.T) string {
	t.Helper()
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		if p, err := exec.LookPath(py); err == nil && exec.Command(p, "-c", "import numpy, scipy.signal").Run() == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("CI: no python3 with numpy and scipy (make scipy-deps installs python3-scipy)")
	}
	t.Skip("no python3 with numpy and scipy (apt-get install python3-scipy); CI=true makes this a failure")
	return ""
}

// TestWelchMatchesScipy compares Welch with scipy.signal.welch on a tone
// plus noise, real and complex, whole segments so both lay them alike.
func TestWelchMatchesScipy(t *testing.T) {
	py := scipyPython(t)
	r := rand.New(rand.NewPCG(3, 4))
	const rate, nfft, segs = 48000.0, 256, 9
	n := nfft / 2 * (segs + 1)
	for _, cplx := range []bool{false, true} {
		ch := 1
		if cplx {
			ch = 2
		}
		x := make([]float32, ch*n)
		for i := range n {
			ph := 2 * math.Pi * 3000 * float64(i) / rate
			x[ch*i] = float32(math.Cos(ph) + 0.1*r.NormFloat64())
			if cplx {
				x[2*i+1] = float32(math.Sin(ph) + 0.1*r.NormFloat64())
			}
		}
		got, err := Welch(x, cplx, rate, nfft)
		if err != nil {
			t.Fatal(err)
		}
		if got.Segments != segs {
			t.Fatalf("%d segments, want %d", got.Segments, segs)
		}
		in, _ := json.Marshal(x)
		script := fmt.Sprintf(`
import json, sys, numpy as np, scipy.signal as ss
x = np.array(json.load(sys.stdin), dtype=np.float64)
cplx = %v
if cplx: x = x[0::2] + 1j*x[1::2]
f, p = ss.welch(x, fs=%g, window="hann", nperseg=%d, noverlap=%d, detrend=False, return_onesided=not cplx, scaling="density")
if cplx: f, p = np.fft.fftshift(f), np.fft.fftshift(p)
json.dump({"f": f.tolist(), "db": (10*np.log10(p)).tolist()}, sys.stdout)
`, map[bool]string{false: "False", true: "True"}[cplx], rate, nfft, nfft/2)
		cmd := exec.Command(py, "-c", script)
		cmd.Stdin = strings.NewReader(string(in))
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("scipy: %v", err)
		}
		var want struct{ F, DB []float64 }
		if err := json.Unmarshal(out, &want); err != nil {
			t.Fatal(err)
		}
		if len(want.F) != len(got.FreqHz) {
			t.Fatalf("complex=%v: %d bins, scipy %d", cplx, len(got.FreqHz), len(want.F))
		}
		for i := range want.F {
			if math.Abs(got.FreqHz[i]-want.F[i]) > 1e-9 || math.Abs(got.DB[i]-want.DB[i]) > 1e-4 {
				t.Fatalf("complex=%v bin %d: %g Hz %g dB, scipy %g Hz %g dB", cplx, i, got.FreqHz[i], got.DB[i], want.F[i], want.DB[i])
			}
		}
		if p := got.Peak(); math.Abs(p-3000) > rate/nfft {
			t.Errorf("complex=%v: peak at %g Hz, want 3000", cplx, p)
		}
	}
}

func TestWelchFewSamples(t *testing.T) {
	if _, err := Welch(make([]float32, 10), false, 1, 256); err == nil {
		t.Error("10 samples gave a spectrum")
	}
	s, err := Welch(make([]float32, 100), false, 1, 256)
	if err != nil || s.NFFT != 64 {
		t.Errorf("100 samples: nfft %d, %v; want 64", s.NFFT, err)
	}
}
