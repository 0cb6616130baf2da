#!/usr/bin/env python3
"""GNU Radio 3.10 ends of sigproc's ZeroMQ interop tests and benchmarks.

No GRC: each role is a small gr.top_block built from gr-zeromq blocks.
Samples are raw little-endian float32 files (complex: interleaved I,Q), as
sigproc writes them. Run with Debian's python (/usr/bin/python3).

  recv  (pull | sub):  connect, take --items items (of --vlen channels), write them to --out
  send  (push | pub):  bind, send --in (repeated with --repeat), until the
                        flowgraph ends or --seconds passes
  tags:                GR push_sink(pass_tags) -> [sigproc] -> GR pull_source(pass_tags):
                        sends --in with rx_time/rx_freq tags, receives --items,
                        writes the samples to --out and the tags as JSON to --tags-out
  rate  (pull):        connect, count --items items as fast as they come, print MS/s

The recv/send roles print "ready" on stdout once the socket is set up, and
"done" when finished.
"""
import argparse
import json
import sys
import time

import numpy as np
import pmt
from gnuradio import blocks, gr, zeromq


def itemsize(cplx):
    return gr.sizeof_gr_complex if cplx else gr.sizeof_float


def load(path, cplx):
    x = np.fromfile(path, dtype=np.float32)
    if cplx:
        x = x[0::2] + 1j * x[1::2]
        return x.astype(np.complex64)
    return x


def recv(a):
    tb = gr.top_block()
    # gr-zeromq's item is itemsize × vlen bytes: with vlen N one item is a
    # frame of N channels, and --items counts frames.
    if a.pattern == "pull":
        src = zeromq.pull_source(itemsize(a.complex), a.vlen, a.endpoint, 100, a.pass_tags, -1)
    else:
        src = zeromq.sub_source(itemsize(a.complex), a.vlen, a.endpoint, 100, a.pass_tags, -1)
    size = itemsize(a.complex) * a.vlen
    head = blocks.head(size, a.items)
    sink = blocks.file_sink(size, a.out, False)
    sink.set_unbuffered(False)
    tb.connect(src, head, sink)
    tb.start()
    print("ready", flush=True)
    # Stopped once the file sink has taken every item, not once head has
    # passed them: those still between the two were lost (seen in CI:
    # 114632 of 120000 values). The flowgraph does not end by itself, as
    # the ZeroMQ source never finishes.
    deadline = time.time() + a.seconds
    while sink.nitems_read(0) < a.items and time.time() < deadline:
        time.sleep(0.01)
    tb.stop()
    tb.wait()
    got = head.nitems_written(0)
    print("done", got, flush=True)
    return 0 if got == a.items else 1


def send(a):
    tb = gr.top_block()
    size = itemsize(a.complex)
    data = load(a.inp, a.complex)
    if a.complex:
        src = blocks.vector_source_c(data.tolist(), a.repeat)
    else:
        src = blocks.vector_source_f(data.tolist(), a.repeat)
    if a.pattern == "push":
        snk = zeromq.push_sink(size, 1, a.endpoint, 100, a.pass_tags, -1)
    else:
        snk = zeromq.pub_sink(size, 1, a.endpoint, 100, a.pass_tags, -1)
    tb.connect(src, snk)
    print("ready", flush=True)
    # Wait for the go line: the test starts the stream once its receiver
    # is connected (pub drops what nobody is subscribed to).
    if a.wait_go:
        sys.stdin.readline()
    tb.start()
    if a.repeat:
        time.sleep(a.seconds)
        tb.stop()
    tb.wait()
    print("done", flush=True)
    return 0


