//go:build amd64 && !purego

package capture

// decodeI8, decodeU8Half, decodeU8SDR and decodeI16 are decodeLE's loops
// for int8, uint8 centred at 128, rtl_sdr's uint8 and int16 values: on AVX2, 8 values an instruction
// (decode_amd64.s), the rest in Go. A cs8 file's decode was a third of a
// one-core chain's time.
func decodeI8(dst []float32, src []byte) {
	n := 0
	if haveAVX2 {
		n = len(dst) &^ 7
		decodeI8AVX2(dst[:n], src[:n])
	}
	decodeI8Generic(dst[n:], src[n:])
}

func decodeU8Half(dst []float32, src []byte) {
	n := 0
	if haveAVX2 {
		n = len(dst) &^ 7
		decodeU8HalfAVX2(dst[:n], src[:n])
	}
	decodeU8HalfGeneric(dst[n:], src[n:])
}

func decodeU8SDR(dst []float32, src []byte) {
	n := 0
	if haveAVX2 {
		n = len(dst) &^ 7
		decodeU8SDRAVX2(dst[:n], src[:n])
	}
	decodeU8SDRGeneric(dst[n:], src[n:])
}

func decodeI16(dst []float32, src []byte) {
	n := 0
	if haveAVX2 {
		n = len(dst) &^ 7
		decodeI16AVX2(dst[:n], src[:2*n])
	}
	decodeI16Generic(dst[n:], src[2*n:])
}

//go:noescape
func decodeI8AVX2(dst []float32, src []byte)

//go:noescape
func decodeU8HalfAVX2(dst []float32, src []byte)

//go:noescape
func decodeU8SDRAVX2(dst []float32, src []byte)

//go:noescape
func decodeI16AVX2(dst []float32, src []byte)
