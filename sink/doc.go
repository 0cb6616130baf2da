// Package sink writes processed samples: to nowhere (counting only), to raw
// little-endian sample files or streams, or to SigMF recordings.
//
// Samples are float32, interleaved I,Q for complex streams, as everywhere in
// sigproc. Float formats store values as they are; int16 formats scale by
// 32768, round, and clip to the int16 range, counting clipped values so that
// overload is visible rather than silent.
//
// Writes are buffered in a byte buffer allocated once per sink, so Write
// allocates nothing; Close flushes.
//
// Errors from Write and Close name the file or endpoint but not the
// package, since their callers already say which sink failed ("write sink:"
// in the pipeline, "close sink file out.cf32:" in the CLI); constructors'
// errors and the sentinels say "sink:".
package sink
