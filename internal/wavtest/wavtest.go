// Package wavtest builds PCM WAV files for tests byte by byte, as the
// format lays them out, apart from sink's writer and capture's reader.
package wavtest

import "encoding/binary"

// Header returns the 44-byte header of a PCM WAV file of ch channels of
// bits-bit samples at rate Hz, declaring data bytes of data (which need
// not be whole samples: a recording cut short).
func Header(ch, bits, rate, data int) []byte {
	h := make([]byte, 44)
	copy(h, "RIFF")
	binary.LittleEndian.PutUint32(h[4:], uint32(36+data))
	copy(h[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(h[16:], 16)
	binary.LittleEndian.PutUint16(h[20:], 1) // PCM
	binary.LittleEndian.PutUint16(h[22:], uint16(ch))
	binary.LittleEndian.PutUint32(h[24:], uint32(rate))
	binary.LittleEndian.PutUint32(h[28:], uint32(rate*ch*bits/8))
	binary.LittleEndian.PutUint16(h[32:], uint16(ch*bits/8))
	binary.LittleEndian.PutUint16(h[34:], uint16(bits))
	copy(h[36:], "data")
	binary.LittleEndian.PutUint32(h[40:], uint32(data))
	return h
}
