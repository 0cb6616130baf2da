//go:build amd64 && !purego

package capture

// decodeI8, decodeU8Half, decodeU8SDR and decodeI16 are decodeLE's loops
// for int8, uint8 centred at 128, rtl_sdr's uint8 and int16 values: on
// AVX2, 8 values an instruction (decode_amd64.s), the rest in Go. A cs8
// file's decode was a third of a one-core chain's time.
func decodeI8(dst []float32, src []byte) { widen(dst, src, 1, decodeI8AVX2, decodeI8Generic) }

func decodeU8Half(dst []float32, src []byte) {
	widen(dst, src, 1, decodeU8HalfAVX2, decodeU8HalfGeneric)
}

func decodeU8SDR(dst []float32, src []byte) { widen(dst, src, 1, decodeU8SDRAVX2, decodeU8SDRGeneric) }

func decodeI16(dst []float32, src []byte) { widen(dst, src, 2, decodeI16AVX2, decodeI16Generic) }

// widen decodes values of size bytes from src into dst: the multiple of 8
// by vec where the CPU has AVX2, the rest by generic.
func widen(dst []float32, src []byte, size int, vec, generic func([]float32, []byte)) {
	n := 0
	if haveAVX2 {
		n = len(dst) &^ 7
		vec(dst[:n], src[:size*n])
	}
	generic(dst[n:], src[size*n:])
}

//go:noescape
func decodeI8AVX2(dst []float32, src []byte)

//go:noescape
func decodeU8HalfAVX2(dst []float32, src []byte)

//go:noescape
func decodeU8SDRAVX2(dst []float32, src []byte)

//go:noescape
func decodeI16AVX2(dst []float32, src []byte)
