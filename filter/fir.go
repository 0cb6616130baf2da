package filter

import (
	"errors"
	"fmt"
	"unsafe"
)

// Errors returned by NewFIR and FIR.Process.
var (
	ErrMaxBlock    = errors.New("filter: bad maxBlock")
	ErrBlockLength = errors.New("filter: bad block length")
)

// FIR is a streaming FIR filter: y[n] = Σ_k h[k]·x[n−k] with x[n<0] = 0,
// one output per input and no delay compensation. History carries
// across Process calls, so any split of a stream into blocks gives the
// same output as one call. Complex streams (interleaved I/Q) are filtered
// per component with the same real taps. A FIR is not safe for
// concurrent use.
type FIR struct {
	taps    []float32  // as given
	rev     []float32  // reversed taps: y[i] = Σ_j rev[j]·buf[i+ch·j]
	complex bool       // interleaved I/Q: ch = 2 values per sample
	max     int        // max samples (IQ pairs when complex) per Process call
	kern    kernelKind // inner loop; tests set it to reach every kernel
	method  Method     // MethodDirect or MethodFFT, never auto
	fc      *fastConv  // the fft method's engine; nil for direct

	// buf is [history (ntaps-1 samples) | block (<= max samples)], in
	// the caller's layout, so complex data needs no de-interleaving: the
	// kernels step ch values per tap. A block is copied in whole only
	// when dst overlaps it or it is short (Process): else the fft
	// method's transforms read it where it lies behind the history in
	// buf, and the direct method copies only a head of it behind the
	// history and reads the rest where it lies.
	buf []float32
	// part holds one chunk's partial sums when the direct method splits
	// a long filter (see direct); nil when ntaps <= directChunk.
	part []float32
	// cut is the fft method's last Cut: its search costs about 50 µs for
	// a 2 Mi-sample block, spent while every other core waits, and a
	// stream's blocks mostly ask the same.
	cut cutMemo
}

// cutMemo is a Cut's arguments and the starts it appended.
type cutMemo struct {
	n, k, minSeg, align int
	starts              []int // nil: none yet
}

// NewFIR returns a filter with the given taps for blocks of at most
// maxBlock samples (IQ pairs when complex is true), computed by the
// method MethodAuto picks. All buffers are allocated here; Process
// allocates nothing.
func NewFIR(taps []float32, complex bool, maxBlock int) (*FIR, error) {
	return NewFIRMethod(taps, complex, maxBlock, MethodAuto)
}

// NewFIRMethod is NewFIR with the method given: MethodDirect, MethodFFT,
// or MethodAuto to choose by tap count and block size.
func NewFIRMethod(taps []float32, complex bool, maxBlock int, method Method) (*FIR, error) {
	if method < MethodAuto || method > MethodFFT {
		return nil, fmt.Errorf("%w %v", ErrMethod, method)
	}
	if len(taps) == 0 {
		return nil, ErrNoTaps
	}
	if len(taps) > MaxTaps {
		return nil, fmt.Errorf("filter: %d taps exceeds the limit %d", len(taps), MaxTaps)
	}
	if err := checkFinite(taps); err != nil {
		return nil, err
	}
	if maxBlock <= 0 {
		return nil, fmt.Errorf("%w: must be > 0, got %d", ErrMaxBlock, maxBlock)
	}
	ch := 1
	if complex {
		ch = 2
	}
	if maxBlock > maxBufferValues/ch-len(taps) {
		return nil, fmt.Errorf("%w: %d is too large for %d taps", ErrMaxBlock, maxBlock, len(taps))
	}
	f := &FIR{
		taps:    append([]float32(nil), taps...),
		rev:     make([]float32, len(taps)),
		complex: complex,
		max:     maxBlock,
		kern:    bestKernel,
		buf:     make([]float32, ch*(len(taps)-1+maxBlock)),
	}
	for i, v := range taps {
		f.rev[len(taps)-1-i] = v
	}
	if len(taps) > directChunk {
		f.part = make([]float32, ch*maxBlock)
	}
	if err := f.setMethod(method); err != nil {
		return nil, err
	}
	return f, nil
}

// setMethod resolves m for this filter's kernel and builds the fft
// engine when it is chosen.
func (f *FIR) setMethod(m Method) error {
	f.method = chooseMethod(m, f.kern, len(f.taps), f.max, f.complex)
	f.fc, f.cut = nil, cutMemo{}
	if f.method != MethodFFT {
		return nil
	}
	lo, hi, _ := convSizes(len(f.taps), f.max, f.complex)
	fc, err := newFastConv(f.taps, lo, hi)
	if err != nil {
		return err
	}
	f.fc = fc
	return nil
}

// maxBufferValues bounds the history+block buffer (4 GiB of float32).
const maxBufferValues = 1 << 30

func (f *FIR) channels() int {
	if f.complex {
		return 2
	}
	return 1
}

