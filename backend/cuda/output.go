package cuda

import "github.com/sigproc/sigproc/pipeline"

// blockOutput is what the backend hands the pipeline for one block: its
// output, with In the block's input samples (frames of frameValues
// values, pipeline.Layout.Channels), as the CPU backend reports them. A
// chain that decimates, resamples or makes a real input complex outputs
// a different count than it took: without In the pipeline would take the
// output count for the input, count the rest as lost at the filter, and a
// SigMF sink would record a gap before every block.
func blockOutput(seq uint64, ts int64, inValues, frameValues int, out []float32) pipeline.Output {
	return pipeline.Output{Seq: seq, Timestamp: ts, Samples: out, In: inValues / frameValues}
}
