// Package config loads and validates sigproc run configurations.
//
// A configuration is one strict YAML document (see configs/ and README.md for
// the schema). Decoding is strict: unknown keys, wrong types, non-integral
// numbers for integer fields, keys the chosen source/signal/filter type does
// not use, and multiple documents are all errors. Every error names the file
// and the line of the offending key:
//
//	configs/x.yaml:12: source.sample_rate: must be > 0, got -5
//
// Load and Parse fill in defaults (documented on each field) and run
// Validate. Relative source and taps_file paths are resolved against the
// config file's directory; relative sink paths are left relative to the
// current working directory, because outputs belong where the user runs the
// tool, while inputs usually live next to the config.
package config
