package wavtest

import (
	"bytes"
	"testing"
)

// The header, field by field, for 16-bit stereo at 48 kHz with 10 bytes
// of data (as RFC 2361 and the RIFF layout give it).
func TestHeader(t *testing.T) {
	want := []byte{
		'R', 'I', 'F', 'F', 46, 0, 0, 0, 'W', 'A', 'V', 'E',
		'f', 'm', 't', ' ', 16, 0, 0, 0, 1, 0, 2, 0,
		0x80, 0xbb, 0, 0, 0x00, 0xee, 0x02, 0, 4, 0, 16, 0,
		'd', 'a', 't', 'a', 10, 0, 0, 0,
	}
	if got := Header(2, 16, 48000, 10); !bytes.Equal(got, want) {
		t.Fatalf("header\n% x\nwant\n% x", got, want)
	}
}
