package zmq

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// gr-zeromq's tag header (gr-zeromq/lib/tag_headers.cc), written in front
// of the items when a block has pass_tags set. Integers are the sender's
// native order, little-endian on every platform GNU Radio ships for:
//
//	u16 magic 0x5FF0, u8 version 1, u64 offset of the first item, u64 ntags,
//	then per tag: u64 absolute offset, PMT key, PMT value, PMT srcid
//
// The PMTs are in pmt::serialize form (big-endian, tagged).
const (
	tagMagic      = 0x5FF0
	tagVersion    = 1
	tagHeaderSize = 2 + 1 + 8 + 8
	maxPMTDepth   = 32
)

// ErrTagHeader means a message's tag header is malformed.
var ErrTagHeader = errors.New("zmq: malformed gr-zeromq tag header")

// Tag is a GNU Radio stream tag. Offset counts items from the start of the
// sender's stream. Value and Src are serialized PMTs.
type Tag struct {
	Offset uint64
	Key    string
	Value  PMT
	Src    PMT
}

// AppendTagHeader appends gr-zeromq's tag header for a message whose first
// item is number offset.
func AppendTagHeader(dst []byte, offset uint64, tags []Tag) []byte {
	dst = binary.LittleEndian.AppendUint16(dst, tagMagic)
	dst = append(dst, tagVersion)
	dst = binary.LittleEndian.AppendUint64(dst, offset)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(len(tags)))
	for _, t := range tags {
		dst = binary.LittleEndian.AppendUint64(dst, t.Offset)
		dst = append(dst, Symbol(t.Key)...)
		dst = append(dst, orFalse(t.Value)...)
		dst = append(dst, orFalse(t.Src)...)
	}
	return dst
}

func orFalse(p PMT) PMT {
	if len(p) == 0 {
		return False
	}
	return p
}

// ParseTagHeader reads the tag header at the start of msg. It returns the
// offset of the message's first item, the tags appended to tags (their
// Value and Src alias msg), and the header's length in bytes.
func ParseTagHeader(msg []byte, tags []Tag) (offset uint64, out []Tag, n int, err error) {
	bad := func(format string, args ...any) (uint64, []Tag, int, error) {
		return 0, tags, 0, fmt.Errorf("%w: %s", ErrTagHeader, fmt.Sprintf(format, args...))
	}
	if len(msg) < tagHeaderSize {
		return bad("%d bytes, shorter than the %d-byte header", len(msg), tagHeaderSize)
	}
	if m := binary.LittleEndian.Uint16(msg); m != tagMagic {
		return bad("magic %#04x, want %#04x (does the sender have pass_tags set?)", m, tagMagic)
	}
	if v := msg[2]; v != tagVersion {
		return bad("version %d, want %d", v, tagVersion)
	}
	offset = binary.LittleEndian.Uint64(msg[3:])
	ntags := binary.LittleEndian.Uint64(msg[11:])
	p := tagHeaderSize
	// Each tag takes at least 8+3 bytes: a bound before any loop.
	if ntags > uint64(len(msg)-p)/11 {
		return bad("%d tags cannot fit in %d bytes", ntags, len(msg)-p)
	}
	for i := range ntags {
		if len(msg)-p < 8 {
			return bad("tag %d: truncated offset", i)
		}
		t := Tag{Offset: binary.LittleEndian.Uint64(msg[p:])}
		p += 8
		var parts [3]PMT
		for j := range parts {
			k, err := skipPMT(msg[p:], 0)
			if err != nil {
				return bad("tag %d: %v", i, err)
			}
			parts[j] = PMT(msg[p : p+k])
			p += k
		}
		key, ok := parts[0].Symbol()
		if !ok {
			return bad("tag %d: key is not a symbol", i)
		}
		t.Key, t.Value, t.Src = key, parts[1], parts[2]
		tags = append(tags, t)
	}
	return offset, tags, p, nil
}

// PMT is a serialized GNU Radio polymorphic type (pmt::serialize).
type PMT []byte

// PMT serialization tags (pmt_serial_tags.h).
const (
	pstTrue    = 0x00
	pstFalse   = 0x01
	pstSymbol  = 0x02
	pstInt32   = 0x03
	pstDouble  = 0x04
	pstComplex = 0x05
	pstNull    = 0x06
	pstPair    = 0x07
	pstVector  = 0x08
	pstDict    = 0x09
	pstUniform = 0x0a
	pstUint64  = 0x0b
	pstTuple   = 0x0c
	pstInt64   = 0x0d
)

// Common PMTs.
var (
	False = PMT{pstFalse}
	True  = PMT{pstTrue}
	Nil   = PMT{pstNull}
)

// Symbol returns the PMT symbol s (at most 65535 bytes; longer is cut).
func Symbol(s string) PMT {
	if len(s) > math.MaxUint16 {
		s = s[:math.MaxUint16]
	}
	b := append(PMT{pstSymbol}, byte(len(s)>>8), byte(len(s)))
	return append(b, s...)
}

// Double returns the PMT double v.
func Double(v float64) PMT {
	return binary.BigEndian.AppendUint64(PMT{pstDouble}, math.Float64bits(v))
}

// Uint64 returns the PMT uint64 v.
func Uint64(v uint64) PMT { return binary.BigEndian.AppendUint64(PMT{pstUint64}, v) }

