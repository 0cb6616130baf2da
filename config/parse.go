package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sigproc/sigproc/internal/regfile"
)

// MaxFileSize is the largest config file Load and Parse accept.
const MaxFileSize = 1 << 20

// Load reads, parses and validates the config file at path, which must be
// a regular file: a FIFO or a device is refused at once rather than left
// to hang the start or a reload (see regfile.Open).
func Load(path string) (*Config, error) {
	f, err := regfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("config: read %s: %w", path, err)
	}
	return Parse(data, path)
}

// Parse parses and validates a config document. name is used in error
// messages and its directory is the base for relative input paths.
func Parse(data []byte, name string) (*Config, error) {
	if len(data) > MaxFileSize {
		return nil, &Error{File: name, Msg: fmt.Sprintf("file larger than %d bytes", MaxFileSize)}
	}
	// Pass 1: the node tree, for positions and to reject extra documents.
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{File: name, Msg: "empty config (expected a YAML mapping with source, filter and sink)"}
		}
		return nil, yamlError(name, err, nil)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &Error{File: name, Line: extra.Line, Msg: "multiple YAML documents; a config is exactly one document (remove the ---)"}
	} else if !errors.Is(err, io.EOF) {
		return nil, yamlError(name, err, nil)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, &Error{File: name, Line: doc.Line, Msg: "config must be a YAML mapping (key: value)"}
	}
	idx, err := newIndex(doc.Content[0])
	if err != nil {
		return nil, &Error{File: name, Line: doc.Line, Msg: err.Error()}
	}

	// Pass 2: strict typed decode.
	c := &Config{name: name, dir: filepath.Dir(name), idx: idx}
	dec = yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil {
		return nil, yamlError(name, err, idx)
	}

	// YAML reads an unquoted null as null, not the string "null"; the sink
	// type is literally named null, so accept it unquoted.
	if c.Sink.Type == "" && idx.isNullWord("sink.type") {
		c.Sink.Type = SinkNull
	}

	var errs errorList
	checkIntegers(doc.Content[0], reflect.TypeOf(*c), "", c, &errs)
	c.checkKeys(&errs)
	c.checkExplicitZeros(&errs)
	if err := errs.err(); err != nil {
		return nil, err
	}
	c.resolvePaths()
	c.fillAmplitudes()
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// Name returns the file name the config was parsed from ("" if built in Go).
func (c *Config) Name() string { return c.name }

// Dir returns the directory relative input paths were resolved against.
func (c *Config) Dir() string { return c.dir }

// MarkOverride records that the field at path (e.g. "block_size",
// "sink.path") was set by a command-line flag, so that validation errors
// about it name the flag instead of a line in the file.
func (c *Config) MarkOverride(path, flag string) {
	if c.origin == nil {
		c.origin = make(map[string]string)
	}
	c.origin[path] = flag
}

// BlockSizeDefault reports whether block_size is the default, given
// neither in the config nor by a flag: the run may then pick the block
// size that suits its source and backend.
func (c *Config) BlockSizeDefault() bool {
	_, flag := c.origin["block_size"]
	return c.blockDefault && !flag
}

// resolvePaths makes relative input paths relative to the config directory.
func (c *Config) resolvePaths() {
	if c.Source.Path != "" && c.Source.Path != "-" && !filepath.IsAbs(c.Source.Path) {
		c.Source.Path = filepath.Join(c.dir, c.Source.Path)
	}
	for _, f := range c.filters() {
		if f.f.TapsFile != "" && !filepath.IsAbs(f.f.TapsFile) {
			f.f.TapsFile = filepath.Join(c.dir, f.f.TapsFile)
		}
	}
	if c.CUDA.PTXDir != "" && !filepath.IsAbs(c.CUDA.PTXDir) {
		c.CUDA.PTXDir = filepath.Join(c.dir, c.CUDA.PTXDir)
	}
}

