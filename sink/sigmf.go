package sink

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"time"
)

// SigMFMeta is the metadata of a SigMF recording.
type SigMFMeta struct {
	Datatype    string  // rf32_le, cf32_le, ri16_le or ci16_le
	SampleRate  float64 // samples per second, > 0
	Description string  // core:description, omitted if empty
	Author      string  // core:author, omitted if empty
	HW          string  // core:hw, omitted if empty
	// FrequencyHz is the capture's centre frequency (captures[0]
	// core:frequency); 0 omits it.
	FrequencyHz float64
	// Datetime is the time of the first sample (captures[0] core:datetime,
	// RFC 3339 UTC); the zero time omits it.
	Datetime time.Time
	// Extra holds further global fields. Keys must be namespaced
	// ("ns:key") and must not repeat a field set from the other members.
	Extra map[string]any
}

// SigMF writes <base>.sigmf-data while running and <base>.sigmf-meta on Close.
type SigMF struct {
	*Raw
	metaPath string
	meta     []byte // encoded metadata, prepared at creation
}

// sigmfReserved reports whether CreateSigMF sets global key k itself.
func sigmfReserved(k string) bool {
	switch k {
	case "core:version", "core:datatype", "core:sample_rate", "core:recorder",
		"core:description", "core:author", "core:hw":
		return true
	}
	return false
}

// CreateSigMF creates basePath.sigmf-data (basePath may already end in
// .sigmf-data or .sigmf-meta). The metadata is validated and encoded now so
// that a bad Extra value fails here rather than after the recording.
func CreateSigMF(basePath string, meta SigMFMeta) (*SigMF, error) {
	base := strings.TrimSuffix(strings.TrimSuffix(basePath, ".sigmf-data"), ".sigmf-meta")
	if base == "" {
		return nil, errors.New("sink: sigmf: empty base path")
	}
	f, err := lookupFormat(meta.Datatype)
	if err != nil {
		return nil, fmt.Errorf("sink: sigmf %s: %w", base, err)
	}
	encoded, err := encodeSigMFMeta(meta)
	if err != nil {
		return nil, fmt.Errorf("sink: sigmf %s: %w", base, err)
	}
	dataPath := base + ".sigmf-data"
	file, err := os.Create(dataPath)
	if err != nil {
		return nil, fmt.Errorf("sink: sigmf: %w", err)
	}
	return &SigMF{Raw: newRaw(file, file, dataPath, f), metaPath: base + ".sigmf-meta", meta: encoded}, nil
}

func encodeSigMFMeta(m SigMFMeta) ([]byte, error) {
	if !(m.SampleRate > 0) || math.IsInf(m.SampleRate, 0) {
		return nil, fmt.Errorf("sample rate %g must be a positive finite number", m.SampleRate)
	}
	if math.IsNaN(m.FrequencyHz) || math.IsInf(m.FrequencyHz, 0) {
		return nil, fmt.Errorf("frequency %g is not finite", m.FrequencyHz)
	}
	global := map[string]any{
		"core:version":     "1.0.0",
		"core:datatype":    m.Datatype,
		"core:sample_rate": m.SampleRate,
		"core:recorder":    "sigproc",
	}
	for k, v := range map[string]string{"core:description": m.Description, "core:author": m.Author, "core:hw": m.HW} {
		if v != "" {
			global[k] = v
		}
	}
	for k, v := range m.Extra {
		ns, name, ok := strings.Cut(k, ":")
		if !ok || ns == "" || name == "" {
			return nil, fmt.Errorf("extra key %q is not namespaced (want \"ns:key\")", k)
		}
		if sigmfReserved(k) {
			return nil, fmt.Errorf("extra key %q is set by the recorder; use the SigMFMeta field", k)
		}
		global[k] = v
	}
	capture := map[string]any{"core:sample_start": 0}
	if m.FrequencyHz != 0 {
		capture["core:frequency"] = m.FrequencyHz
	}
	if !m.Datetime.IsZero() {
		capture["core:datetime"] = m.Datetime.UTC().Format(time.RFC3339Nano)
	}
	doc := map[string]any{
		"global":      global,
		"captures":    []any{capture},
		"annotations": []any{},
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode metadata: %w", err)
	}
	return append(b, '\n'), nil
}

// Close flushes and closes the data file, then writes the metadata file
// (through a temporary file and a rename, so a reader never sees half of
// it). The metadata is written even if the data failed, to describe what
// reached the disk; the first error is returned.
func (s *SigMF) Close() error {
	if s.closed {
		return ErrClosed
	}
	err := s.Raw.Close()
	tmp := s.metaPath + ".tmp"
	if werr := os.WriteFile(tmp, s.meta, 0o644); werr != nil {
		os.Remove(tmp)
		return errors.Join(err, fmt.Errorf("sink: sigmf: %w", werr))
	}
	if rerr := os.Rename(tmp, s.metaPath); rerr != nil {
		os.Remove(tmp)
		return errors.Join(err, fmt.Errorf("sink: sigmf: %w", rerr))
	}
	return err
}

// MetaPath returns the path of the .sigmf-meta file written on Close.
func (s *SigMF) MetaPath() string { return s.metaPath }