// Process filters src into dst. len(dst) must equal len(src) and be at
// most maxBlock samples; complex blocks hold interleaved I/Q and must
// have even length. dst may be src (in-place filtering).
func (f *FIR) Process(dst, src []float32) error {
	if len(dst) != len(src) {
		return fmt.Errorf("%w: len(dst)=%d != len(src)=%d", ErrBlockLength, len(dst), len(src))
	}
	ch := f.channels()
	n := len(src)
	if f.complex {
		if n%2 != 0 {
			return fmt.Errorf("%w: complex block has odd length %d (want interleaved I/Q pairs)", ErrBlockLength, n)
		}
		if n/2 > f.max {
			return fmt.Errorf("%w: %d IQ samples exceeds maxBlock %d", ErrBlockLength, n/2, f.max)
		}
	} else if n > f.max {
		return fmt.Errorf("%w: %d samples exceeds maxBlock %d", ErrBlockLength, n, f.max)
	}
	hist := ch * (len(f.rev) - 1)
	if f.fc != nil && n >= hist && !overlap(dst, src) {
		// The transforms read the block where it lies, behind the
		// history, rather than a copy of it: the same values in the same
		// segments, so the same outputs.
		in := input{head: f.buf[:hist], block: src}
		if f.complex {
			f.fc.filterIQ(dst, in)
		} else {
			f.fc.filterReal(dst, in)
		}
		copy(f.buf[:hist], src[n-hist:]) // keep the last ntaps-1 samples
		return nil
	}
	if f.fc == nil && !overlap(dst, src) {
		// The direct method reads the block where it lies past a head
		// of whole groups of outputs (directAlign) that covers the
		// history: only the head is copied behind the history. runKernel
		// picks a kernel and its pass by a call's length, so both calls
		// must be long enough for the widest pass (directAlign outputs
		// are; TestDirectAlignHoldsTheWidestPass) for each output to be
		// summed as in one call on [history | block].
		head := ch * ((len(f.rev) - 1 + directAlign - 1) / directAlign * directAlign)
		if head+ch*directAlign <= n {
			if head > 0 {
				buf := f.buf[:hist+head]
				copy(buf[hist:], src[:head])
				f.direct(dst[:head], buf)
			}
			f.direct(dst[head:], src[head-hist:])
			copy(f.buf[:hist], src[n-hist:]) // keep the last ntaps-1 samples
			return nil
		}
	}
	buf := f.buf[:hist+n]
	copy(buf[hist:], src) // src is fully consumed here, so dst may alias it
	switch {
	case f.fc == nil:
		f.direct(dst, buf)
	case f.complex:
		f.fc.filterIQ(dst, input{block: buf})
	default:
		f.fc.filterReal(dst, input{block: buf})
	}
	copy(buf, buf[n:]) // keep the last ntaps-1 samples
	return nil
}

// overlap reports whether a and b share memory.
func overlap(a, b []float32) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	a0, b0 := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&b[0]))
	return a0 < b0+uintptr(4*len(b)) && b0 < a0+uintptr(4*len(a))
}

// directChunk is the most taps one kernel call sums. A float32 running
// sum over thousands of taps drifts past the 1e-5 accuracy bar (1.9e-5
// of the output RMS at 8193 taps on AVX2), so longer filters are summed
// in chunks whose partial sums are then added: the error stays that of
// a 1024-tap sum at the cost of one add pass per chunk.
const directChunk = 1024

// direct runs the direct method: dst from buf, chunk by chunk.
func (f *FIR) direct(dst, buf []float32) {
	directSum(f.kern, f.channels(), dst, buf, f.rev, f.part)
}

// directSum sets dst[i] = Σ_j rev[j]·buf[i+ch·j] with kernel k, summing
// taps in chunks of directChunk whose partial sums go through part (at
// least len(dst) values when len(rev) > directChunk).
func directSum(k kernelKind, ch int, dst, buf, rev, part []float32) {
	if len(rev) <= directChunk {
		runKernel(k, ch, dst, buf, rev)
		return
	}
	part = part[:len(dst)]
	for c := 0; c < len(rev); c += directChunk {
		out := part
		if c == 0 {
			out = dst
		}
		r := rev[c:min(c+directChunk, len(rev))]
		runKernel(k, ch, out, buf[ch*c:ch*c+len(dst)+ch*(len(r)-1)], r)
		if c > 0 {
			addTo(dst, part)
		}
	}
}

// addTo sets dst[i] += src[i].
func addTo(dst, src []float32) {
	src = src[:len(dst)]
	for i := range dst {
		dst[i] += src[i]
	}
}

// Reset clears the history, as if no input had been seen.
func (f *FIR) Reset() {
	clear(f.buf[:f.channels()*(len(f.rev)-1)])
}

// Taps returns a copy of the filter taps.
func (f *FIR) Taps() []float32 { return append([]float32(nil), f.taps...) }

// Complex reports whether the filter takes interleaved I/Q input.
func (f *FIR) Complex() bool { return f.complex }

// Kernel names the inner loop of the direct method: "avx512", "avx2" or
// "generic".
func (f *FIR) Kernel() string { return f.kern.String() }

// Method returns the method in use: MethodDirect or MethodFFT (never
// MethodAuto).
func (f *FIR) Method() Method { return f.method }

// MaxBlock returns the most samples (IQ pairs when complex) one Process
// call accepts.
func (f *FIR) MaxBlock() int { return f.max }

// Convolve is the reference for FIR: direct convolution of x with taps,
// accumulated in float64, with the same semantics as a fresh FIR fed x in
// one call. It returns nil when taps is empty, or when complex is true and
// len(x) is odd.
func Convolve(taps, x []float32, complex bool) []float32 {
	if len(taps) == 0 || (complex && len(x)%2 != 0) {
		return nil
	}
	stride := 1
	if complex {
		stride = 2
	}
	y := make([]float32, len(x))
	for c := 0; c < stride; c++ {
		for n := c; n < len(x); n += stride {
			var acc float64
			for k, h := range taps {
				i := n - k*stride
				if i < 0 {
					break
				}
				acc += float64(h) * float64(x[i])
			}
			y[n] = float32(acc)
		}
	}
	return y
}
