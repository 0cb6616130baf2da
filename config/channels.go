package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Channels is source.channels: a number of channels (channels: 4; file,
// stdin and alsa sources) or the IIO scan elements to capture, one channel
// each (channels: [voltage0, voltage1]).
type Channels struct {
	// Count is the number given as channels: N; 0 when absent.
	Count int
	// Names are the scan elements given as channels: [a, b].
	Names []string
}

// N returns the number of channels given: the names' count or Count.
func (c Channels) N() int {
	if len(c.Names) > 0 {
		return len(c.Names)
	}
	return c.Count
}

// UnmarshalYAML accepts a whole number or a list of names.
func (c *Channels) UnmarshalYAML(n *yaml.Node) error {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	bad := func(format string, args ...any) error {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: source.channels: %s", n.Line, fmt.Sprintf(format, args...))}}
	}
	switch n.Kind {
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!int", "!!float":
			f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
			if err != nil || f != math.Trunc(f) || f < 0 || f > math.MaxInt32 {
				return bad("must be a whole number of channels, got %s", n.Value)
			}
			*c = Channels{Count: int(f)}
			return nil
		}
		return bad("want a number of channels (channels: 4) or, for iio, a list of scan elements ([voltage0, voltage1]); got %q", n.Value)
	case yaml.SequenceNode:
		names := make([]string, 0, len(n.Content))
		for _, e := range n.Content {
			if e.Kind != yaml.ScalarNode || e.ShortTag() != "!!str" {
				return bad("list items must be scan element names such as voltage0")
			}
			names = append(names, e.Value)
		}
		*c = Channels{Names: names}
		if len(names) == 0 {
			c.Names = []string{} // written, empty: reported by Validate
		}
		return nil
	}
	return bad("want a number of channels or a list of scan elements")
}
