// Package sigmftest checks SigMF metadata in tests against the SigMF
// project's own JSON schema (third_party/sigmf/sigmf-schema.json), with a
// JSON-schema validator sigproc did not write.
package sigmftest

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/dlclark/regexp2"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

var (
	once   sync.Once
	schema *jsonschema.Schema
	err    error
)

// SchemaPath is the vendored schema file.
func SchemaPath() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "third_party", "sigmf", "sigmf-schema.json")
}

func load() {
	f, ferr := os.Open(SchemaPath())
	if ferr != nil {
		err = ferr
		return
	}
	defer f.Close()
	doc, derr := jsonschema.UnmarshalJSON(f)
	if derr != nil {
		err = derr
		return
	}
	c := jsonschema.NewCompiler()
	// The schema's patterns are ECMA-262 (lookahead in core:datetime).
	c.UseRegexpEngine(func(expr string) (jsonschema.Regexp, error) {
		re, err := regexp2.Compile(expr, regexp2.ECMAScript)
		if err != nil {
			return nil, err
		}
		return ecmaRegexp{re}, nil
	})
	if err = c.AddResource("sigmf-schema.json", doc); err != nil {
		return
	}
	schema, err = c.Compile("sigmf-schema.json")
}

// ecmaRegexp adapts regexp2 to jsonschema.Regexp.
type ecmaRegexp struct{ re *regexp2.Regexp }

func (r ecmaRegexp) MatchString(s string) bool {
	ok, err := r.re.MatchString(s)
	return err == nil && ok
}

func (r ecmaRegexp) String() string { return r.re.String() }

// Validate fails the test unless meta (the contents of a .sigmf-meta
// file) is valid SigMF metadata.
func Validate(t testing.TB, meta []byte) {
	t.Helper()
	once.Do(load)
	if err != nil {
		t.Fatalf("sigmf schema: %v", err)
	}
	doc, derr := jsonschema.UnmarshalJSON(bytes.NewReader(meta))
	if derr != nil {
		t.Fatalf("sigmf metadata is not JSON: %v\n%s", derr, meta)
	}
	if verr := schema.Validate(doc); verr != nil {
		t.Fatalf("sigmf metadata fails the SigMF schema: %v\n%s", verr, meta)
	}
}

// ValidateFile is Validate on a .sigmf-meta file.
func ValidateFile(t testing.TB, path string) {
	t.Helper()
	b, rerr := os.ReadFile(path)
	if rerr != nil {
		t.Fatal(rerr)
	}
	Validate(t, b)
}
