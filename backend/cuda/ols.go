package cuda

import (
	"fmt"
	"math"
	"math/bits"
	"math/cmplx"

	"github.com/sigproc/sigproc/filter"
)

// FFTCrossoverTaps is the tap count from which method auto runs the
// explicit transport and bench fir with overlap-save (OLSFIR) instead of
// the direct batch kernel. Both match float64 convolution on an H200
// (scripts/gpu-check.sh), but their crossover is not yet measured with
// the fixed overlap-save, so auto keeps the direct kernel wherever it
// takes the filter and uses overlap-save only beyond BatchMaxTaps, where
// direct cannot run; method: fft forces it. scripts/gpu-bench.sh (phase
// fft) measures both side by side at 16 … 16384 taps; lower this to the
// measured crossover (the direct kernel gives 148 GS/s at 129 taps and
// falls about as 1/taps, 25.7 at 1024).
const FFTCrossoverTaps = BatchMaxTaps + 1

// OLSMaxTaps is the most taps OLSFIR takes: transforms up to OLSMaxFFT
// points keep segments at least three quarters of the filter long.
const OLSMaxTaps = 1 << 20

// Transform sizes OLSFIR chooses from.
const (
	OLSMinFFT = 256
	OLSMaxFFT = 1 << 22
)

// olsChunkValues is the float32 values (samples × channels) one pass of
// OLSFIR's kernels covers by default: 4 Mi, so that the segments and
// spectra of a pass (about 21 MB, in place) stay in the 50 MB L2 cache of
// an H100/H200 between the gather, the transforms, the product and the
// scatter, while a pass is long enough (about 40 µs at 100 GS/s) that
// its five launches are queued faster than the GPU runs them.
// `sigproc bench fir --method fft --ols-chunk N` measures other sizes.
const olsChunkValues = 4 << 20

// cufftAlign is the alignment in bytes cuFFT's exec calls demand of their
// input and output pointers: a cufftComplex, 8 bytes, for R2C as well as
// C2C (a real input at 4 mod 8 gets CUFFT_INVALID_VALUE).
const cufftAlign = 8

// olsWorkFactor bounds a pass's work buffer (segments padded to the
// transform) to this many times its chunk of input: a transform forced
// barely longer than the filter leaves segments of a few samples each,
// and a pass of 4 Mi one-sample segments would ask for 64 GiB.
const olsWorkFactor = 4

// olsSegments is the segments per pass (the batch of the transforms) for
// passes of chunkValues float32 values (0: olsChunkValues) of segments
// of l samples of ch values, transformed in n points; their work buffer
// is kept within olsWorkFactor chunks, and the count is capped to cover
// maxSamples (0: no cap). With
// strided real data and l odd it is made even where it can be: a pass of
// nseg·l samples then stays 8-byte aligned from one pass to the next, so
// every full pass can take the strided transform (olsStridedPass). The
// cap comes last: a launch that one pass covers has no next pass.
func olsSegments(chunkValues, ch, n, l, maxSamples int, strided bool) int {
	if chunkValues == 0 {
		chunkValues = olsChunkValues
	}
	stride := n + 2 // float32 values a segment takes in the work buffer
	if ch == 2 {
		stride = 2 * n
	}
	nseg := max(1, min(chunkValues/ch/l, olsWorkFactor*chunkValues/stride))
	if strided && ch == 1 && l%2 == 1 && nseg > 1 {
		nseg &^= 1
	}
	if maxSamples > 0 {
		// One pass covers the largest launch: nothing follows it.
		nseg = min(nseg, (maxSamples+l-1)/l)
	}
	return nseg
}

// olsStridedPass reports whether a pass of cn samples starting at device
// address xin can run the strided forward transform straight from the
// input: only a full pass (a partial one would read past the data), and
// only from an address cuFFT accepts (cufftAlign), which a real input
// misses after a pass of an odd number of samples or when the caller's
// block starts at 4 mod 8.
func olsStridedPass(xin uintptr, cn, chunk int) bool {
	return cn == chunk && xin%cufftAlign == 0
}

// ResolveMethod turns MethodAuto into direct or fft for a filter of
// ntaps taps on the GPU: fft from FFTCrossoverTaps up, and always where
// the direct kernel cannot take the filter (more than BatchMaxTaps).
func ResolveMethod(m filter.Method, ntaps int) filter.Method {
	if m != filter.MethodAuto {
		return m
	}
	if ntaps >= FFTCrossoverTaps || ntaps > BatchMaxTaps {
		return filter.MethodFFT
	}
	return filter.MethodDirect
}

