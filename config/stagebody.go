package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/sigproc/sigproc/stage"
)

// MaxStageBodySize bounds a stage document: room for a 16k-tap prototype
// written out in full. The control API answers 413 beyond it.
const MaxStageBodySize = 1 << 20

// StageBody is one stage document decoded (DecodeStage) and not yet
// validated: Resolve checks it by the config file's own rules and designs
// its taps.
type StageBody struct {
	c *Config // one stage, with an index of the keys written
}

// DecodeStage reads one stage in the stages list's schema, as JSON —
// {"fir": {"taps": [...]}}, {"fir": {"design": {...}}},
// {"shift": {"frequency_hz": ...}} — from r, as strictly as a config file
// (unknown or repeated keys, wrong types and fractional integers are
// refused). It streams: memory is the decoded stage (4 bytes a tap) and a
// small buffer, whatever the body's size, and a tap list longer than
// stage.MaxTaps is refused as soon as it is. The document must be all of
// r; an error reading r is returned wrapped (errors.As finds it). name
// prefixes error messages (e.g. "body").
func DecodeStage(r io.Reader, name string) (*StageBody, error) {
	d := &jsonDoc{dec: json.NewDecoder(r), name: name, ix: &index{line: map[string]int{}, keys: map[string][]string{},
		at: map[int][]string{}, null: map[string]string{}, tag: map[string]string{}, val: map[string]string{}}}
	d.dec.UseNumber()
	var s Stage
	tok, err := d.token("")
	switch {
	case errors.Is(err, io.EOF):
		return nil, &Error{File: name, Msg: `empty: send a stage, e.g. {"fir": {"taps": [0.25, 0.5, 0.25]}} or {"shift": {"frequency_hz": 1000}}`}
	case err != nil:
		return nil, err
	case tok != json.Delim('{'):
		return nil, &Error{File: name, Msg: `must be a JSON object such as {"fir": {"taps": [1]}}`}
	}
	d.ix.line["stages"], d.ix.line[stagePrefix] = 0, 0
	if err := d.object(reflect.ValueOf(&s).Elem(), stagePrefix); err != nil {
		return nil, err
	}
	if tok, err := d.token(""); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, err
		}
		return nil, &Error{File: name, Msg: fmt.Sprintf("more after the stage's object (%v): send exactly one", tok)}
	}
	return &StageBody{c: &Config{name: name, Stages: []Stage{s}, idx: d.ix}}, nil
}

// stagePrefix is where the body's stage sits in the config it is checked
// as; errors are reported without it ("fir.decimate").
const stagePrefix = "stages[0]"

// Resolve checks the stage by the config file's rules (the same
// validator, so an explicit decimate: 0 is refused as in a file, while an
// absent one is not) and returns it resolved for a stage whose input runs
// at rate S/s on channels channels (a select's are checked against
// them; 0 means 1); designs are computed here, at that rate. Keys left out stay
// zero where the running stage's value applies: a fir's decimate and
// method (see stage.CheckRetune). A channelize body may leave out its
// channels, which a retune cannot change: running's (the stage it
// retunes) apply, and its default prototype is designed for them.
// taps_file is refused: a remote client must not name files on this
// machine.
func (b *StageBody) Resolve(rate float64, channels int, running stage.Stage) (stage.Stage, error) {
	c := b.c
	s := &c.Stages[0]
	if p := stagePrefix + ".channelize.channels"; s.Channelize != nil && running.Kind == stage.KindChannelize && !c.idx.has(p) {
		s.Channelize.Channels = running.Bank
		c.idx.line[p] = c.idx.line[stagePrefix+".channelize"]
	}
	for _, k := range s.fields() {
		if p := stagePrefix + "." + k.key + ".taps_file"; c.idx.has(p) {
			return stage.Stage{}, &Error{File: c.name, Field: trimStagePrefix(p), Msg: "not accepted here: send the taps themselves (taps) or a design"}
		}
	}
	var errs errorList
	add := func(path, format string, args ...any) {
		errs.add(&Error{File: c.name, Field: path, Msg: fmt.Sprintf(format, args...)})
	}
	c.checkKeys(&errs)
	c.checkExplicitZeros(&errs)
	if errs == nil {
		c.SetDefaults() // fills an absent decimate (1 here, checked against the running stage later) and method
		c.validateStages(rate, &errs, add, enumOf(add))
		if errs == nil {
			ch, err := c.ChainOf(rate, true, channels)
			if err != nil {
				var ce *Error
				if errors.As(err, &ce) {
					ce.Field = trimStagePrefix(ce.Field)
				}
				return stage.Stage{}, err
			}
			// What SetDefaults filled stays zero: the running stage's
			// value applies (stage.CheckRetune).
			st := ch.Stages[0]
			k, _ := s.given()
			p := stagePrefix + "." + k.key
			if !c.idx.has(p + ".decimate") {
				st.Decimate = 0
			}
			if !c.idx.has(p + ".method") {
				st.Method = ""
			}
			return st, nil
		}
	}
	for _, e := range errs {
		e.Field, e.Line = trimStagePrefix(e.Field), 0
	}
	return stage.Stage{}, errs.err()
}