// fillAmplitudes sets amplitude to DefaultAmplitude where the key is absent;
// a zero is only kept when written explicitly.
func (c *Config) fillAmplitudes() {
	var walk func(w *Waveform, path string)
	walk = func(w *Waveform, path string) {
		switch w.Signal {
		case SignalTone, SignalChirp, SignalImpulse:
			if !c.idx.has(join(path, "amplitude")) {
				w.Amplitude = DefaultAmplitude
			}
		}
		for i := range w.Tones {
			if !c.idx.has(fmt.Sprintf("%s.tones[%d].amplitude", path, i)) {
				w.Tones[i].Amplitude = DefaultAmplitude
			}
		}
		for i := range w.Components {
			walk(&w.Components[i], fmt.Sprintf("%s.components[%d]", path, i))
		}
	}
	if c.Source.Type == SourceSynthetic {
		walk(&c.Source.Waveform, "source")
	}
}

// checkExplicitZeros rejects a defaulted field written as 0 or "": SetDefaults
// would replace it, so the file would not mean what it says.
func (c *Config) checkExplicitZeros(errs *errorList) {
	fields := []struct {
		path string
		zero bool
	}{
		{"block_size", c.BlockSize == 0},
		{"ring_slots", c.RingSlots == 0},
		{"backend", c.Backend == ""},
		{"overrun", c.Overrun == ""},
		{"cuda.transport", c.CUDA.Transport == ""},
		{"cuda.watchdog_ms", c.CUDA.WatchdogMS == 0},
		{"cuda.ptx_dir", c.CUDA.PTXDir == ""},
		{"log.level", c.Log.Level == ""},
		{"log.format", c.Log.Format == ""},
	}
	for _, f := range c.filters() {
		d := f.f.Design
		fields = append(fields, []struct {
			path string
			zero bool
		}{
			{f.path + ".method", f.f.Method == ""},
			{f.path + ".design.window", d != nil && d.Window == ""},
			{f.path + ".design.kaiser_beta", d != nil && d.KaiserBeta == 0},
			{f.path + ".design.transition_hz", d != nil && d.TransitionHz == 0},
			{f.path + ".design.attenuation_db", d != nil && d.AttenuationDB == 0},
		}...)
	}
	for _, f := range fields {
		if f.zero && c.idx.has(f.path) {
			errs.add(&Error{File: c.name, Line: c.idx.lineOf(f.path), Field: f.path,
				Msg: "must not be zero or empty (omit the key to get the default)"})
		}
	}
}

// SetDefaults fills zero-valued fields with their documented defaults.
// Load and Parse call it; call it yourself for a Config built in Go.
func (c *Config) SetDefaults() {
	if c.BlockSize == 0 {
		c.BlockSize = DefaultBlockSize
		c.blockDefault = true
	}
	if c.Backend == "" {
		c.Backend = DefaultBackend
	}
	for _, f := range c.filters() {
		if f.f.Method == "" && f.noMethod == "" {
			f.f.Method = DefaultMethod
		}
		if d := f.f.Design; d != nil && !d.bySpec() {
			if d.Window == "" {
				d.Window = DefaultWindow
			}
			if d.Window == "kaiser" && d.KaiserBeta == 0 {
				d.KaiserBeta = DefaultKaiserBeta
			}
		}
	}
	for i := range c.Stages {
		for _, k := range c.Stages[i].fields() {
			if d, ok := k.entry.(defaulter); ok {
				d.setDefaults(c, fmt.Sprintf("stages[%d].%s", i, k.key))
			}
		}
	}
	if c.CUDA.Transport == "" {
		c.CUDA.Transport = DefaultTransport
	}
	if c.CUDA.WatchdogMS == 0 {
		c.CUDA.WatchdogMS = DefaultWatchdogMS
	}
	if c.Log.Level == "" {
		c.Log.Level = DefaultLogLevel
	}
	if c.Log.Format == "" {
		c.Log.Format = DefaultLogFormat
	}
}

// Error is one problem in a config, positioned at the offending key.
type Error struct {
	File  string // config file name; empty for configs built in Go
	Line  int    // 1-based line of the key; 0 if unknown
	Field string // dotted path such as "source.tones[1].frequency_hz"; may be empty
	Flag  string // command-line flag that set the field, if any
	Msg   string
	Err   error // underlying cause (from Wrap), if any
}

// Unwrap returns the underlying cause, if any.
func (e *Error) Unwrap() error { return e.Err }

// Error formats the problem as "file:line: field: msg".
func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.Flag != "":
		b.WriteString(e.Flag)
		b.WriteString(": ")
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", e.File, e.Line)
	case e.File != "":
		b.WriteString(e.File)
		b.WriteString(": ")
	case e.Line > 0:
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// maxErrors caps how many problems one error reports.
const maxErrors = 20

