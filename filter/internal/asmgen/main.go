// Command asmgen writes filter/fir_amd64.s, the AVX2 and AVX-512 FIR
// kernels for real and interleaved I/Q data. Run it through go generate
// in package filter.
//
// Each kernel computes dst[i] = Σ_j rev[j]·buf[i+j] (a sliding dot
// product) eight vectors of outputs at a time. The naive inner step
// (broadcast one tap, FMA it into eight accumulators with eight
// unaligned loads) is load-bound: nine loads per eight FMAs, many of
// them split across cache lines. Instead the taps are walked in blocks
// of R·W (W = lanes per vector): for j < W the taps j, j+W, ... j+(R-1)W
// are broadcast once, and because tap j+rW applied to output vector m
// needs the same data as tap j applied to vector m+r, each of the R+7
// data vectors is loaded once and feeds up to R FMAs. With R = 4 that
// is 15 loads per 32 FMAs, so the FMA ports become the limit. Taps left
// over after the R = 4 blocks go through R = 2 blocks, then one at a
// time.
//
// Block lengths that are not a multiple of 8·W finish with one more
// full-width pass that overlaps the previous one; the recomputed
// outputs are bit-identical, so no scalar tail is needed for n >= W.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"strings"
)

type kernel struct {
	name   string
	w      int    // float32 lanes per vector
	reg    string // "Y" or "Z"
	zero   string // zeroing instruction
	stages []int  // R values for the blocked stages, then 1 is implied
	split  bool   // second accumulator set (shorter FMA chains)
	temps  []int  // registers for loaded data
	bcast  []int  // registers for broadcast taps
	accC   int    // first register of the second accumulator set
	doc    string
	stride int // floats between consecutive inputs of one channel (2: interleaved I/Q)
}

var base = []kernel{
	{
		name: "firAVX2", w: 8, reg: "Y", zero: "VXORPS", stages: []int{4, 2},
		bcast: []int{8, 9, 10, 11}, temps: []int{12, 13, 14, 15},
		doc: "needs AVX2 and FMA",
	},
	{
		name: "firAVX512", w: 16, reg: "Z", zero: "VPXORD", stages: []int{4, 2},
		split: true, accC: 8, bcast: []int{16, 17, 18, 19},
		temps: []int{20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30},
		doc:   "needs AVX512F",
	},
}

// kernels returns each base kernel for real data (stride 1) and for
// interleaved I/Q (stride 2, name suffix "IQ"). With stride s, one
// vector of W floats holds W/s outputs of every channel, and tap j reads
// data s·j floats on, so the blocked taps are j + r·W/s.
func kernels() []kernel {
	var ks []kernel
	for _, k := range base {
		k.stride = 1
		ks = append(ks, k)
		k.stride = 2
		k.name += "IQ"
		ks = append(ks, k)
	}
	return ks
}

const nvec = 8 // output vectors per wide pass

func log2(v int) int {
	n := 0
	for v > 1 {
		v >>= 1
		n++
	}
	return n
}

type gen struct {
	b strings.Builder
	k kernel
}

func (g *gen) p(format string, args ...any) { fmt.Fprintf(&g.b, format+"\n", args...) }
func (g *gen) r(n int) string               { return fmt.Sprintf("%s%d", g.k.reg, n) }

// acc returns the accumulator for output vector m fed by tap offset r.
func (g *gen) acc(m, r int) string {
	if g.k.split && r%2 == 1 {
		return g.r(g.k.accC + m)
	}
	return g.r(m)
}