def tags(a):
    """GR -> sigproc -> GR with pass_tags on both links."""
    size = itemsize(a.complex)
    data = load(a.inp, a.complex)
    t0 = pmt.make_tuple(pmt.from_uint64(1700000000), pmt.from_double(0.25))
    src_tags = [
        gr.tag_utils.python_to_tag((0, pmt.intern("rx_time"), t0, pmt.intern("gr"))),
        gr.tag_utils.python_to_tag((0, pmt.intern("rx_freq"), pmt.from_double(433.92e6), pmt.intern("gr"))),
        gr.tag_utils.python_to_tag((a.tag_at, pmt.intern("rx_freq"), pmt.from_double(868.0e6), pmt.intern("gr"))),
    ]
    if a.complex:
        src = blocks.vector_source_c(data.tolist(), False, 1, src_tags)
    else:
        src = blocks.vector_source_f(data.tolist(), False, 1, src_tags)
    tx = gr.top_block()
    tx.connect(src, zeromq.push_sink(size, 1, a.endpoint, 100, True, -1))
    rx = gr.top_block()
    pull = zeromq.pull_source(size, 1, a.endpoint2, 100, True, -1)
    head = blocks.head(size, a.items)
    if a.complex:
        vs = blocks.vector_sink_c()
    else:
        vs = blocks.vector_sink_f()
    rx.connect(pull, head, vs)
    rx.start()
    tx.start()
    print("ready", flush=True)
    deadline = time.time() + a.seconds
    while vs.nitems_read(0) < a.items and time.time() < deadline:  # as recv
        time.sleep(0.01)
    rx.stop()
    rx.wait()
    tx.stop()
    tx.wait()
    y = np.array(vs.data(), dtype=np.complex64 if a.complex else np.float32)
    y.view(np.float32).tofile(a.out)
    out = []
    for t in vs.tags():
        v = t.value
        if pmt.is_tuple(v):
            val = [pmt.to_python(pmt.tuple_ref(v, i)) for i in range(pmt.length(v))]
        else:
            val = pmt.to_python(v)
        out.append({"offset": t.offset, "key": pmt.symbol_to_string(t.key), "value": val})
    with open(a.tags_out, "w") as f:
        json.dump(out, f)
    print("done", len(y), flush=True)
    return 0 if len(y) == a.items else 1


def rate(a):
    tb = gr.top_block()
    size = itemsize(a.complex)
    src = zeromq.pull_source(size, 1, a.endpoint, 100, a.pass_tags, -1)
    head = blocks.head(size, a.items)
    tb.connect(src, head, blocks.null_sink(size))
    tb.start()
    print("ready", flush=True)
    while head.nitems_written(0) == 0:
        time.sleep(0.001)
    t = time.perf_counter()
    n0 = head.nitems_written(0)
    deadline = time.time() + a.seconds
    while head.nitems_written(0) < a.items and time.time() < deadline:
        time.sleep(0.001)
    dt = time.perf_counter() - t
    tb.stop()
    tb.wait()
    print("done %d items %.3f s %.2f MS/s" % (a.items - n0, dt, (a.items - n0) / dt / 1e6), flush=True)
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("role", choices=["recv", "send", "tags", "rate"])
    p.add_argument("--pattern", choices=["push", "pull", "pub", "sub"], default="pull")
    p.add_argument("--endpoint", required=True)
    p.add_argument("--endpoint2", help="tags: where sigproc's push sink binds")
    p.add_argument("--complex", action="store_true")
    p.add_argument("--pass-tags", action="store_true")
    p.add_argument("--items", type=int, default=0)
    p.add_argument("--vlen", type=int, default=1, help="recv: channels per item (vector stream)")
    p.add_argument("--in", dest="inp")
    p.add_argument("--out")
    p.add_argument("--tags-out")
    p.add_argument("--tag-at", type=int, default=1000)
    p.add_argument("--repeat", action="store_true")
    p.add_argument("--wait-go", action="store_true")
    p.add_argument("--seconds", type=float, default=60)
    a = p.parse_args()
    return {"recv": recv, "send": send, "tags": tags, "rate": rate}[a.role](a)


if __name__ == "__main__":
    sys.exit(main())
