package filter

import (
	"errors"
	"fmt"
	"math/bits"
)

// Method is how a FIR computes its convolution. Both methods give the
// same outputs to float32 rounding (within 1e-5 of the output RMS).
type Method int

const (
	// MethodAuto picks direct or fft by the estimated cost for the tap
	// count, block size and kernel (see chooseMethod).
	MethodAuto Method = iota
	// MethodDirect is the direct sum y[n] = Σ h[k]·x[n−k].
	MethodDirect
	// MethodFFT is overlap-save fast convolution.
	MethodFFT
)

// ErrMethod is wrapped when a method name is not auto, direct or fft.
var ErrMethod = errors.New("filter: unknown method")

// String returns "auto", "direct" or "fft".
func (m Method) String() string {
	switch m {
	case MethodAuto:
		return "auto"
	case MethodDirect:
		return "direct"
	case MethodFFT:
		return "fft"
	}
	return fmt.Sprintf("Method(%d)", int(m))
}

// ParseMethod parses "auto", "direct" or "fft"; "" means auto.
func ParseMethod(s string) (Method, error) {
	switch s {
	case "", "auto":
		return MethodAuto, nil
	case "direct":
		return MethodDirect, nil
	case "fft":
		return MethodFFT, nil
	}
	return MethodAuto, fmt.Errorf("%w %q (want auto, direct or fft)", ErrMethod, s)
}

// fftPlanFor returns the transform size (log2) that minimises the
// estimated time to filter blocks of maxBlock samples with ntaps taps,
// and that time in nanoseconds.
func fftPlanFor(ntaps, maxBlock int, complex bool) (log2n int, ns float64) {
	per := 2 // real streams put two segments in one transform
	if complex {
		per = 1
	}
	lo := max(bits.Len(uint(ntaps-1))+1, 4) // n >= 2·(ntaps-1): segments of at least ntaps outputs
	best := -1.0
	for k := lo; k <= maxFFTLog2; k++ {
		n := 1 << k
		seg := n - ntaps + 1
		segs := (maxBlock + seg - 1) / seg
		t := float64((segs+per-1)/per) * fftCost(k)
		if best < 0 || t < best {
			best, log2n = t, k
		}
		if seg >= maxBlock {
			break // larger transforms only add work
		}
	}
	return log2n, best
}

// chooseMethod resolves MethodAuto for a filter on kernel k.
func chooseMethod(m Method, k kernelKind, ntaps, maxBlock int, complex bool) Method {
	if m != MethodAuto {
		return m
	}
	ch := 1.0
	if complex {
		ch = 2
	}
	direct := float64(maxBlock) * ch * float64(ntaps) * directCost(k)
	if _, fft := fftPlanFor(ntaps, maxBlock, complex); fft < direct {
		return MethodFFT
	}
	return MethodDirect
}
