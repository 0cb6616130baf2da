//go:build cuda

package cuda

import (
	"testing"

	"github.com/sigproc/sigproc/filter"
)

// TestGPUCountersMatchCPU runs each counters case through every transport
// and method that takes it and checks the summary counters and the SigMF
// meta against the CPU backend's run. On the H200 at f8de38b a shift +
// fir ÷8 chain reported "filtered 33554432 filter drops 0 (234881024
// samples)" and wrote a 972 KB meta where the CPU wrote 502 bytes.
func TestGPUCountersMatchCPU(t *testing.T) {
	type path struct {
		transport Transport
		method    filter.Method
	}
	paths := []path{
		{TransportExplicit, filter.MethodDirect},
		{TransportExplicitPageable, filter.MethodDirect},
		{TransportExplicit, filter.MethodFFT},
		{TransportZeroCopy, filter.MethodDirect},
	}
	for _, tc := range countersCases() {
		want := cpuCounters(t, tc)
		for _, p := range paths {
			name := tc.name + "/" + string(p.transport) + "/" + p.method.String()
			opts := testOptions(p.transport)
			opts.Method = p.method
			if CheckChain(tc.chain, opts) != nil {
				continue // refused up front: not this test's concern
			}
			_, plain := tc.chain.PlainFIR()
			if p.method == filter.MethodFFT && (!plain || pipelineFrame(tc) > 2) {
				continue // overlap-save: one plain fir on one channel
			}
			be, err := NewChainBackend(tc.chain, opts)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			compareCounters(t, name, runCounters(t, be, tc.chain, tc.input(), tc.block), want)
		}
	}
}

func pipelineFrame(tc countersCase) int {
	return max(1, tc.chain.Channels) * channels(tc.chain.Complex)
}
