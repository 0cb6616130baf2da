//go:build !amd64 || purego

package capture

// decodeI8, decodeU8Half, decodeU8SDR and decodeI16 are decodeLE's loops (see
// decode_amd64.go).
func decodeI8(dst []float32, src []byte)     { decodeI8Generic(dst, src) }
func decodeU8Half(dst []float32, src []byte) { decodeU8HalfGeneric(dst, src) }
func decodeU8SDR(dst []float32, src []byte)  { decodeU8SDRGeneric(dst, src) }
func decodeI16(dst []float32, src []byte)    { decodeI16Generic(dst, src) }
