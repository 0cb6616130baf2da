package capture

import "regexp"

// Raw sample formats, named as SigMF datatypes, plus the container formats
// that [OpenFile] accepts.
const (
	FormatRI16  = "ri16_le" // real int16, little-endian
	FormatRF32  = "rf32_le" // real float32, little-endian
	FormatCI16  = "ci16_le" // complex int16 (I,Q), little-endian
	FormatCF32  = "cf32_le" // complex float32 (I,Q), little-endian
	FormatWAV   = "wav"
	FormatSigMF = "sigmf"
)

// supportedDatatypes is listed in error messages.
const supportedDatatypes = "ri16_le, rf32_le, ci16_le, cf32_le"

// datatype is a decoded raw sample layout.
type datatype struct {
	name    string
	complex bool
	size    int  // bytes per value (one I or Q, or one real sample)
	float   bool // float32 rather than int16
}

// frame is the byte size of one sample (both I and Q for complex).
func (d datatype) frame() int {
	if d.complex {
		return 2 * d.size
	}
	return d.size
}

// sigmfDatatype matches the SigMF datatype grammar; 8-bit types have no
// endianness suffix.
var sigmfDatatype = regexp.MustCompile(`^[rc](f64|f32|i32|i16|u32|u16|i8|u8)(_le|_be)?$`)

// lookupDatatype resolves a raw format name.
func lookupDatatype(name string) (datatype, error) {
	switch name {
	case FormatRI16:
		return datatype{name: name, size: 2}, nil
	case FormatRF32:
		return datatype{name: name, size: 4, float: true}, nil
	case FormatCI16:
		return datatype{name: name, complex: true, size: 2}, nil
	case FormatCF32:
		return datatype{name: name, complex: true, size: 4, float: true}, nil
	}
	if sigmfDatatype.MatchString(name) {
		return datatype{}, inputErr(ErrUnsupported, "unsupported datatype %q (supported: %s)", name, supportedDatatypes)
	}
	return datatype{}, inputErr(ErrUnsupported, "unknown datatype %q (supported: %s)", name, supportedDatatypes)
}