func trimStagePrefix(field string) string {
	return strings.TrimPrefix(strings.TrimPrefix(field, stagePrefix), ".")
}

// jsonDoc decodes a JSON document into the config's types by their yaml
// names, token by token, recording the keys written in ix.
type jsonDoc struct {
	dec  *json.Decoder
	name string
	ix   *index
}

// token is the next token; errors are positioned at path (the body's
// path, without stagePrefix).
func (d *jsonDoc) token(path string) (json.Token, error) {
	tok, err := d.dec.Token()
	if err == nil || errors.Is(err, io.EOF) && path == "" {
		return tok, err
	}
	return nil, d.readError(err, path)
}

// readError classifies an error of the decoder: the JSON's (positioned at
// path) or the reader's (wrapped).
func (d *jsonDoc) readError(err error, path string) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	var se *json.SyntaxError
	if errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &Error{File: d.name, Field: trimStagePrefix(path), Msg: fmt.Sprintf("not valid JSON at byte %d: %v", d.dec.InputOffset(), err)}
	}
	return &Error{File: d.name, Msg: "read: " + err.Error(), Err: err}
}

func (d *jsonDoc) fail(path, format string, args ...any) error {
	return &Error{File: d.name, Field: trimStagePrefix(path), Msg: fmt.Sprintf(format, args...)}
}

// object decodes the members of an object whose '{' was read into the
// struct v.
func (d *jsonDoc) object(v reflect.Value, path string) error {
	fields := map[string][]int{}
	jsonFields(v.Type(), nil, fields)
	d.ix.keys[path] = []string{}
	for {
		tok, err := d.token(path)
		if err != nil {
			return err
		}
		if tok == json.Delim('}') {
			return nil
		}
		key := tok.(string) // the decoder only returns strings as keys
		p := join(path, key)
		idx, ok := fields[key]
		switch {
		case !ok:
			return d.fail(p, "%s", unknownKey(key, yamlKeys(v.Type())))
		case d.ix.has(p):
			return d.fail(p, "given twice")
		}
		d.ix.line[p] = 0
		d.ix.keys[path] = append(d.ix.keys[path], key)
		if err := d.value(v.FieldByIndex(idx), p); err != nil {
			return err
		}
	}
}

// jsonFields maps the yaml names of struct t's fields, inline ones
// included, to their index paths.
func jsonFields(t reflect.Type, at []int, into map[string][]int) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		idx := append(append([]int(nil), at...), i)
		tag := f.Tag.Get("yaml")
		if tag == ",inline" {
			jsonFields(f.Type, idx, into)
			continue
		}
		if name, _, _ := strings.Cut(tag, ","); name != "" {
			into[name] = idx
		}
	}
}

