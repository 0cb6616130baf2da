package config

import (
	"strings"
	"testing"

	"github.com/sigproc/sigproc/stage"
)

// TestSelectEntry: a selection after a channelizer keeps the channels
// listed; a bad list fails at the stage's line.
func TestSelectEntry(t *testing.T) {
	base := channelizeBase[:strings.Index(channelizeBase, "sink:")] + "  - select: {channels: [63, 3]}\nsink: {type: null}\n"
	c, err := Parse([]byte(base), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := c.Chain(1.024e6, true)
	if err != nil {
		t.Fatal(err)
	}
	if cs, err := ch.OutFrame(); err != nil || len(cs) != 2 || cs[0] != (stage.Channel{ID: 63, Centre: -17000}) || cs[1] != (stage.Channel{ID: 3, Centre: 47000}) {
		t.Errorf("channels %v, %v: want 63 and 3 (16 kHz apart, less the 1 kHz shift)", cs, err)
	}
	for _, tt := range []struct{ list, frag string }{
		{"{}", "x.yaml:5: stages[2].select.channels: required: the channels kept"},
		{"{channels: [64]}", "x.yaml:5: stages[2].select: channel 64 is not one of the stream's 64 channels (0..63)"},
		{"{channels: [1, 1]}", "x.yaml:5: stages[2].select.channels: channel 1 is listed twice"},
		{"{channels: [1.5]}", "x.yaml:5: stages[2].select.channels[0]: must be an integer"},
	} {
		c, err := Parse([]byte(strings.Replace(base, "{channels: [63, 3]}", tt.list, 1)), "x.yaml")
		if err == nil {
			_, err = c.Chain(1.024e6, true)
		}
		if err == nil || !strings.Contains(err.Error(), tt.frag) {
			t.Errorf("%s: %v\nwant %q", tt.list, err, tt.frag)
		}
	}
}
