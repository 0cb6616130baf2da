package config

import (
	"strings"
	"testing"
)

func TestChannelsKey(t *testing.T) {
	const base = "source: {type: file, path: x.bin, format: cf32_le, sample_rate: 1e6, %s}\nfilter: {taps: [1]}\nsink: %s\n"
	mk := func(src, snk string) []byte {
		return []byte(strings.Replace(strings.Replace(base, "%s", src, 1), "%s", snk, 1))
	}
	c, err := Parse(mk("channels: 4", "{type: null}"), "x.yaml")
	if err != nil || c.Source.Channels.N() != 4 || c.Source.knownChannels() != 4 {
		t.Fatalf("channels: 4: %v %+v", err, c)
	}
	w, err := Parse([]byte("source: {type: file, path: x.wav, channels: 2, complex: true}\nfilter: {taps: [1]}\nsink: {type: wav, path: \"-\", format: pcm24}\n"), "x.yaml")
	if err != nil || !w.Source.Complex || w.Sink.Path != StdoutPath {
		t.Fatalf("wav: %v", err)
	}
	for _, tc := range []struct{ src, snk, want string }{
		{"channels: 1.5", "{type: null}", "source.channels: must be a whole number of channels, got 1.5"},
		{"channels: 4097", "{type: null}", "source.channels: must be in 1..4096, got 4097"},
		{"channels: 0", "{type: null}", "source.channels: must be in 1..4096, got 0"},
		{"channels: [a, b]", "{type: null}", "source.channels: a list of names is for iio scan elements"},
		{"channels: four", "{type: null}", "source.channels: want a number of channels"},
		{"complex: false", "{type: null}", "source.complex: format cf32_le is complex: raw formats say themselves"},
		{"channels: 2", "{type: zmq, endpoint: \"tcp://*:5555\", pattern: push}", ""},
		{"channels: 2", "{type: sigmf, path: \"-\"}", "sink.path: \"-\" (standard output) needs sink type file or wav"},
		{"channels: 2", "{type: wav, path: y.wav, format: cf32_le}", "sink.format: unknown value \"cf32_le\" (allowed: pcm16, pcm24, float32)"},
		{"channels: 2", "{type: file, path: y, format: cs8, overwrite: true}", ""},
		{"channels: 2", "{type: file, path: y, format: rf32_le}", "sink.format: rf32_le does not match the complex source"},
	} {
		_, err := Parse(mk(tc.src, tc.snk), "x.yaml")
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s / %s: %v", tc.src, tc.snk, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s / %s: %v, want %q", tc.src, tc.snk, err, tc.want)
		}
	}
}