// value decodes the next value into v.
func (d *jsonDoc) value(v reflect.Value, path string) error {
	if v.Kind() == reflect.Slice {
		return d.list(v, path)
	}
	tok, err := d.token(path)
	if err != nil {
		return err
	}
	if tok == nil {
		if v.Kind() != reflect.Pointer {
			return d.fail(path, "wrong type: null where %s is expected", kindName(v.Type()))
		}
		d.ix.null[path] = "null" // left nil: the validator says what is missing
		return nil
	}
	if v.Kind() == reflect.Pointer {
		if tok != json.Delim('{') {
			return d.fail(path, "wrong type: %s where a mapping is expected", tokenKind(tok))
		}
		v.Set(reflect.New(v.Type().Elem()))
		return d.object(v.Elem(), path)
	}
	switch v.Kind() {
	case reflect.Struct:
		if tok != json.Delim('{') {
			return d.fail(path, "wrong type: %s where a mapping is expected", tokenKind(tok))
		}
		return d.object(v, path)
	case reflect.String:
		s, ok := tok.(string)
		if !ok {
			return d.fail(path, "wrong type: %s where a string is expected", tokenKind(tok))
		}
		v.SetString(s)
	case reflect.Bool:
		b, ok := tok.(bool)
		if !ok {
			return d.fail(path, "wrong type: %s where true/false is expected", tokenKind(tok))
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := tok.(json.Number)
		if !ok {
			return d.fail(path, "wrong type: %s where an integer is expected", tokenKind(tok))
		}
		i, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil {
			f, ferr := strconv.ParseFloat(string(n), 64)
			if ferr != nil || f != math.Trunc(f) || math.Abs(f) >= 1<<63 {
				return d.fail(path, "must be an integer, got %s", n)
			}
			i = int64(f)
		}
		if v.OverflowInt(i) {
			return d.fail(path, "%s is out of range", n)
		}
		v.SetInt(i)
	case reflect.Float32, reflect.Float64:
		n, ok := tok.(json.Number)
		if !ok {
			return d.fail(path, "wrong type: %s where a number is expected", tokenKind(tok))
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return d.fail(path, "bad number %s", n)
		}
		v.SetFloat(f) // beyond float32 becomes ±Inf, which the validator refuses by name
	default:
		return d.fail(path, "cannot decode into %s", v.Type())
	}
	return nil
}

// list decodes a list of numbers (taps) into the []float32 v, or of
// whole numbers (a select's channels) into the []int v. Taps are read
// whole (at most the body) and scanned in place: a token per tap would
// cost ten times the time and garbage.
func (d *jsonDoc) list(v reflect.Value, path string) error {
	if v.Type() == reflect.TypeOf([]int(nil)) {
		var items []json.RawMessage
		if err := d.dec.Decode(&items); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				return d.fail(path, "wrong type: %s where a list is expected", te.Value)
			}
			return d.readError(err, path)
		}
		ks := make([]int, len(items))
		for i, it := range items {
			if c := it[0]; c != '-' && (c < '0' || c > '9') {
				return d.fail(fmt.Sprintf("%s[%d]", path, i), "wrong type: %s where a whole number is expected", rawKind(it))
			}
			k, err := strconv.Atoi(string(it))
			if err != nil {
				return d.fail(fmt.Sprintf("%s[%d]", path, i), "must be an integer, got %s", it)
			}
			ks[i] = k
		}
		v.Set(reflect.ValueOf(ks))
		return nil
	}
	if v.Type() != reflect.TypeOf([]float32(nil)) {
		return d.fail(path, "cannot decode into %s", v.Type())
	}
	var raw json.RawMessage
	if err := d.dec.Decode(&raw); err != nil {
		return d.readError(err, path)
	}
	// raw is valid JSON, so an item that starts like a number is one.
	if raw[0] != '[' {
		return d.fail(path, "wrong type: %s where a list is expected", rawKind(raw))
	}
	taps := []float32{}
	for i := 1; ; {
		for isSpace(raw[i]) {
			i++
		}
		if raw[i] == ']' && len(taps) == 0 {
			break
		}
		j := i
		for j < len(raw) && raw[j] != ',' && raw[j] != ']' && !isSpace(raw[j]) {
			j++
		}
		item := raw[i:j]
		if c := item[0]; c != '-' && (c < '0' || c > '9') {
			return d.fail(fmt.Sprintf("%s[%d]", path, len(taps)), "wrong type: %s where a number is expected", rawKind(raw[i:]))
		}
		if len(taps) == stage.MaxTaps {
			return d.fail(path, "more than %d items", stage.MaxTaps)
		}
		f, err := strconv.ParseFloat(string(item), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return d.fail(fmt.Sprintf("%s[%d]", path, len(taps)), "bad number %s", item)
		}
		taps = append(taps, float32(f)) // beyond float32 becomes ±Inf, which the validator refuses by index
		for isSpace(raw[j]) {
			j++
		}
		if raw[j] == ']' {
			break
		}
		i = j + 1 // past the ','
	}
	v.Set(reflect.ValueOf(taps))
	return nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// rawKind names the JSON value that raw starts with.
func rawKind(raw []byte) string {
	switch raw[0] {
	case '[':
		return "list"
	case '{':
		return "mapping"
	case '"':
		var s string
		if json.NewDecoder(bytes.NewReader(raw)).Decode(&s) == nil {
			return fmt.Sprintf("string %q", s)
		}
		return "string"
	case 't', 'f':
		return "boolean"
	}
	return "null"
}

// tokenKind names a JSON token for a type error.
func tokenKind(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			return "list"
		}
		return "mapping"
	case string:
		return fmt.Sprintf("string %q", t)
	case json.Number:
		return "number " + string(t)
	case bool:
		return "boolean " + strconv.FormatBool(t)
	}
	return "null"
}

// kindName names a Go type as a config value.
func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Slice:
		return "a list"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true/false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "a mapping"
}
