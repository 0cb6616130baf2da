package config

import (
	"slices"
	"strings"
	"testing"
)

// rtBase is a minimal valid config; the realtime section is appended.
const rtBase = `source:
  type: iio
  device: iio:device0
  channels: [voltage0]
filter:
  taps: [0.5, 0.5]
sink:
  type: null
`

func TestRealtimeParseGood(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want Realtime
	}{
		{"absent: all off", rtBase, Realtime{}},
		{"all keys", rtBase + "realtime:\n  lock_thread: true\n  cpus: [2]\n  mlock: true\n  busy_poll: true\n", Realtime{LockThread: true, CPUs: []int{2}, Mlock: true, BusyPoll: true}},
		{"flow style", rtBase + "realtime: {lock_thread: true, cpus: [2], mlock: true}\n", Realtime{LockThread: true, CPUs: []int{2}, Mlock: true}},
		{"cpus without lock_thread", rtBase + "realtime:\n  cpus: [0, 3, 1023]\n", Realtime{CPUs: []int{0, 3, 1023}}},
		{"lock only", rtBase + "realtime:\n  lock_thread: true\n", Realtime{LockThread: true}},
		{"explicit off", rtBase + "realtime:\n  lock_thread: false\n  mlock: false\n", Realtime{}},
		{"empty section", rtBase + "realtime:\n", Realtime{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.yaml), "x.yaml")
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			r := c.Realtime
			if r.LockThread != tt.want.LockThread || r.Mlock != tt.want.Mlock || !slices.Equal(r.CPUs, tt.want.CPUs) {
				t.Errorf("realtime = %+v, want %+v", r, tt.want)
			}
		})
	}
}

func TestRealtimeParseErrors(t *testing.T) {
	// rtBase has 8 lines, so realtime: is on line 9 and its keys follow.
	rt := func(lines string) string { return rtBase + "realtime:\n" + lines }
	tests := []struct {
		name string
		yaml string
		line int
		frag string
	}{
		{"unknown key", rt("  lock_thread: true\n  priority: 99\n"), 11, "realtime.priority: unknown key (allowed here: lock_thread, cpus, mlock, busy_poll)"},
		{"misspelt key", rt("  cpu: [2]\n"), 10, "realtime.cpu: unknown key, did you mean cpus? (allowed here: lock_thread, cpus, mlock, busy_poll)"},
		{"negative cpu", rt("  cpus: [1, -2]\n"), 10, "realtime.cpus[1]: must be a CPU number >= 0, got -2"},
		{"cpu too large", rt("  cpus:\n    - 0\n    - 1024\n"), 12, "realtime.cpus[1]: must be below 1024, got 1024"},
		{"duplicate cpu", rt("  cpus: [2, 2]\n"), 10, "realtime.cpus[1]: CPU 2 is given twice"},
		{"empty cpus", rt("  cpus: []\n"), 10, "realtime.cpus: must not be empty"},
		{"fractional cpu", rt("  cpus: [1.5]\n"), 10, "realtime.cpus[0]: must be an integer, got 1.5"},
		{"cpus not a list", rt("  cpus: 2\n"), 10, "realtime.cpus: wrong type: integer `2` where a list is expected"},
		{"lock_thread not bool", rt("  lock_thread: yes please\n"), 10, "realtime.lock_thread: wrong type"},
		{"mlock not bool", rt("  mlock: 1\n"), 10, "realtime.mlock: wrong type"},
		{"cpus with lock_thread false", rt("  lock_thread: false\n  cpus: [2]\n"), 10, "realtime.lock_thread: must not be false when cpus is set"},
		{"section not a mapping", rtBase + "realtime: true\n", 9, "realtime: wrong type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml), "x.yaml")
			if err == nil {
				t.Fatalf("Parse succeeded, want error containing %q", tt.frag)
			}
			prefix := "x.yaml:" + itoa(tt.line) + ": "
			if first, _, _ := strings.Cut(err.Error(), "\n"); !strings.HasPrefix(first, prefix) {
				t.Errorf("error %q: want prefix %q", err, prefix)
			}
			if !strings.Contains(err.Error(), tt.frag) {
				t.Errorf("error %q: want fragment %q", err, tt.frag)
			}
		})
	}
}

// TestRealtimeValidateBuiltInGo covers a Config built in Go (no positions).
func TestRealtimeValidateBuiltInGo(t *testing.T) {
	c := &Config{
		Source:   Source{Type: SourceIIO, Device: "adc", Channels: Channels{Names: []string{"voltage0"}}},
		Filter:   Filter{Taps: []float32{1}},
		Sink:     Sink{Type: SinkNull},
		Realtime: Realtime{CPUs: []int{-1, 5, 5}},
	}
	c.SetDefaults()
	err := c.Validate()
	for _, frag := range []string{"realtime.cpus[0]: must be a CPU number >= 0, got -1", "realtime.cpus[2]: CPU 5 is given twice"} {
		if err == nil || !strings.Contains(err.Error(), frag) {
			t.Errorf("Validate = %v, want %q", err, frag)
		}
	}
	c.Realtime = Realtime{CPUs: []int{5}} // LockThread false but not written: implied
	if err := c.Validate(); err != nil {
		t.Errorf("Validate = %v", err)
	}
}
