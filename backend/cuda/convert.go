package cuda

import "github.com/sigproc/sigproc/pipeline"

// convertCode is the convert kernel's code for a pipeline encoding
// (kernels/convert.cu), 0 for one it cannot convert, and the bytes of one
// stored value.
func convertCode(encoding string) (code int64, size int) {
	switch encoding {
	case pipeline.EncInt8:
		code = 1
	case pipeline.EncUint8SDR:
		code = 2
	case pipeline.EncUint8Half:
		code = 3
	case pipeline.EncInt16:
		code = 4
	case pipeline.EncInt24:
		code = 5
	case pipeline.EncInt32:
		code = 6
	}
	return code, pipeline.EncodingSize(encoding)
}
