package cuda

import "github.com/sigproc/sigproc/pipeline"

// convertCode is the convert kernel's code for a pipeline encoding
// (kernels/convert.cu), 0 for one it cannot convert, and the bytes of one
// stored value.
func convertCode(encoding string) (code int64, size int) {
	codes := map[string]int64{
		pipeline.EncInt8:      1,
		pipeline.EncUint8SDR:  2,
		pipeline.EncUint8Half: 3,
		pipeline.EncInt16:     4,
		pipeline.EncInt24:     5,
		pipeline.EncInt32:     6,
	}
	return codes[encoding], pipeline.EncodingSize(encoding)
}
