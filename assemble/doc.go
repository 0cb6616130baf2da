// Package assemble builds a run from a config: the source, the stage
// chain, the backend and the sink, in the order that keeps outputs safe.
// `sigproc run` and `sigproc probe` both assemble through it, so a config
// means the same thing to each.
//
// The order (see Open) is the safety contract of docs/SAFETY.md: the source
// is opened first, so the sink can refuse to write over any of the run's
// inputs; the sink is only planned (checked, not created) before the
// backend and ring start, and created by Run.Started once they have, so a
// run that fails to start leaves an existing output as it was.
package assemble
