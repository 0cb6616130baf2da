package filter

// strided computes the sliding dot products of a decimating FIR:
//
//	out[i] = Σ_j rev[j]·buf[a + i·step + j]   (in samples of ch values)
//
// the inner loop of Decimator (step M) and of each output class of a
// Resampler. Only the kept outputs are computed, len(rev) multiply-adds
// each. With step 1 the outputs are consecutive and the FIR's kernels run
// them; otherwise, on amd64 with AVX2, decimAVX2/decimIQAVX2 take eight
// outputs at a time against vec, the taps laid out per channel ((h, h)
// pairs for I/Q) after pad samples of zeros so that the vector is whole
// 8-float registers. The window then starts pad samples early, in the
// history: an Inf or NaN input sample can make up to pad (< 8) outputs
// before its own window NaN as well, and no finite input is affected.
type strided struct {
	kern kernelKind
	ch   int
	step int
	rev  []float32 // reversed taps
	vec  []float32 // pad zero samples, then rev with each tap repeated ch times
	pad  int       // samples of zeros at the start of vec
	part []float32 // partial sums: long filters (step 1 or vec chunks)
}

// vecChunk is the most floats of vec one kernel call sums: 1024 products
// per lane, the FIR's directChunk accuracy bound.
const vecChunk = 8 * directChunk

// newStrided prepares rev for outputs of at most maxOut samples per call.
func newStrided(k kernelKind, ch, step int, rev []float32, maxOut int) *strided {
	s := &strided{kern: k, ch: ch, step: step, rev: rev}
	if step > 1 {
		n := ch * len(rev)
		padded := (n + 7) &^ 7
		s.pad = (padded - n) / ch
		s.vec = make([]float32, padded)
		for j, v := range rev {
			for c := range ch {
				s.vec[padded-n+ch*j+c] = v
			}
		}
	}
	if len(rev) > directChunk || len(s.vec) > vecChunk {
		s.part = make([]float32, ch*maxOut)
	}
	return s
}

// run fills out (a whole number of samples) from buf, whose window for
// output 0 starts at sample a; a >= pad.
func (s *strided) run(out, buf []float32, a int) {
	ch := s.ch
	cnt := len(out) / ch
	if cnt == 0 {
		return
	}
	if s.step == 1 {
		directSum(s.kern, ch, out, buf[ch*a:ch*(a+cnt+len(s.rev)-1)], s.rev, s.part)
		return
	}
	done := 0
	if s.kern >= kernelAVX2 && cnt >= 8 {
		done = cnt &^ 7
		start := ch * (a - s.pad)
		stride := ch * s.step
		last := start + (done-1)*stride + len(s.vec) // end of the last window
		for c := 0; c < len(s.vec); c += vecChunk {
			v := s.vec[c:min(c+vecChunk, len(s.vec))]
			dst := out[:ch*done]
			if c > 0 {
				dst = s.part[:ch*done]
			}
			decimVec(ch, dst, buf[start+c:last], v, stride)
			if c > 0 {
				addTo(out[:ch*done], dst)
			}
		}
	}
	if done < cnt {
		decimGeneric(out[ch*done:], buf[ch*(a+done*s.step):], s.rev, ch, s.step)
	}
}

// decimGeneric is the portable strided kernel, for the outputs the vector
// kernel leaves and for builds without it. Taps are summed in chunks of
// genericChunk, as firGeneric does, for accuracy on long filters.
func decimGeneric(out, buf, rev []float32, ch, step int) {
	cnt := len(out) / ch
	for i := range cnt {
		w := buf[ch*i*step:]
		w = w[:ch*len(rev)]
		for c := range ch {
			var t float32
			for k := 0; k < len(rev); k += genericChunk {
				var a0, a1 float32
				r := rev[k:min(k+genericChunk, len(rev))]
				j := 0
				for ; j+1 < len(r); j += 2 {
					a0 += r[j] * w[ch*(k+j)+c]
					a1 += r[j+1] * w[ch*(k+j+1)+c]
				}
				if j < len(r) {
					a0 += r[j] * w[ch*(k+j)+c]
				}
				t += a0 + a1
			}
			out[ch*i+c] = t
		}
	}
}
