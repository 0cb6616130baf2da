package capture

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// ChannelType is the layout of one IIO scan element, as the kernel describes
// it in scan_elements/in_<name>_type: "[be|le]:[s|u]BITS/STORAGE[Xrepeat]>>SHIFT",
// for example "le:s12/16>>4" (a 12-bit signed value in the top of a
// little-endian 16-bit word).
type ChannelType struct {
	// BigEndian is true for "be", false for "le".
	BigEndian bool
	// Signed is true for "s" (two's complement), false for "u".
	Signed bool
	// Bits is the number of significant bits (1..StorageBits).
	Bits int
	// StorageBits is the stored word size: 8, 16, 32 or 64.
	StorageBits int
	// Repeat is how many values of this layout the element holds (1 unless
	// the type has an X suffix).
	Repeat int
	// Shift is how far the value is shifted left inside the word;
	// Shift+Bits <= StorageBits.
	Shift int
}

// ParseIIOType parses a scan element type string such as "le:s12/16>>4",
// "be:u24/32>>0" or "le:s16/16X2>>0". The string must be exactly in the
// kernel's format (trim the trailing newline of the sysfs file first).
func ParseIIOType(s string) (ChannelType, error) {
	bad := func(why string) (ChannelType, error) {
		return ChannelType{}, inputErr(ErrFormat, "capture: iio type %q: %s (want [be|le]:[s|u]BITS/STORAGEBITS[Xrepeat]>>SHIFT, e.g. le:s12/16>>4)", s, why)
	}
	var t ChannelType
	switch {
	case strings.HasPrefix(s, "le:"):
	case strings.HasPrefix(s, "be:"):
		t.BigEndian = true
	default:
		return bad("endianness must be be or le followed by ':'")
	}
	rest := s[3:]
	if rest == "" {
		return bad("missing sign")
	}
	switch rest[0] {
	case 's':
		t.Signed = true
	case 'u':
	default:
		return bad(fmt.Sprintf("sign must be s or u, got %q", rest[:1]))
	}
	rest = rest[1:]
	bits, rest, ok := strings.Cut(rest, "/")
	if !ok {
		return bad("missing '/' between bits and storage bits")
	}
	body, shift, ok := strings.Cut(rest, ">>")
	if !ok {
		return bad("missing '>>SHIFT'")
	}
	storage, repeat, hasRepeat := strings.Cut(body, "X")
	var err error
	if t.Bits, err = field(bits); err != nil {
		return bad("bits: " + err.Error())
	}
	if t.StorageBits, err = field(storage); err != nil {
		return bad("storage bits: " + err.Error())
	}
	t.Repeat = 1
	if hasRepeat {
		if t.Repeat, err = field(repeat); err != nil {
			return bad("repeat: " + err.Error())
		}
		if t.Repeat < 1 {
			return bad("repeat must be >= 1")
		}
	}
	if t.Shift, err = field(shift); err != nil {
		return bad("shift: " + err.Error())
	}
	switch t.StorageBits {
	case 8, 16, 32, 64:
	default:
		return bad(fmt.Sprintf("storage bits must be 8, 16, 32 or 64, got %d", t.StorageBits))
	}
	if t.Bits < 1 || t.Bits > t.StorageBits {
		return bad(fmt.Sprintf("bits must be in 1..%d (the storage size), got %d", t.StorageBits, t.Bits))
	}
	if t.Shift+t.Bits > t.StorageBits {
		return bad(fmt.Sprintf("shift %d + bits %d exceeds the %d storage bits", t.Shift, t.Bits, t.StorageBits))
	}
	return t, nil
}

// field parses a small unsigned decimal number: digits only, at most 4.
func field(s string) (int, error) {
	if s == "" || len(s) > 4 {
		return 0, fmt.Errorf("want 1 to 4 decimal digits, got %q", s)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("want decimal digits, got %q", s)
		}
	}
	return strconv.Atoi(s)
}

// String formats t in the kernel's notation; ParseIIOType(t.String()) == t.
func (t ChannelType) String() string {
	e, sg := "le", "u"
	if t.BigEndian {
		e = "be"
	}
	if t.Signed {
		sg = "s"
	}
	r := ""
	if t.Repeat > 1 {
		r = "X" + strconv.Itoa(t.Repeat)
	}
	return fmt.Sprintf("%s:%s%d/%d%s>>%d", e, sg, t.Bits, t.StorageBits, r, t.Shift)
}

// StorageBytes is the size in bytes of one value (StorageBits/8).
func (t ChannelType) StorageBytes() int { return t.StorageBits / 8 }

// Decode converts one stored value (the first StorageBytes of b) exactly:
// the word is read with its endianness, shifted right by Shift, masked to
// Bits and, for signed types, sign-extended. It fails if b is too short.
func (t ChannelType) Decode(b []byte) (int64, error) {
	if t.StorageBits != 8 && t.StorageBits != 16 && t.StorageBits != 32 && t.StorageBits != 64 {
		return 0, inputErr(ErrFormat, "capture: iio type %s: storage bits must be 8, 16, 32 or 64", t)
	}
	if t.Bits < 1 || t.Shift < 0 || t.Shift+t.Bits > t.StorageBits {
		return 0, inputErr(ErrFormat, "capture: iio type %s: bits and shift do not fit the storage", t)
	}
	if len(b) < t.StorageBytes() {
		return 0, inputErr(ErrTruncated, "capture: iio type %s: need %d bytes, got %d", t, t.StorageBytes(), len(b))
	}
	return t.decode(b), nil
}

// decode is Decode without checks, for a validated type and a long enough b.
func (t ChannelType) decode(b []byte) int64 {
	var w uint64
	switch t.StorageBits {
	case 8:
		w = uint64(b[0])
	case 16:
		if t.BigEndian {
			w = uint64(binary.BigEndian.Uint16(b))
		} else {
			w = uint64(binary.LittleEndian.Uint16(b))
		}
	case 32:
		if t.BigEndian {
			w = uint64(binary.BigEndian.Uint32(b))
		} else {
			w = uint64(binary.LittleEndian.Uint32(b))
		}
	default:
		if t.BigEndian {
			w = binary.BigEndian.Uint64(b)
		} else {
			w = binary.LittleEndian.Uint64(b)
		}
	}
	w >>= uint(t.Shift)
	if t.Bits < 64 {
		w &= 1<<uint(t.Bits) - 1
	}
	if t.Signed && t.Bits < 64 {
		// Move the sign bit to bit 63 and shift back arithmetically.
		s := uint(64 - t.Bits)
		return int64(w<<s) >> s
	}
	return int64(w) // u64 values above 2^63 wrap; Normalize handles them
}

// Normalize scales a decoded value to [-1, 1): signed values by
// 1/2^(Bits-1) (so an s16 full scale matches ri16_le's 1/32768), unsigned
// values by 2/2^Bits then offset by -1 (mid-scale 2^(Bits-1) maps to 0).
// The sysfs _scale and _offset attributes are not applied: the stream stays
// in ADC full-scale units. Beyond 24 bits the float32 result is rounded, so
// the largest values may round to 1.
func (t ChannelType) Normalize(v int64) float32 {
	if t.Signed {
		return float32(float64(v) * t.factor())
	}
	return float32(float64(uint64(v))*t.factor() - 1)
}

// factor is 1/2^(Bits-1), the scale both signed and unsigned forms use.
func (t ChannelType) factor() float64 {
	return 1 / float64(uint64(1)<<uint(t.Bits-1))
}
