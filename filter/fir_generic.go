package filter

// firGeneric sets dst[i] = Σ_j rev[j]·buf[i+s·j] for i < len(dst), where
// s is the stride between inputs of one channel (1 real, 2 interleaved
// I/Q). It is the portable kernel and serves blocks too short for the
// assembly. Eight outputs share each tap load, and eight independent
// accumulators hide the add latency.
func firGeneric(dst, buf, rev []float32, s int) {
	n := len(dst)
	if n == 0 {
		return
	}
	buf = buf[:n+s*(len(rev)-1)]
	i := 0
	for ; i+8 <= n; i += 8 {
		var d [8]float32
		// Taps go in chunks, each summed from zero and then added to the
		// total: one running sum over thousands of taps loses float32
		// accuracy (past 1e-5 of the output RMS at 4097 taps).
		for c := 0; c < len(rev); c += genericChunk {
			var a0, a1, a2, a3, a4, a5, a6, a7 float32
			for j, h := range rev[c:min(c+genericChunk, len(rev))] {
				o := i + s*(c+j)
				w := buf[o : o+8 : o+8]
				a0 += h * w[0]
				a1 += h * w[1]
				a2 += h * w[2]
				a3 += h * w[3]
				a4 += h * w[4]
				a5 += h * w[5]
				a6 += h * w[6]
				a7 += h * w[7]
			}
			d[0], d[1], d[2], d[3] = d[0]+a0, d[1]+a1, d[2]+a2, d[3]+a3
			d[4], d[5], d[6], d[7] = d[4]+a4, d[5]+a5, d[6]+a6, d[7]+a7
		}
		copy(dst[i:i+8], d[:])
	}
	for ; i < n; i++ {
		var t float32
		for c := 0; c < len(rev); c += genericChunk {
			var a float32
			for j, h := range rev[c:min(c+genericChunk, len(rev))] {
				a += h * buf[i+s*(c+j)]
			}
			t += a
		}
		dst[i] = t
	}
}

// genericChunk is the number of taps firGeneric sums before adding to
// the output's total.
const genericChunk = 256