func (g *gen) kernel() {
	k := g.k
	vb := k.w * 4 // bytes per vector
	wide := nvec * k.w
	tw := k.w / k.stride // taps per vector step
	db := 4 * k.stride   // data bytes per tap
	g.p("// func %s(dst, buf, rev []float32)", k.name)
	g.p("//")
	g.p("// dst[i] = Σ_j rev[j]·buf[i+%d·j] for all len(dst) >= %d outputs; %s.", k.stride, k.w, k.doc)
	g.p("// len(buf) must be >= len(dst)+%d·(len(rev)-1) and len(rev) >= 1.", k.stride)
	g.p("TEXT ·%s(SB), NOSPLIT, $0-72", k.name)
	g.p("\tMOVQ dst_base+0(FP), DI")
	g.p("\tMOVQ dst_len+8(FP), CX")
	g.p("\tMOVQ buf_base+24(FP), SI")
	g.p("\tMOVQ rev_base+48(FP), R8")
	g.p("\tMOVQ rev_len+56(FP), R9")
	cnt := []string{"BX", "DX"}
	for s, R := range k.stages {
		g.p("\tMOVQ R9, %s", cnt[s])
		g.p("\tSHRQ $%d, %s // blocks of %d taps", log2(R*tw), cnt[s], R*tw)
		g.p("\tANDQ $%d, R9", R*tw-1)
	}
	g.p("\tXORQ AX, AX // first output of this pass")
	g.p("\tCMPQ CX, $%d", wide)
	g.p("\tJLT  %s_single", k.name)
	g.p("")
	g.p("%s_wide:", k.name)
	g.p("\tMOVQ CX, R10")
	g.p("\tSUBQ AX, R10")
	g.p("\tCMPQ R10, $%d", wide)
	g.p("\tJGE  %s_wideok", k.name)
	g.p("\tMOVQ CX, AX // overlap the last pass")
	g.p("\tSUBQ $%d, AX", wide)
	g.p("")
	g.p("%s_wideok:", k.name)
	for m := 0; m < nvec; m++ {
		g.p("\t%s %s, %s, %s", k.zero, g.r(m), g.r(m), g.r(m))
		if k.split {
			c := g.r(k.accC + m)
			g.p("\t%s %s, %s, %s", k.zero, c, c, c)
		}
	}
	g.p("\tLEAQ (SI)(AX*4), R11 // &buf[i]")
	g.p("\tMOVQ R8, R12         // &rev[0]")
	for s, R := range k.stages {
		lbl := fmt.Sprintf("%s_r%d", k.name, R)
		g.p("\tMOVQ  %s, R13", cnt[s])
		g.p("\tTESTQ R13, R13")
		g.p("\tJZ    %s_done", lbl)
		g.p("")
		g.p("%s_blk:", lbl)
		g.p("\tMOVQ $%d, R10", tw)
		g.p("")
		g.p("%s_j:", lbl)
		for r := 0; r < R; r++ {
			g.p("\tVBROADCASTSS %d(R12), %s", r*tw*4, g.r(k.bcast[r]))
		}
		for kk := 0; kk < R+nvec-1; kk++ {
			t := g.r(k.temps[kk%len(k.temps)])
			g.p("\tVMOVUPS %d(R11), %s", kk*vb, t)
			for r := 0; r < R; r++ {
				if m := kk - r; m >= 0 && m < nvec {
					g.p("\tVFMADD231PS %s, %s, %s", t, g.r(k.bcast[r]), g.acc(m, r))
				}
			}
		}
		g.p("\tADDQ $%d, R11", db)
		g.p("\tADDQ $4, R12")
		g.p("\tDECQ R10")
		g.p("\tJNZ  %s_j", lbl)
		g.p("\tADDQ $%d, R11", (R-1)*vb)
		g.p("\tADDQ $%d, R12", (R-1)*tw*4)
		g.p("\tDECQ R13")
		g.p("\tJNZ  %s_blk", lbl)
		g.p("")
		g.p("%s_done:", lbl)
	}
	lbl := k.name + "_r1"
	g.p("\tMOVQ  R9, R13")
	g.p("\tTESTQ R13, R13")
	g.p("\tJZ    %s_done", lbl)
	g.p("")
	g.p("%s_tap:", lbl)
	b0 := g.r(k.bcast[0])
	g.p("\tVBROADCASTSS (R12), %s", b0)
	for m := 0; m < nvec; m++ {
		g.p("\tVFMADD231PS %d(R11), %s, %s", m*vb, b0, g.r(m))
	}
	g.p("\tADDQ $%d, R11", db)
	g.p("\tADDQ $4, R12")
	g.p("\tDECQ R13")
	g.p("\tJNZ  %s_tap", lbl)
	g.p("")
	g.p("%s_done:", lbl)
	g.p("\tLEAQ (DI)(AX*4), R11")
	for m := 0; m < nvec; m++ {
		if k.split {
			g.p("\tVADDPS %s, %s, %s", g.r(k.accC+m), g.r(m), g.r(m))
		}
		g.p("\tVMOVUPS %s, %d(R11)", g.r(m), m*vb)
	}
	g.p("\tADDQ $%d, AX", wide)
	g.p("\tCMPQ AX, CX")
	g.p("\tJLT  %s_wide", k.name)
	g.p("\tJMP  %s_ret", k.name)
	g.p("")
	g.p("// Fewer than %d outputs: one vector per pass, all taps in turn.", wide)
	g.p("%s_single:", k.name)
	g.p("\tMOVQ CX, R10")
	g.p("\tSUBQ AX, R10")
	g.p("\tCMPQ R10, $%d", k.w)
	g.p("\tJGE  %s_singleok", k.name)
	g.p("\tMOVQ CX, AX")
	g.p("\tSUBQ $%d, AX", k.w)
	g.p("")
	g.p("%s_singleok:", k.name)
	g.p("\t%s %s, %s, %s", k.zero, g.r(0), g.r(0), g.r(0))
	g.p("\tLEAQ (SI)(AX*4), R11")
	g.p("\tMOVQ R8, R12")
	g.p("\tMOVQ rev_len+56(FP), R13")
	g.p("")
	g.p("%s_stap:", k.name)
	g.p("\tVBROADCASTSS (R12), %s", b0)
	g.p("\tVFMADD231PS (R11), %s, %s", b0, g.r(0))
	g.p("\tADDQ $%d, R11", db)
	g.p("\tADDQ $4, R12")
	g.p("\tDECQ R13")
	g.p("\tJNZ  %s_stap", k.name)
	g.p("\tVMOVUPS %s, (DI)(AX*4)", g.r(0))
	g.p("\tADDQ $%d, AX", k.w)
	g.p("\tCMPQ AX, CX")
	g.p("\tJLT  %s_single", k.name)
	g.p("")
	g.p("%s_ret:", k.name)
	g.p("\tVZEROUPPER")
	g.p("\tRET")
	g.p("")
}

func main() {
	out := flag.String("out", "fir_amd64.s", "output file")
	flag.Parse()
	var all strings.Builder
	all.WriteString("// Code generated by filter/internal/asmgen; DO NOT EDIT.\n\n")
	all.WriteString("//go:build amd64 && !purego\n\n#include \"textflag.h\"\n\n")
	for _, k := range kernels() {
		g := &gen{k: k}
		g.kernel()
		all.WriteString(g.b.String())
	}
	if err := os.WriteFile(*out, []byte(all.String()), 0o644); err != nil {
		log.Fatalf("write %s: %v", *out, err)
	}
}
