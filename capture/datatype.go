package capture

import (
	"encoding/binary"
	"math"
	"regexp"
	"unsafe"
)

// Raw sample formats, named as SigMF datatypes (cu8 and cs8 as the SDR
// tools call them), plus the container formats that [OpenFile] accepts.
const (
	FormatRI16  = "ri16_le" // real int16, little-endian
	FormatRF32  = "rf32_le" // real float32, little-endian
	FormatCI16  = "ci16_le" // complex int16 (I,Q), little-endian
	FormatCF32  = "cf32_le" // complex float32 (I,Q), little-endian
	FormatCU8   = "cu8"     // complex unsigned 8-bit (I,Q): rtl_sdr, (v − 127.5)/127.5
	FormatCS8   = "cs8"     // complex signed 8-bit (I,Q): HackRF, v/128; SigMF ci8
	FormatWAV   = "wav"
	FormatSigMF = "sigmf"
)

// supportedDatatypes is listed in error messages.
const supportedDatatypes = "ri16_le, rf32_le, ci16_le, cf32_le, cu8, cs8 (SigMF ci8)"

// encoding is how one value is stored.
type encoding uint8

const (
	encF32    encoding = iota // IEEE float32
	encI16                    // int16, /2^15
	encI24                    // int24 in 3 bytes, /2^23
	encI32                    // int32, /2^31
	encI8                     // int8, /2^7
	encU8SDR                  // uint8 centred at 127.5 (rtl_sdr): (v − 127.5)/127.5
	encU8Half                 // uint8 centred at 128 (WAV 8-bit): (v − 128)/128
)

// datatype is a decoded raw sample layout of one channel.
type datatype struct {
	name    string
	complex bool
	size    int // bytes per value (one I or Q, or one real sample)
	enc     encoding
	float   bool // float32: the bytes are the values on a little-endian host
}

// pcmBits is the bits of one stored integer value, 0 for floats.
func (d datatype) pcmBits() int {
	if d.float {
		return 0
	}
	return 8 * d.size
}

// frame is the byte size of one sample of one channel (both I and Q for
// complex).
func (d datatype) frame() int {
	if d.complex {
		return 2 * d.size
	}
	return d.size
}

// sigmfDatatype matches the SigMF datatype grammar; 8-bit types have no
// endianness suffix.
var sigmfDatatype = regexp.MustCompile(`^[rc](f64|f32|i32|i16|u32|u16|i8|u8)(_le|_be)?$`)

// lookupDatatype resolves a raw format name (or a SigMF datatype).
func lookupDatatype(name string) (datatype, error) {
	switch name {
	case FormatRI16:
		return datatype{name: name, size: 2, enc: encI16}, nil
	case FormatRF32:
		return datatype{name: name, size: 4, enc: encF32, float: true}, nil
	case FormatCI16:
		return datatype{name: name, complex: true, size: 2, enc: encI16}, nil
	case FormatCF32:
		return datatype{name: name, complex: true, size: 4, enc: encF32, float: true}, nil
	case FormatCU8:
		return datatype{name: name, complex: true, size: 1, enc: encU8SDR}, nil
	case FormatCS8, "ci8":
		return datatype{name: FormatCS8, complex: true, size: 1, enc: encI8}, nil
	}
	if sigmfDatatype.MatchString(name) {
		return datatype{}, inputErr(ErrUnsupported, "unsupported datatype %q (supported: %s)", name, supportedDatatypes)
	}
	return datatype{}, inputErr(ErrUnsupported, "unknown datatype %q (supported: %s)", name, supportedDatatypes)
}

// nativeLE is true on little-endian hosts, where a float32's memory is its
// little-endian encoding.
var nativeLE = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// decodeLE converts len(dst) little-endian values of datatype dt from src.
// Integers are scaled by 1/2^(bits−1), exactly: every result is a float32
// that the division by a power of two gives without rounding, except
// int32 and int24 values beyond float32's 24 bits, rounded once, and
// rtl_sdr's bytes, (v − 127.5)/127.5 rounded once.
func decodeLE(dt datatype, dst []float32, src []byte) {
	switch dt.enc {
	case encF32:
		if nativeLE && len(dst) > 0 {
			// The bytes are already the in-memory float32s: one memmove.
			copy(unsafe.Slice((*byte)(unsafe.Pointer(&dst[0])), 4*len(dst)), src[:4*len(dst)])
			return
		}
		src = src[:4*len(dst)]
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		}
	case encI16:
		decodeI16(dst, src)
	case encI24:
		src = src[:3*len(dst)]
		for i := range dst {
			b := src[3*i : 3*i+3]
			v := int32(uint32(b[0])<<8|uint32(b[1])<<16|uint32(b[2])<<24) >> 8
			dst[i] = float32(v) * (1.0 / (1 << 23))
		}
	case encI32:
		src = src[:4*len(dst)]
		for i := range dst {
			dst[i] = float32(float64(int32(binary.LittleEndian.Uint32(src[4*i:]))) * (1.0 / (1 << 31)))
		}
	case encI8:
		decodeI8(dst, src)
	case encU8SDR:
		decodeU8SDR(dst, src)
	case encU8Half:
		decodeU8Half(dst, src)
	}
}

// decodeI8Generic sets dst[i] = int8(src[i]) / 2^7.
func decodeI8Generic(dst []float32, src []byte) {
	src = src[:len(dst)]
	for i := range dst {
		dst[i] = float32(int8(src[i])) * (1.0 / 128)
	}
}

// decodeU8HalfGeneric sets dst[i] = (src[i] − 128) / 2^7.
func decodeU8HalfGeneric(dst []float32, src []byte) {
	src = src[:len(dst)]
	for i := range dst {
		dst[i] = float32(int(src[i])-128) * (1.0 / 128)
	}
}

// decodeU8SDRGeneric sets dst[i] = u8SDR[src[i]].
func decodeU8SDRGeneric(dst []float32, src []byte) {
	src = src[:len(dst)]
	for i := range dst {
		dst[i] = u8SDR[src[i]]
	}
}

// decodeI16Generic sets dst[i] to the little-endian int16 at src[2i],
// over 2^15.
func decodeI16Generic(dst []float32, src []byte) {
	src = src[:2*len(dst)]
	for i := range dst {
		dst[i] = float32(int16(binary.LittleEndian.Uint16(src[2*i:]))) * (1.0 / 32768)
	}
}

// u8SDR maps rtl_sdr's unsigned bytes to (v − 127.5)/127.5, rounded once
// (computed in float64).
var u8SDR = func() (t [256]float32) {
	for v := range t {
		t[v] = float32((float64(v) - 127.5) / 127.5)
	}
	return t
}()
