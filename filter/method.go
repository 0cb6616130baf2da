package filter

import (
	"errors"
	"fmt"
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

// convSizes returns the transform sizes (log2, lo…hi) a filter of ntaps
// taps on blocks of at most maxBlock samples keeps, and the estimated
// nanoseconds to filter one full block with them (transforms, copies and
// the fft method's streaming overhead). lo is the smallest
// size whose segments are at least half the filter long; hi is the one
// with the lowest cost per output among those up to the first that
// covers a whole block in one transform (larger ones only add work).
// Blocks are covered greedily by pickSize.
func convSizes(ntaps, maxBlock int, complex bool) (lo, hi int, ns float64) {
	per := 2 // real streams put two segments in one transform
	if complex {
		per = 1
	}
	kern := fftKernel
	lo = 4
	for lo < maxFFTLog2 && 1<<lo-ntaps+1 < max(1, ntaps/2) {
		lo++
	}
	hi = lo
	for k := lo; k <= maxFFTLog2; k++ {
		seg := 1<<k - ntaps + 1
		if convPairNs(k, kern)/float64(min(per*seg, maxBlock)) < convPairNs(hi, kern)/float64(min(per*(1<<hi-ntaps+1), maxBlock)) {
			hi = k
		}
		if per*seg >= maxBlock {
			break
		}
	}
	costs := make([]float64, hi-lo+1)
	segs := make([]int, hi-lo+1)
	for i := range costs {
		costs[i], segs[i] = convPairNs(lo+i, kern), 1<<(lo+i)-ntaps+1
	}
	for r := maxBlock; r > 0; {
		i := pickSize(costs, segs, r, per)
		ns += costs[i]
		r -= min(r, per*segs[i])
	}
	return lo, hi, ns + float64(maxBlock*(3-per))*convStreamNs
}

// pickSize returns the index of the transform that does the next r
// outputs cheapest per output: cost[i] for up to per·seg[i] outputs.
func pickSize(cost []float64, seg []int, r, per int) int {
	best := 0
	for i := range cost {
		if cost[i]/float64(min(r, per*seg[i])) < cost[best]/float64(min(r, per*seg[best])) {
			best = i
		}
	}
	return best
}

// chooseMethod resolves MethodAuto for a filter on kernel k.
func chooseMethod(m Method, k kernelKind, ntaps, maxBlock int, complex bool) Method {
	if m != MethodAuto {
		return m
	}
	if _, _, fft := convSizes(ntaps, maxBlock, complex); fft < directNs(k, ntaps, maxBlock, complex) {
		return MethodFFT
	}
	return MethodDirect
}

// directNs is the direct method's estimated nanoseconds for outputs output
// samples of an ntaps-tap filter on kernel k.
func directNs(k kernelKind, ntaps, outputs int, complex bool) float64 {
	perTap, fixed := directCost(k)
	return float64(outputs*channelsOf(complex)) * (float64(ntaps)*perTap + fixed)
}
