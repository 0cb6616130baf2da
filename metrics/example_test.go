package metrics_test

import (
	"fmt"

	"github.com/sigproc/sigproc/metrics"
	"github.com/sigproc/sigproc/pipeline"
)

func Example() {
	m := metrics.New("cpu")
	// In a run: opts = m.Instrument(opts); pipeline.Run(..., opts); then
	// m.Update(finalStats). Serve exposes it: metrics.Serve(addr, m.Handler()).
	m.Update(pipeline.Stats{SamplesIn: 4096, SamplesFiltered: 4096, SamplesWritten: 4096, SamplesOut: 4096, Blocks: 16})
	mfs, _ := m.Registry().Gather()
	for _, mf := range mfs {
		switch mf.GetName() {
		case "sigproc_samples_written_total", "sigproc_blocks_total":
			fmt.Println(mf.GetName(), mf.GetMetric()[0].GetCounter().GetValue())
		case "sigproc_backend_info":
			fmt.Println(mf.GetName(), mf.GetMetric()[0].GetLabel()[0].GetValue())
		}
	}
	// Output:
	// sigproc_backend_info cpu
	// sigproc_blocks_total 16
	// sigproc_samples_written_total 4096
}
