// Hand-written; the channelizer's polyphase sum (channelize.go): the
// column sums of two matrices' elementwise product, 32 columns at a time
// in four accumulators, then 8 at a time.

//go:build amd64 && !purego

#include "textflag.h"

// func polySumAVX2(v, h, x []float32, m, p int)
//
// For j < len(v) (a multiple of 8): v[j] = Σ_{q<p} h[q·m+j]·x[q·m+j].
TEXT ·polySumAVX2(SB), NOSPLIT, $0-88
	MOVQ v_base+0(FP), DI
	MOVQ v_len+8(FP), CX
	MOVQ h_base+24(FP), SI
	MOVQ x_base+48(FP), DX
	MOVQ m+72(FP), R9
	SHLQ $2, R9 // row stride in bytes
	MOVQ p+80(FP), BX
	MOVQ CX, R10
	SHRQ $5, R10
	JZ   polySum_eights

polySum_chunk:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	MOVQ SI, R11
	MOVQ DX, R12
	MOVQ BX, R13

polySum_row:
	VMOVUPS (R11), Y4
	VMOVUPS 32(R11), Y5
	VMOVUPS 64(R11), Y6
	VMOVUPS 96(R11), Y7
	VFMADD231PS (R12), Y4, Y0
	VFMADD231PS 32(R12), Y5, Y1
	VFMADD231PS 64(R12), Y6, Y2
	VFMADD231PS 96(R12), Y7, Y3
	ADDQ R9, R11
	ADDQ R9, R12
	DECQ R13
	JNZ  polySum_row
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, DI
	ADDQ $128, SI
	ADDQ $128, DX
	DECQ R10
	JNZ  polySum_chunk

polySum_eights:
	MOVQ CX, R10
	ANDQ $31, R10
	SHRQ $3, R10
	JZ   polySum_done

polySum_eight:
	VXORPS Y0, Y0, Y0
	MOVQ SI, R11
	MOVQ DX, R12
	MOVQ BX, R13

polySum_row8:
	VMOVUPS (R11), Y4
	VFMADD231PS (R12), Y4, Y0
	ADDQ R9, R11
	ADDQ R9, R12
	DECQ R13
	JNZ  polySum_row8
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	ADDQ $32, DX
	DECQ R10
	JNZ  polySum_eight

polySum_done:
	VZEROUPPER
	RET
