package cuda

import (
	"errors"
	"testing"

	"github.com/sigproc/sigproc/filter"
)

func TestTransportRetuneRefusal(t *testing.T) {
	for _, tt := range []struct {
		t     Transport
		m     filter.Method
		taps  int
		wantO bool // errOLSRetune, else nil
	}{
		{TransportZeroCopy, filter.MethodAuto, 64, false},
		{TransportZeroCopy, filter.MethodFFT, 64, false}, // refused by CheckChain before, not here
		{TransportAuto, filter.MethodFFT, 64, false},
		{TransportExplicit, filter.MethodDirect, 64, false},
		{TransportExplicit, filter.MethodAuto, BatchMaxTaps, false},
		{TransportExplicit, filter.MethodAuto, BatchMaxTaps + 1, true},
		{TransportExplicit, filter.MethodFFT, 64, true},
		{TransportExplicitPageable, filter.MethodFFT, 64, true},
		{TransportExplicitPageable, filter.MethodDirect, 64, false},
	} {
		err := transportRetuneRefusal(tt.t, tt.m, tt.taps)
		if got := errors.Is(err, errOLSRetune); got != tt.wantO || (err != nil && !got) {
			t.Errorf("transportRetuneRefusal(%s, %s, %d taps) = %v, want overlap-save refusal %v", tt.t, tt.m, tt.taps, err, tt.wantO)
		}
	}
}