// errorList collects errors; err joins them ordered by line, with errors
// that have no line (a missing top-level section) last.
type errorList []*Error

func (l *errorList) add(e *Error) { *l = append(*l, e) }

func (l errorList) err() error {
	if len(l) == 0 {
		return nil
	}
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i].Line, l[j].Line
		if a == 0 || b == 0 {
			return a != 0 && b == 0
		}
		return a < b
	})
	if len(l) == 1 {
		return l[0]
	}
	n := min(len(l), maxErrors)
	errs := make([]error, n, n+1)
	for i, e := range l[:n] {
		errs[i] = e
	}
	if len(l) > n {
		errs = append(errs, &Error{File: l[0].File, Msg: fmt.Sprintf("and %d more errors", len(l)-n)})
	}
	return errors.Join(errs...)
}

var (
	reLine     = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
	reNotFound = regexp.MustCompile(`^field (\S+) not found in type (\S+)$`)
	reCannot   = regexp.MustCompile("^cannot unmarshal (\\S+) (`.*` )?into (\\S+)$")
	// reWhole is a whole number as the decoder quotes it (cut short with
	// "..." when long).
	reWhole = regexp.MustCompile("^`[-+]?[0-9_]+(\\.\\.\\.)?` $")
)

// yamlError turns a yaml error into positioned *Errors.
func yamlError(name string, err error, idx *index) error {
	var msgs []string
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs = te.Errors
	} else {
		msgs = []string{err.Error()}
	}
	var list errorList
	if len(msgs) > maxErrors {
		msgs = msgs[:maxErrors]
	}
	for _, m := range msgs {
		e := &Error{File: name, Msg: strings.TrimPrefix(m, "yaml: ")}
		if sm := reLine.FindStringSubmatch(m); sm != nil {
			e.Line, _ = strconv.Atoi(sm[1])
			e.Msg = sm[2]
		}
		if sm := reNotFound.FindStringSubmatch(e.Msg); sm != nil {
			e.Field = idx.pathAt(e.Line, sm[1])
			e.Msg = unknownKey(sm[1], keysOf(sm[2]))
		} else if sm := reCannot.FindStringSubmatch(e.Msg); sm != nil {
			e.Field = idx.typedPathAt(e.Line, sm[1], strings.TrimSuffix(strings.TrimPrefix(sm[2], "`"), "` "))
			e.Msg = fmt.Sprintf("wrong type: %s%s where %s is expected", yamlKind(sm[1]), strings.TrimSuffix(" "+sm[2], " "), goKind(sm[3]))
			if sm[1] == "!!float" && goKind(sm[3]) == "an integer" && reWhole.MatchString(sm[2]) {
				// A whole number too large for int64 resolves as a float.
				e.Msg = fmt.Sprintf("out of range: %s is too large for an integer", strings.TrimSpace(sm[2]))
			}
		}
		list.add(e)
	}
	return list.err()
}

func yamlKind(tag string) string {
	switch tag {
	case "!!str":
		return "string"
	case "!!int":
		return "integer"
	case "!!float":
		return "number"
	case "!!bool":
		return "boolean"
	case "!!seq":
		return "list"
	case "!!map":
		return "mapping"
	case "!!null":
		return "null"
	}
	return tag
}

func goKind(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case t == "string":
		return "a string"
	case t == "bool":
		return "true/false"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case strings.HasPrefix(t, "config."), strings.HasPrefix(t, "*config."):
		return "a mapping"
	}
	return t
}

// unknownKey is the message for key, not among allowed: the allowed key
// it is likely a typo of, when one is close (two edits at most, and
// fewer than half its letters), then the allowed keys.
func unknownKey(key string, allowed []string) string {
	msg := "unknown key"
	best, bestD := "", 3
	for _, a := range allowed {
		if len(a) < len(key)-2 || len(a) > len(key)+2 {
			continue // more than two edits apart (and a long key costs nothing)
		}
		if d := editDistance(key, a); d < bestD && 2*d < len(key) {
			best, bestD = a, d
		}
	}
	if best != "" {
		msg += fmt.Sprintf(", did you mean %s?", best)
	}
	if len(allowed) > 0 {
		msg += " (allowed here: " + strings.Join(allowed, ", ") + ")"
	}
	return msg
}

