package capture

import (
	"testing"

	"github.com/sigproc/sigproc/pipeline"
)

// TestEncodingNames: capture names its integer encodings as pipeline does
// (capture does not import pipeline), and each stores as many bytes.
func TestEncodingNames(t *testing.T) {
	want := map[encoding]string{
		encI8: pipeline.EncInt8, encU8SDR: pipeline.EncUint8SDR, encU8Half: pipeline.EncUint8Half,
		encI16: pipeline.EncInt16, encI24: pipeline.EncInt24, encI32: pipeline.EncInt32,
	}
	size := map[encoding]int{encI8: 1, encU8SDR: 1, encU8Half: 1, encI16: 2, encI24: 3, encI32: 4}
	if len(encodingNames) != len(want) {
		t.Fatalf("%d encodings named, want %d", len(encodingNames), len(want))
	}
	for e, name := range want {
		if encodingNames[e] != name || pipeline.EncodingSize(name) != size[e] {
			t.Errorf("encoding %d: named %q (%d bytes), want %q (%d)", e, encodingNames[e], pipeline.EncodingSize(name), name, size[e])
		}
	}
}
