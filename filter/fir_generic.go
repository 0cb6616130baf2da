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
		var a0, a1, a2, a3, a4, a5, a6, a7 float32
		for j, h := range rev {
			o := i + s*j
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
		d := dst[i : i+8 : i+8]
		d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7] = a0, a1, a2, a3, a4, a5, a6, a7
	}
	for ; i < n; i++ {
		var a float32
		for j, h := range rev {
			a += h * buf[i+s*j]
		}
		dst[i] = a
	}
}