// editDistance is the Levenshtein distance between a and b, in bytes
// (keys are ASCII).
func editDistance(a, b string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// keysOf returns the YAML keys of the config type named typeName (as yaml
// names it in an error), or nil.
func keysOf(typeName string) []string {
	types := []reflect.Type{
		reflect.TypeOf(Config{}), reflect.TypeOf(Source{}), reflect.TypeOf(Waveform{}),
		reflect.TypeOf(Tone{}), reflect.TypeOf(Filter{}), reflect.TypeOf(Design{}),
		reflect.TypeOf(CUDA{}), reflect.TypeOf(Sink{}), reflect.TypeOf(Log{}), reflect.TypeOf(Metrics{}),
		reflect.TypeOf(Realtime{}), reflect.TypeOf(Stage{}), reflect.TypeOf(Control{}),
	}
	for _, f := range reflect.VisibleFields(reflect.TypeOf(Stage{})) {
		types = append(types, f.Type.Elem()) // each kind's entry
	}
	for _, t := range types {
		if t.String() == typeName {
			return yamlKeys(t)
		}
	}
	return nil
}

// yamlKeys returns the YAML keys of struct type t, following inline fields.
func yamlKeys(t reflect.Type) []string {
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		if tag == ",inline" {
			keys = append(keys, yamlKeys(f.Type)...)
			continue
		}
		if name, _, _ := strings.Cut(tag, ","); name != "" {
			keys = append(keys, name)
		}
	}
	return keys
}

// checkIntegers rejects non-integral numbers decoded into integer fields
// (yaml truncates 1.5 to 1 silently) by walking the node tree alongside the
// struct type.
func checkIntegers(n *yaml.Node, t reflect.Type, path string, c *Config, errs *errorList) {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return
		}
		fields := map[string]reflect.Type{}
		collectFields(t, fields)
		for i := 0; i+1 < len(n.Content); i += 2 {
			if ft, ok := fields[n.Content[i].Value]; ok {
				checkIntegers(n.Content[i+1], ft, join(path, n.Content[i].Value), c, errs)
			}
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return
		}
		for i, e := range n.Content {
			checkIntegers(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i), c, errs)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!float" {
			return
		}
		f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		if err != nil || f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 {
			errs.add(&Error{File: c.name, Line: n.Line, Field: path, Msg: fmt.Sprintf("must be an integer, got %s", n.Value)})
		}
	}
}

func collectFields(t reflect.Type, into map[string]reflect.Type) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		if tag == ",inline" {
			collectFields(f.Type, into)
			continue
		}
		if name, _, _ := strings.Cut(tag, ","); name != "" {
			into[name] = f.Type
		}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// index records where each key of the document is. Paths are dotted with
// [i] for sequence items: "source.components[1].signal".
type index struct {
	line map[string]int      // path -> line of the key (or of the item)
	keys map[string][]string // mapping path -> its keys in order
	at   map[int][]string    // line -> paths written on it
	null map[string]string   // path -> scalar text of values tagged !!null
	tag  map[string]string   // path -> short tag of its value (!!seq, !!str, ...)
	val  map[string]string   // path -> text of its value, for scalars
}

// maxMappingKeys bounds the keys of one mapping; the largest config
// mapping (source) has about 20.
const maxMappingKeys = 100

// maxAliasNodes bounds the nodes the index walk visits through aliases
// (billion laughs); nodes written out in the file are bounded by its size.
const maxAliasNodes = 100000

