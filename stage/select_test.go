package stage

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/sigproc/sigproc/filter"
)

// TestSelect: the kernel keeps the listed channels of each frame in the
// listed order, real or complex, and the chain follows their count and
// centres.
func TestSelect(t *testing.T) {
	for _, cplx := range []bool{false, true} {
		v := 1
		if cplx {
			v = 2
		}
		const m, frames = 5, 3
		x := make([]float32, frames*m*v)
		for i := range x {
			x[i] = float32(i)
		}
		p, err := NewSelect(4, 0, 2).Def().NewProcessor(NewSelect(4, 0, 2), Input{Complex: cplx, MaxIn: frames, Channels: m})
		if err != nil {
			t.Fatal(err)
		}
		y := make([]float32, frames*3*v)
		n, err := p.Process(y, x)
		if err != nil || n != len(y) {
			t.Fatalf("Process: %d, %v", n, err)
		}
		for f := range frames {
			for j, k := range []int{4, 0, 2} {
				for c := range v {
					if got, want := y[(f*3+j)*v+c], x[(f*m+k)*v+c]; got != want {
						t.Errorf("complex=%v frame %d channel %d: %v, want input channel %d's %v", cplx, f, j, got, k, want)
					}
				}
			}
		}
	}
	c := Chain{SampleRate: 1600, Complex: true, Stages: []Stage{NewShift(100), NewChannelize([]float32{1}, 16, 8), NewSelect(15, 1, 8)}}
	cs, err := c.OutFrame()
	if want := []Channel{{15, -200}, {1, 0}, {8, -900}}; err != nil || !slices.Equal(cs, want) || c.OutChannels() != 3 {
		t.Errorf("channels %v, %v; want %v: channel k at k·100 Hz less the 100 Hz shift", cs, err, want)
	}
	for _, tt := range []struct {
		keep []int
		frag string
	}{
		{nil, "must list at least one channel"},
		{[]int{1, -1}, "channel -1: channels count from 0"},
		{[]int{3, 3}, "channel 3 is listed twice"},
		{[]int{16}, "stage 2: channel 16 is not one of the stream's 16 channels (0..15)"},
	} {
		c.Stages[2] = NewSelect(tt.keep...)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tt.frag) {
			t.Errorf("keep %v: %v, want %q", tt.keep, err, tt.frag)
		}
		// Before Validate too: the frame is an error, never a panic.
		if _, err := c.OutFrame(); err == nil {
			t.Errorf("keep %v: OutFrame gave no error", tt.keep)
		}
		if _, err := c.Stages[2].Def().NewProcessor(c.Stages[2], Input{Channels: 16}); err == nil && slices.ContainsFunc(tt.keep, func(k int) bool { return k < 0 || k >= 16 }) {
			t.Errorf("keep %v: NewProcessor gave no error", tt.keep)
		}
	}
	c.Stages = append(c.Stages, NewShift(1), NewSelect(0))
	c.Stages[2] = NewSelect(1, 2)
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "stage 4: select must come before the stages that run on each channel (stage 3 on)") {
		t.Errorf("a select after a shift after select: %v", err)
	}
	if c.Stages = c.Stages[:4]; c.FanEnd() != 3 {
		t.Errorf("FanEnd %d, want 3", c.FanEnd())
	}
	if cs, err := c.OutFrame(); err != nil || cs[0].Centre != 100-(100+1) || cs[1].Centre != 200-(100+1) {
		t.Errorf("a shift after select moves each channel: %v, %v", cs, err)
	}
	multi := Chain{SampleRate: 1600, Complex: true, Channels: 4, Stages: []Stage{NewSelect(3, 1)}}
	if cs, err := multi.OutFrame(); err != nil || len(cs) != 2 || cs[0].ID != 3 || !multi.FansFirst() {
		t.Errorf("select first on 4 channels: %v, %v", cs, err)
	}
	multi.Stages = []Stage{NewShift(1), NewSelect(3, 1)}
	if err := multi.Validate(); err == nil || !strings.Contains(err.Error(), "stage 1: select must be the first stage on a stream of 4 channels") {
		t.Errorf("select after a shift on 4 channels: %v", err)
	}
	sel, _ := NewSelect(1).Def().NewProcessor(NewSelect(1), Input{Complex: true, MaxIn: 4, Channels: 2})
	if _, err := sel.Process(make([]float32, 8), make([]float32, 7)); !errors.Is(err, filter.ErrBlockLength) {
		t.Errorf("a partial frame: %v, want ErrBlockLength", err)
	}
	bad := Chain{SampleRate: 1, Complex: true, Stages: []Stage{NewChannelize([]float32{1}, -1, 1)}}
	if n := bad.OutChannels(); n != 1 || bad.Validate() == nil {
		t.Errorf("a bank of -1 channels: %d output channels, Validate %v", n, bad.Validate())
	}
	if _, err := (selection{}).Retune(NewSelect(1, 2), NewSelect(2, 1)); err == nil {
		t.Error("a retune changed the selection")
	}
}
