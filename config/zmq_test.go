package config

import (
	"strings"
	"testing"
)

const zmqBase = `source:
  type: zmq
  endpoint: tcp://127.0.0.1:5555
  pattern: pull
  format: cf32_le
  sample_rate: 2e6
filter:
  taps: [0.5, 0.5]
sink:
  type: zmq
  endpoint: ipc:///tmp/sigproc-out
  pattern: pub
  pass_tags: true
`

func TestZMQConfig(t *testing.T) {
	c, err := Parse([]byte(zmqBase), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, k := c.Source, c.Sink
	if s.Endpoint != "tcp://127.0.0.1:5555" || s.Pattern != PatternPull || s.SampleRate != 2e6 || s.PassTags {
		t.Errorf("source %+v", s)
	}
	if k.Endpoint != "ipc:///tmp/sigproc-out" || k.Pattern != PatternPub || !k.PassTags {
		t.Errorf("sink %+v", k)
	}
	if got := c.EffectiveOverrun(); got != OverrunBlock {
		t.Errorf("overrun %s, want block: a pull source passes back-pressure to its sender", got)
	}
	if f, err := c.SinkFormat(true); err != nil || f != FormatCF32 {
		t.Errorf("sink format %q %v", f, err)
	}
}

func TestZMQConfigErrors(t *testing.T) {
	rep := func(old, new string) string { return strings.Replace(zmqBase, old, new, 1) }
	tests := []struct {
		name string
		yaml string
		line int
		frag string
	}{
		{"no endpoint", rep("  endpoint: tcp://127.0.0.1:5555\n", ""), 1, "source.endpoint: required for zmq sources"},
		{"bad scheme", rep("tcp://127.0.0.1:5555", "udp://127.0.0.1:5555"), 3, `source.endpoint: bad endpoint "udp://127.0.0.1:5555": unsupported transport "udp" (tcp or ipc)`},
		{"no port", rep("tcp://127.0.0.1:5555", "tcp://127.0.0.1"), 3, "want tcp://host:port"},
		{"bad port", rep("tcp://127.0.0.1:5555", "tcp://127.0.0.1:99999"), 3, `port must be a number in 0..65535 or *, got "99999"`},
		{"connect wildcard", rep("tcp://127.0.0.1:5555", "tcp://*:5555"), 3, "a zmq source connects, so it needs the sender's host and port"},
		{"connect any port", rep("tcp://127.0.0.1:5555", "tcp://127.0.0.1:*"), 3, "needs the sender's host and port"},
		{"empty ipc", rep("tcp://127.0.0.1:5555", "ipc://"), 3, "empty ipc path"},
		{"no pattern", rep("  pattern: pull\n", ""), 1, "source.pattern: required: zmq sources connect with pull"},
		{"push source", rep("pattern: pull", "pattern: push"), 4, `source.pattern: unknown value "push" (allowed: pull, sub;`},
		{"no format", rep("  format: cf32_le\n", ""), 1, "source.format: required for zmq sources: the item type on the wire"},
		{"wav format", rep("format: cf32_le", "format: wav"), 5, `source.format: unknown value "wav" for zmq`},
		{"no rate", rep("  sample_rate: 2e6\n", ""), 1, "source.sample_rate: required for zmq sources (the wire does not carry it)"},
		{"paced", rep("  sample_rate: 2e6\n", "  sample_rate: 2e6\n  paced: true\n"), 7, "source.paced: not used by source type zmq"},
		{"path on zmq source", rep("  sample_rate: 2e6\n", "  sample_rate: 2e6\n  path: x.f32\n"), 7, "source.path: not used by source type zmq (keys used: type, endpoint, pattern, format, sample_rate, channels, pass_tags, duration_s, num_samples)"},
		{"channel names", rep("  sample_rate: 2e6\n", "  sample_rate: 2e6\n  channels: [a, b]\n"), 7, "source.channels: a list of names is for iio scan elements"},
		{"too many channels", rep("  sample_rate: 2e6\n", "  sample_rate: 2e6\n  channels: 4097\n"), 7, "source.channels: must be in 1..4096, got 4097"},
		{"endpoint on file source", "source: {type: file, path: x.f32, format: rf32_le, sample_rate: 1, endpoint: tcp://a:1}\nfilter: {taps: [1]}\nsink: {type: null}\n", 1, "source.endpoint: not used by source type file"},
		{"sink no endpoint", rep("  endpoint: ipc:///tmp/sigproc-out\n", ""), 9, "sink.endpoint: required for zmq sinks"},
		{"sink bad endpoint", rep("ipc:///tmp/sigproc-out", "tcp://localhost"), 11, `sink.endpoint: bad endpoint "tcp://localhost"`},
		{"sink pull", rep("pattern: pub", "pattern: pull"), 12, `sink.pattern: unknown value "pull" (allowed: push, pub;`},
		{"sink no pattern", rep("  pattern: pub\n", ""), 9, "sink.pattern: required: zmq sinks bind with push"},
		{"sink path", rep("  pass_tags: true\n", "  pass_tags: true\n  path: out/x\n"), 14, "sink.path: not used by sink type zmq (keys used: type, endpoint, pattern, format, pass_tags)"},
		{"endpoint on file sink", "source: {type: zmq, endpoint: 'tcp://h:1', pattern: sub, format: rf32_le, sample_rate: 1}\nfilter: {taps: [1]}\nsink: {type: file, path: x, endpoint: 'tcp://*:1'}\n", 3, "sink.endpoint: not used by sink type file (keys used: type, path, format, overwrite, split)"},
		{"pass_tags wrong type", rep("pass_tags: true", "pass_tags: yes please"), 13, "sink.pass_tags: wrong type"},
		{"sink format mismatch", rep("  pass_tags: true\n", "  pass_tags: true\n  format: rf32_le\n"), 14, "sink.format: rf32_le does not match the complex source (use cf32_le)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml), "x.yaml")
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tt.frag) {
				t.Errorf("error %q: want fragment %q", err, tt.frag)
			}
			if tt.line > 0 && !strings.Contains(err.Error(), "x.yaml:"+itoa(tt.line)+":") {
				t.Errorf("error %q: want line %d", err, tt.line)
			}
		})
	}
}