// OLSFFTSize is the transform size OLSFIR uses for ntaps taps when none
// is forced: the power of two at or above 4·ntaps (segments three
// quarters of a transform at least, so the dropped overlap costs at most
// a third more work), from OLSMinFFT to OLSMaxFFT.
func OLSFFTSize(ntaps int) int {
	n := 1 << bits.Len(uint(max(1, 4*ntaps-1)))
	return min(OLSMaxFFT, max(OLSMinFFT, n))
}

// checkOLS validates a filter and a forced transform size (0: automatic)
// and returns the transform size.
func checkOLS(taps []float32, fftSize int) (int, error) {
	switch {
	case len(taps) == 0:
		return 0, fmt.Errorf("gpu: overlap-save: no taps")
	case len(taps) > OLSMaxTaps:
		return 0, fmt.Errorf("gpu: overlap-save: %d taps exceeds the limit %d", len(taps), OLSMaxTaps)
	}
	for i, t := range taps {
		if math.IsNaN(float64(t)) || math.IsInf(float64(t), 0) {
			return 0, fmt.Errorf("gpu: overlap-save: tap %d is %v", i, t)
		}
	}
	if fftSize == 0 {
		return OLSFFTSize(len(taps)), nil
	}
	if fftSize < 2 || fftSize&(fftSize-1) != 0 || fftSize > OLSMaxFFT {
		return 0, fmt.Errorf("gpu: overlap-save: transform size %d is not a power of two from 2 to %d", fftSize, OLSMaxFFT)
	}
	if fftSize < len(taps) {
		return 0, fmt.Errorf("gpu: overlap-save: transform size %d is shorter than the %d taps; want at least %d", fftSize, len(taps), 1<<bits.Len(uint(len(taps)-1)))
	}
	return fftSize, nil
}

// OLSFusedMaxFFT is the largest transform the fused kernel
// (OLSOptions.Fused) takes: its data and twiddles, 12·n bytes, must fit
// one block's shared memory.
const OLSFusedMaxFFT = 8192

// olsFusedTables returns the fused kernel's tables for an n-point
// transform: the filter's full spectrum scaled by 1/n in bit-reversed
// order, and the twiddles exp(−2πi·k/n) for k < n/2, both from float64.
func olsFusedTables(taps []float32, n int) (hperm, tw []complex64) {
	h := olsSpectrum(taps, n, true)
	bits := uint(bitsLen(n) - 1)
	hperm = make([]complex64, n)
	for i := range hperm {
		hperm[i] = h[bitrev(i, bits)]
	}
	tw = make([]complex64, max(1, n/2))
	for k := range tw {
		tw[k] = complex64(cmplx.Rect(1, -2*math.Pi*float64(k)/float64(n)))
	}
	return hperm, tw
}

func bitsLen(n int) int { return bits.Len(uint(n)) }

// bitrev reverses the low nbits bits of i.
func bitrev(i int, nbits uint) int {
	return int(bits.Reverse64(uint64(i)) >> (64 - nbits))
}

// olsSpectrum is the n-point DFT of taps zero-padded to n, scaled by 1/n
// (the inverse transform is unnormalised), computed in float64 and
// rounded once: bins 0 … n/2 for real data, all n for complex.
func olsSpectrum(taps []float32, n int, iq bool) []complex64 {
	a := make([]complex128, n)
	for i, t := range taps {
		a[i] = complex(float64(t), 0)
	}
	fft128(a)
	nb := n
	if !iq {
		nb = n/2 + 1
	}
	h := make([]complex64, nb)
	for k := range h {
		h[k] = complex64(a[k] / complex(float64(n), 0))
	}
	return h
}

// fft128 is an in-place radix-2 forward DFT (e^{-2πi jk/n}) of a power
// of two length, in float64 with exact twiddles per stage.
func fft128(a []complex128) {
	n := len(a)
	for i, j := 1, 0; i < n; i++ {
		bit := n >> 1
		for ; j&bit != 0; bit >>= 1 {
			j ^= bit
		}
		j |= bit
		if i < j {
			a[i], a[j] = a[j], a[i]
		}
	}
	for size := 2; size <= n; size <<= 1 {
		half := size / 2
		tw := make([]complex128, half)
		for k := range tw {
			tw[k] = cmplx.Rect(1, -2*math.Pi*float64(k)/float64(size))
		}
		for s := 0; s < n; s += size {
			for k := 0; k < half; k++ {
				u, v := a[s+k], a[s+k+half]*tw[k]
				a[s+k], a[s+k+half] = u+v, u-v
			}
		}
	}
}