func newIndex(root *yaml.Node) (*index, error) {
	ix := &index{line: map[string]int{}, keys: map[string][]string{}, null: map[string]string{}, at: map[int][]string{},
		tag: map[string]string{}, val: map[string]string{}}
	budget := maxAliasNodes
	aliased := 0 // > 0 while inside an alias expansion
	var walk func(n *yaml.Node, path string, depth int) error
	walk = func(n *yaml.Node, path string, depth int) error {
		if depth > 100 {
			return errors.New("config too deeply nested (more than 100 levels)")
		}
		if aliased > 0 {
			if budget--; budget < 0 {
				return fmt.Errorf("config expands to more than %d nodes through aliases", maxAliasNodes)
			}
		}
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			aliased++
			defer func() { aliased-- }()
			return walk(n.Alias, path, depth+1)
		}
		if _, seen := ix.tag[path]; !seen {
			ix.tag[path] = n.ShortTag()
			if n.Kind == yaml.ScalarNode {
				ix.val[path] = n.Value
			}
		}
		switch n.Kind {
		case yaml.ScalarNode:
			if n.ShortTag() == "!!null" {
				ix.null[path] = n.Value
			}
		case yaml.MappingNode:
			if len(n.Content)/2 > maxMappingKeys {
				// Also keeps yaml's quadratic duplicate-key check cheap.
				where := path
				if where == "" {
					where = "the top level"
				}
				return fmt.Errorf("%d keys in %s; no config mapping has more than %d", len(n.Content)/2, where, maxMappingKeys)
			}
			if _, seen := ix.keys[path]; !seen {
				ix.keys[path] = []string{}
			}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i].Value
				p := join(path, k)
				if _, dup := ix.line[p]; !dup {
					ix.keys[path] = append(ix.keys[path], k)
					ix.line[p] = n.Content[i].Line
					ix.at[n.Content[i].Line] = append(ix.at[n.Content[i].Line], p)
				}
				if err := walk(n.Content[i+1], p, depth+1); err != nil {
					return err
				}
			}
		case yaml.SequenceNode:
			for i, e := range n.Content {
				p := fmt.Sprintf("%s[%d]", path, i)
				ix.line[p] = e.Line
				ix.at[e.Line] = append(ix.at[e.Line], p)
				if err := walk(e, p, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return ix, walk(root, "", 0)
}

// has reports whether path was written in the file.
func (ix *index) has(path string) bool {
	if ix == nil {
		return false
	}
	_, ok := ix.line[path]
	return ok
}

// isNull reports whether path holds a null (empty, ~ or null).
func (ix *index) isNull(path string) bool {
	if ix == nil {
		return false
	}
	_, ok := ix.null[path]
	return ok
}

// isNullWord reports whether path holds the plain word null (any case).
func (ix *index) isNullWord(path string) bool {
	v, ok := ix.null[path]
	return ok && strings.EqualFold(v, "null")
}

// lineOf returns the line of path, or of its nearest written ancestor.
func (ix *index) lineOf(path string) int {
	if ix == nil {
		return 0
	}
	for path != "" {
		if l, ok := ix.line[path]; ok {
			return l
		}
		cut := strings.LastIndexAny(path, ".[")
		if cut < 0 {
			break
		}
		path = path[:cut]
	}
	return 0
}

// pathAt finds the path of the key named key (any key if "") on line,
// preferring the deepest one.
// typedPathAt is the path on line whose value has the given tag (and
// scalar text, if any): in flow style ({a: 1, b: [x]}) many keys share a
// line, and the type error names only the value. A sequence item is
// reported as its sequence ("filter.taps").
func (ix *index) typedPathAt(line int, tag, value string) string {
	if ix == nil {
		return ""
	}
	pick := func(matchValue bool) string {
		for _, p := range ix.at[line] { // document order
			if ix.tag[p] != tag || matchValue && ix.val[p] != value {
				continue
			}
			if i := strings.LastIndexByte(p, '['); i > 0 && strings.HasSuffix(p, "]") {
				return p[:i]
			}
			return p
		}
		return ""
	}
	if p := pick(value != ""); p != "" {
		return p
	}
	if p := pick(false); p != "" {
		return p
	}
	return ix.pathAt(line, "")
}

func (ix *index) pathAt(line int, key string) string {
	if ix == nil {
		return key
	}
	best := ""
	for _, p := range ix.at[line] {
		if strings.HasSuffix(p, "]") {
			continue
		}
		if key != "" && p != key && !strings.HasSuffix(p, "."+key) {
			continue
		}
		if len(p) > len(best) || (len(p) == len(best) && p < best) {
			best = p
		}
	}
	if best == "" {
		// Sequence items (e.g. a bad tap) are indexed by item only.
		for _, p := range ix.at[line] {
			if len(p) > len(best) || (len(p) == len(best) && p < best) {
				best = p
			}
		}
	}
	if best == "" {
		return key
	}
	return best
}
