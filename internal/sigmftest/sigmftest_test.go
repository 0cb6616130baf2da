package sigmftest

import (
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestSchemaRejects checks the validator is live: a recording without a
// datatype, or with a malformed one, fails; a minimal one passes.
func TestSchemaRejects(t *testing.T) {
	Validate(t, []byte(`{"global":{"core:datatype":"cf32_le","core:version":"1.0.0"},"captures":[],"annotations":[]}`))
	once.Do(load)
	for _, bad := range []string{
		`{"global":{"core:version":"1.0.0"},"captures":[],"annotations":[]}`,
		`{"global":{"core:datatype":"cf32_le","core:version":"1.0.0","core:num_channels":"two"},"captures":[],"annotations":[]}`,
		`{"global":{"core:datatype":"cf32_le","core:version":"1.0.0"},"captures":[{"core:frequency":1}],"annotations":[]}`,
	} {
		doc, _ := jsonschemaUnmarshal(bad)
		if schema.Validate(doc) == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

func jsonschemaUnmarshal(s string) (any, error) {
	return jsonschema.UnmarshalJSON(strings.NewReader(s))
}
