// Package zmq carries sample streams over ZeroMQ the way GNU Radio's
// gr-zeromq blocks do: ZMTP 3.0 with the NULL mechanism, one sample buffer
// per message, optionally prefixed by gr-zeromq's tag header.
//
// The handshake (greeting, READY and its metadata, socket-type check) is
// github.com/go-zeromq/zmq4's, a pure-Go ZMTP implementation. After it,
// data frames are read and written here directly on the connection: one
// write per message with no allocation, a bound on the size a peer may
// declare, and sockets whose semantics sigproc controls (which peer gets a
// message, what happens when there is none, what is counted as lost).
//
// Endpoints are tcp://host:port and ipc://path, as in libzmq; bind accepts
// tcp://*:port and an ephemeral port written as * or 0.
package zmq
