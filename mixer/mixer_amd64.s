//go:build amd64 && !purego

#include "textflag.h"

// func mulIQAVX2(dst, src, tab []float32, c uint64)
//
// dst[i] = src[i]·tab[i]·c for interleaved complex values, len(dst) a
// multiple of 8 floats; src and tab at least as long. A complex product
// a·b is a·re(b) ∓ swap(a)·im(b): VMOVSLDUP/VMOVSHDUP spread re(b) and
// im(b), VPERMILPS $0xB1 swaps re and im of a, VFMADDSUB231PS subtracts
// in the even (real) lanes and adds in the odd ones.
TEXT ·mulIQAVX2(SB), NOSPLIT, $0-80
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ src_base+24(FP), SI
	MOVQ tab_base+48(FP), DX
	VBROADCASTSD c+72(FP), Y0
	VMOVSLDUP Y0, Y1 // re(c)
	VMOVSHDUP Y0, Y2 // im(c)
	SHRQ $3, CX
	JZ   iqdone

iqloop:
	VMOVUPS   (DX), Y3
	VPERMILPS $0xB1, Y3, Y4
	VMULPS    Y2, Y4, Y4
	VFMADDSUB231PS Y1, Y3, Y4 // t = tab·c
	VMOVSLDUP Y4, Y5
	VMOVSHDUP Y4, Y6
	VMOVUPS   (SI), Y7
	VPERMILPS $0xB1, Y7, Y8
	VMULPS    Y6, Y8, Y8
	VFMADDSUB231PS Y5, Y7, Y8 // src·t
	VMOVUPS   Y8, (DI)
	ADDQ $32, DX
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  iqloop

iqdone:
	VZEROUPPER
	RET

// func mulRealAVX2(dst, src, tab []float32, c uint64)
//
// dst[2i], dst[2i+1] = src[i]·tab[i]·c for real src, len(dst) a multiple of
// 8 floats; len(src) >= len(dst)/2, len(tab) >= len(dst).
TEXT ·mulRealAVX2(SB), NOSPLIT, $0-80
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ src_base+24(FP), SI
	MOVQ tab_base+48(FP), DX
	VBROADCASTSD c+72(FP), Y0
	VMOVSLDUP Y0, Y1
	VMOVSHDUP Y0, Y2
	SHRQ $3, CX
	JZ   redone

reloop:
	VMOVUPS   (DX), Y3
	VPERMILPS $0xB1, Y3, Y4
	VMULPS    Y2, Y4, Y4
	VFMADDSUB231PS Y1, Y3, Y4 // t = tab·c
	VMOVUPS   (SI), X7
	VUNPCKLPS X7, X7, X8 // x0 x0 x1 x1
	VUNPCKHPS X7, X7, X9 // x2 x2 x3 x3
	VINSERTF128 $1, X9, Y8, Y8
	VMULPS    Y4, Y8, Y8
	VMOVUPS   Y8, (DI)
	ADDQ $32, DX
	ADDQ $16, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  reloop

redone:
	VZEROUPPER
	RET
