// Package control is the live control side of a run: one HTTP server that
// serves the control page (embedded, no network fetches), a JSON API and
// /metrics, and the retuning of stage parameters while the run goes on.
//
// API (JSON in and out; errors are 4xx with {"error": "..."}, and no
// request ever disturbs the run):
//
//	GET  /api/status                  counters, ring fill, latency p50/p99,
//	                                  backend, the stages with their parameters
//	GET  /api/spectrum?point=P        Welch PSD of recent samples at P = input,
//	                                  output or stage-N: {"freq_hz", "db", ...}
//	GET  /api/response?stage=N        |H(f)| in dB of fir stage N's taps
//	POST /api/stages/N                new parameters for stage N in the config's
//	                                  stage schema, as JSON; {"applied_at_sample": K}
//	GET  /metrics                     Prometheus
//
// A retune takes effect at one block boundary: K is the index, in stage
// N's input stream, of the first sample processed with the new parameters
// (package stage has the exact semantics). A change of structure (kind,
// decimation, a stage that does not exist) is refused with 409, as is a
// retune the backend cannot apply (cuda, for now). Reload applies a
// config file's stage parameters by the same rules (SIGHUP, watch_config).
//
// Access, as trusted local web tools (Jupyter, Syncthing) do it: a Host
// that is not an IP literal, localhost or an allowed name gets 421 (DNS
// rebinding); a POST must be Content-Type: application/json (415) and, when
// it names an Origin (or a Referer), come from this server's (403); with a
// token (control.allow_remote), writes carry it (401). Other methods on
// known paths get 405. Reads are cached (a response until the next
// retune, a spectrum for 100 ms), computed one at a time, and limited to
// 100 a second (429); bodies are streamed, two decoded at once. The
// sample path never waits for the API.
package control
