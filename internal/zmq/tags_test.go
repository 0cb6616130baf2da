package zmq

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"
)

// Serialized forms printed by GNU Radio 3.10's pmt.serialize_str (Debian).
func TestPMTMatchesGNURadio(t *testing.T) {
	tests := []struct {
		name string
		got  PMT
		hex  string
	}{
		{"symbol", Symbol("ab"), "0200026162"},
		{"double", Double(1.5), "043ff8000000000000"},
		{"uint64", Uint64(7), "0b0000000000000007"},
		{"rx_time tuple", Time(3, 0.25), "0c000000020b0000000000000003043fd0000000000000"},
		{"false", False, "01"},
	}
	for _, tt := range tests {
		if h := hex.EncodeToString(tt.got); h != tt.hex {
			t.Errorf("%s: %s, GNU Radio writes %s", tt.name, h, tt.hex)
		}
	}
	// Kinds sigproc only skips over, as GNU Radio writes them.
	for _, h := range []string{"00", "06", "0300000005", "0d0000010000000000", "07020001610300000001",
		"0a080000000201003f80000040000000", "053ff00000000000004000000000000000", "080000000106", "090702000161030000000106"} {
		b, _ := hex.DecodeString(h)
		if n, err := skipPMT(b, 0); err != nil || n != len(b) {
			t.Errorf("skip %s: %d, %v; want %d", h, n, err, len(b))
		}
	}
}

func TestTagHeaderRoundTrip(t *testing.T) {
	tags := []Tag{
		{Offset: 100, Key: "rx_time", Value: Time(1700000000, 0.5), Src: Symbol("usrp")},
		{Offset: 120, Key: "rx_freq", Value: Double(433.92e6), Src: False},
	}
	b := AppendTagHeader([]byte("xx"), 100, tags)
	payload := []byte{1, 2, 3, 4}
	b = append(b, payload...)
	off, got, n, err := ParseTagHeader(b[2:], nil)
	if err != nil {
		t.Fatal(err)
	}
	if off != 100 || len(got) != 2 || !bytes.Equal(b[2+n:], payload) {
		t.Fatalf("offset %d, %d tags, rest %v", off, len(got), b[2+n:])
	}
	for i := range tags {
		if got[i].Offset != tags[i].Offset || got[i].Key != tags[i].Key || !bytes.Equal(got[i].Value, tags[i].Value) || !bytes.Equal(got[i].Src, tags[i].Src) {
			t.Errorf("tag %d: %+v, want %+v", i, got[i], tags[i])
		}
	}
	if s := got[0].Value.String(); s != "{1.7e+09 0.5}" {
		t.Errorf("rx_time renders as %q", s)
	}
	// The header gr-zeromq writes for offset 0 and no tags.
	if h := hex.EncodeToString(AppendTagHeader(nil, 0, nil)); h != "f05f0100000000000000000000000000000000" {
		t.Errorf("empty header %s", h)
	}
}

func TestTagHeaderErrors(t *testing.T) {
	good := AppendTagHeader(nil, 5, []Tag{{Offset: 5, Key: "k", Value: Double(1), Src: False}})
	tests := []struct {
		name string
		msg  []byte
		frag string
	}{
		{"short", good[:10], "shorter than the 19-byte header"},
		{"no header", make([]byte, 64), "magic 0x0000, want 0x5ff0 (does the sender have pass_tags set?)"},
		{"version", append([]byte{0xf0, 0x5f, 2}, good[3:]...), "version 2"},
		{"too many tags", append(append([]byte{}, good[:11]...), 0xff, 0xff, 0, 0, 0, 0, 0, 0), "tags cannot fit"},
		{"truncated pmt", good[:len(good)-3], "truncated"},
		{"key not symbol", append(append(append([]byte{}, good[:27]...), Double(2)...), good[27+4:]...), "key is not a symbol"},
	}
	for _, tt := range tests {
		_, _, _, err := ParseTagHeader(tt.msg, nil)
		if !errors.Is(err, ErrTagHeader) || !bytes.Contains([]byte(err.Error()), []byte(tt.frag)) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.frag)
		}
	}
}

func FuzzParseTagHeader(f *testing.F) {
	f.Add(AppendTagHeader(nil, 7, []Tag{{Offset: 9, Key: "rx_time", Value: Time(1, 0.5), Src: Symbol("x")}}))
	f.Add([]byte{0xf0, 0x5f, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, tags, n, err := ParseTagHeader(b, nil)
		if err != nil {
			return
		}
		if n > len(b) {
			t.Fatalf("header length %d > %d", n, len(b))
		}
		// What parses re-encodes to the same bytes.
		off, _, _, _ := ParseTagHeader(b, nil)
		if re := AppendTagHeader(nil, off, tags); !bytes.Equal(re, b[:n]) {
			t.Fatalf("re-encoded %x, parsed %x", re, b[:n])
		}
	})
}

func TestParseEndpoint(t *testing.T) {
	tests := []struct {
		in, network, addr, str, err string
	}{
		{in: "tcp://127.0.0.1:5555", network: "tcp", addr: "127.0.0.1:5555", str: "tcp://127.0.0.1:5555"},
		{in: "tcp://*:5555", network: "tcp", addr: ":5555", str: "tcp://*:5555"},
		{in: "tcp://[::1]:*", network: "tcp", addr: "[::1]:0", str: "tcp://[::1]:0"},
		{in: "ipc:///tmp/x.sock", network: "unix", addr: "/tmp/x.sock", str: "ipc:///tmp/x.sock"},
		{in: "tcp://h", err: "want tcp://host:port"},
		{in: "tcp://:5", err: "empty host"},
		{in: "tcp://h:x", err: "port must be a number"},
		{in: "inproc://x", err: `unsupported transport "inproc"`},
		{in: "localhost:5", err: "want tcp://host:port or ipc://path"},
		{in: "ipc://", err: "empty ipc path"},
	}
	for _, tt := range tests {
		ep, err := ParseEndpoint(tt.in)
		if tt.err != "" {
			if !errors.Is(err, ErrEndpoint) || !bytes.Contains([]byte(err.Error()), []byte(tt.err)) {
				t.Errorf("%s: %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || ep.Network != tt.network || ep.Address != tt.addr || ep.String() != tt.str {
			t.Errorf("%s: %+v %q %v", tt.in, ep, ep.String(), err)
		}
	}
}