// Tuple returns the PMT tuple of items.
func Tuple(items ...PMT) PMT {
	b := binary.BigEndian.AppendUint32(PMT{pstTuple}, uint32(len(items)))
	for _, it := range items {
		b = append(b, it...)
	}
	return b
}

// Time returns a UHD-style rx_time value: the tuple (uint64 whole
// seconds, double fractional seconds).
func Time(secs uint64, frac float64) PMT { return Tuple(Uint64(secs), Double(frac)) }

// Symbol returns the symbol's name if p is a symbol.
func (p PMT) Symbol() (string, bool) {
	if len(p) < 3 || p[0] != pstSymbol || len(p) != 3+int(binary.BigEndian.Uint16(p[1:])) {
		return "", false
	}
	return string(p[3:]), true
}

// Float returns p as a float64 if it is a double, an integer or a uint64.
func (p PMT) Float() (float64, bool) {
	switch {
	case len(p) == 9 && p[0] == pstDouble:
		return math.Float64frombits(binary.BigEndian.Uint64(p[1:])), true
	case len(p) == 9 && p[0] == pstUint64:
		return float64(binary.BigEndian.Uint64(p[1:])), true
	case len(p) == 9 && p[0] == pstInt64:
		return float64(int64(binary.BigEndian.Uint64(p[1:]))), true
	case len(p) == 5 && p[0] == pstInt32:
		return float64(int32(binary.BigEndian.Uint32(p[1:]))), true
	}
	return 0, false
}

// Items returns the elements of a tuple.
func (p PMT) Items() ([]PMT, bool) {
	if len(p) < 5 || p[0] != pstTuple {
		return nil, false
	}
	n := binary.BigEndian.Uint32(p[1:])
	var out []PMT
	q := 5
	for range n {
		k, err := skipPMT(p[q:], 0)
		if err != nil {
			return nil, false
		}
		out = append(out, p[q:q+k])
		q += k
	}
	return out, q == len(p)
}

// String renders p for logs and tests: symbols by name, numbers as
// numbers, tuples in braces, other kinds by their serial tag.
func (p PMT) String() string {
	if s, ok := p.Symbol(); ok {
		return s
	}
	if f, ok := p.Float(); ok {
		return fmt.Sprint(f)
	}
	if items, ok := p.Items(); ok {
		s := "{"
		for i, it := range items {
			if i > 0 {
				s += " "
			}
			s += it.String()
		}
		return s + "}"
	}
	switch {
	case len(p) == 1 && p[0] == pstTrue:
		return "#t"
	case len(p) == 1 && p[0] == pstFalse:
		return "#f"
	case len(p) == 1 && p[0] == pstNull:
		return "()"
	case len(p) == 0:
		return "<empty>"
	}
	return fmt.Sprintf("<pmt %#02x, %d bytes>", p[0], len(p))
}

// uniformSize is the item size of each uniform vector subtype
// (u8 s8 u16 s16 u32 s32 u64 s64 f32 f64 c32 c64).
var uniformSize = [...]int{1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 8, 16}

// skipPMT returns the length of the serialized PMT at the start of b.
func skipPMT(b []byte, depth int) (int, error) {
	if depth > maxPMTDepth {
		return 0, fmt.Errorf("PMT nested deeper than %d", maxPMTDepth)
	}
	need := func(n int) (int, error) {
		if len(b) < n {
			return 0, fmt.Errorf("PMT of kind %#02x truncated", b[0])
		}
		return n, nil
	}
	if len(b) == 0 {
		return 0, errors.New("PMT missing")
	}
	switch b[0] {
	case pstTrue, pstFalse, pstNull:
		return 1, nil
	case pstSymbol:
		if _, err := need(3); err != nil {
			return 0, err
		}
		return need(3 + int(binary.BigEndian.Uint16(b[1:])))
	case pstInt32:
		return need(5)
	case pstDouble, pstUint64, pstInt64:
		return need(9)
	case pstComplex:
		return need(17)
	case pstPair, pstDict:
		// car, then cdr; a list's cdr is the next pair: iterate, so long
		// lists do not recurse.
		p := 0
		for {
			if p >= len(b) || (b[p] != pstPair && b[p] != pstDict) {
				k, err := skipPMT(b[p:], depth+1)
				return p + k, err
			}
			p++
			k, err := skipPMT(b[p:], depth+1)
			if err != nil {
				return 0, err
			}
			p += k
		}
	case pstVector, pstTuple:
		if _, err := need(5); err != nil {
			return 0, err
		}
		n := binary.BigEndian.Uint32(b[1:])
		if uint64(n) > uint64(len(b)) {
			return 0, fmt.Errorf("PMT of %d items cannot fit in %d bytes", n, len(b))
		}
		p := 5
		for range n {
			k, err := skipPMT(b[p:], depth+1)
			if err != nil {
				return 0, err
			}
			p += k
		}
		return p, nil
	case pstUniform:
		if _, err := need(7); err != nil {
			return 0, err
		}
		sub := int(b[1] & 0x7f)
		if sub >= len(uniformSize) {
			return 0, fmt.Errorf("PMT uniform vector of unknown type %#02x", b[1])
		}
		n := uint64(binary.BigEndian.Uint32(b[2:]))
		size := 7 + uint64(b[6]) + n*uint64(uniformSize[sub])
		if size > uint64(len(b)) {
			return 0, fmt.Errorf("PMT uniform vector of %d items truncated", n)
		}
		return int(size), nil
	}
	return 0, fmt.Errorf("PMT of unknown kind %#02x", b[0])
}
