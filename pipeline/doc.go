// Package pipeline moves blocks of samples from a source through a filter
// backend to a sink.
//
// The producer goroutine reads the source into a single-producer,
// single-consumer Ring of fixed-size blocks. The ring lives in a memory
// region its Backend provides: Go memory for the CPU, pinned host memory
// that the GPU copies from for the explicit CUDA transport. For the
// zero-copy transport a WordSource writes each block straight into the
// mapped words the persistent kernel polls (Ring.SetWordSlots); any other
// source fills the ring's slot, copied there at publish time. The consumer
// side (a host goroutine calling Backend.Next) writes filtered blocks to
// the sink in order, counting gaps.
//
// Nothing is lost silently: under PolicyDrop every block discarded because
// the ring was full is counted in Stats, and its sequence number is never
// reused, so the consumer sees the gap as well.
package pipeline
