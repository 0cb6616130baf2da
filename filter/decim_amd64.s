// Hand-written; the decimating kernels of Decimator and Resampler (see
// strided.go). Each output is a dot product of a window of buf with the
// tap vector, windows stride floats apart; eight outputs share each tap
// load, so a pass makes 9 loads per 8 FMAs and needs no shuffles.

//go:build amd64 && !purego

#include "textflag.h"

// func decimAVX2(dst, buf, taps []float32, stride int)
//
// For each output i < len(dst)/1 (a multiple of 8 outputs):
// dst[1i] = Σ_v taps[v]·buf[i·stride+v];
// len(taps) is a multiple of 8 and buf holds every window.
TEXT ·decimAVX2(SB), NOSPLIT, $0-80
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	SHRQ $3, CX // groups of 8 outputs
	JZ   decimAVX2_done
	MOVQ buf_base+24(FP), SI
	MOVQ taps_base+48(FP), R8
	MOVQ taps_len+56(FP), BX
	SHRQ $3, BX // tap vectors
	MOVQ stride+72(FP), R9
	SHLQ $2, R9 // stride in bytes
	LEAQ (R9)(R9*2), R10

decimAVX2_group:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	MOVQ SI, R11
	LEAQ (SI)(R9*4), R15
	MOVQ R8, R12
	MOVQ BX, R13

decimAVX2_tap:
	VMOVUPS (R12), Y8
	VFMADD231PS (R11), Y8, Y0
	VFMADD231PS (R11)(R9*1), Y8, Y1
	VFMADD231PS (R11)(R9*2), Y8, Y2
	VFMADD231PS (R11)(R10*1), Y8, Y3
	VFMADD231PS (R15), Y8, Y4
	VFMADD231PS (R15)(R9*1), Y8, Y5
	VFMADD231PS (R15)(R9*2), Y8, Y6
	VFMADD231PS (R15)(R10*1), Y8, Y7
	ADDQ $32, R11
	ADDQ $32, R15
	ADDQ $32, R12
	DECQ R13
	JNZ  decimAVX2_tap
	VEXTRACTF128 $1, Y0, X9
	VADDPS X9, X0, X0
	VMOVHLPS X0, X0, X9
	VADDPS X9, X0, X0
	VMOVSHDUP X0, X9
	VADDSS X9, X0, X0
	VMOVSS X0, 0(DI)
	VEXTRACTF128 $1, Y1, X9
	VADDPS X9, X1, X1
	VMOVHLPS X1, X1, X9
	VADDPS X9, X1, X1
	VMOVSHDUP X1, X9
	VADDSS X9, X1, X1
	VMOVSS X1, 4(DI)
	VEXTRACTF128 $1, Y2, X9
	VADDPS X9, X2, X2
	VMOVHLPS X2, X2, X9
	VADDPS X9, X2, X2
	VMOVSHDUP X2, X9
	VADDSS X9, X2, X2
	VMOVSS X2, 8(DI)
	VEXTRACTF128 $1, Y3, X9
	VADDPS X9, X3, X3
	VMOVHLPS X3, X3, X9
	VADDPS X9, X3, X3
	VMOVSHDUP X3, X9
	VADDSS X9, X3, X3
	VMOVSS X3, 12(DI)
	VEXTRACTF128 $1, Y4, X9
	VADDPS X9, X4, X4
	VMOVHLPS X4, X4, X9
	VADDPS X9, X4, X4
	VMOVSHDUP X4, X9
	VADDSS X9, X4, X4
	VMOVSS X4, 16(DI)
	VEXTRACTF128 $1, Y5, X9
	VADDPS X9, X5, X5
	VMOVHLPS X5, X5, X9
	VADDPS X9, X5, X5
	VMOVSHDUP X5, X9
	VADDSS X9, X5, X5
	VMOVSS X5, 20(DI)
	VEXTRACTF128 $1, Y6, X9
	VADDPS X9, X6, X6
	VMOVHLPS X6, X6, X9
	VADDPS X9, X6, X6
	VMOVSHDUP X6, X9
	VADDSS X9, X6, X6
	VMOVSS X6, 24(DI)
	VEXTRACTF128 $1, Y7, X9
	VADDPS X9, X7, X7
	VMOVHLPS X7, X7, X9
	VADDPS X9, X7, X7
	VMOVSHDUP X7, X9
	VADDSS X9, X7, X7
	VMOVSS X7, 28(DI)
	ADDQ $32, DI
	LEAQ (SI)(R9*8), SI
	DECQ CX
	JNZ  decimAVX2_group

decimAVX2_done:
	VZEROUPPER
	RET

// func decimIQAVX2(dst, buf, taps []float32, stride int)
//
// For each output i < len(dst)/2 (a multiple of 8 outputs):
// dst[2i+c] = Σ_v taps[v]·buf[i·stride+v] summed over the lanes v ≡ c (mod 2);
// len(taps) is a multiple of 8 and buf holds every window.
TEXT ·decimIQAVX2(SB), NOSPLIT, $0-80
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	SHRQ $4, CX // groups of 8 outputs
	JZ   decimIQAVX2_done
	MOVQ buf_base+24(FP), SI
	MOVQ taps_base+48(FP), R8
	MOVQ taps_len+56(FP), BX
	SHRQ $3, BX // tap vectors
	MOVQ stride+72(FP), R9
	SHLQ $2, R9 // stride in bytes
	LEAQ (R9)(R9*2), R10

decimIQAVX2_group:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	MOVQ SI, R11
	LEAQ (SI)(R9*4), R15
	MOVQ R8, R12
	MOVQ BX, R13

decimIQAVX2_tap:
	VMOVUPS (R12), Y8
	VFMADD231PS (R11), Y8, Y0
	VFMADD231PS (R11)(R9*1), Y8, Y1
	VFMADD231PS (R11)(R9*2), Y8, Y2
	VFMADD231PS (R11)(R10*1), Y8, Y3
	VFMADD231PS (R15), Y8, Y4
	VFMADD231PS (R15)(R9*1), Y8, Y5
	VFMADD231PS (R15)(R9*2), Y8, Y6
	VFMADD231PS (R15)(R10*1), Y8, Y7
	ADDQ $32, R11
	ADDQ $32, R15
	ADDQ $32, R12
	DECQ R13
	JNZ  decimIQAVX2_tap
	VEXTRACTF128 $1, Y0, X9
	VADDPS X9, X0, X0
	VMOVHLPS X0, X0, X9
	VADDPS X9, X0, X0
	VMOVSD X0, 0(DI)
	VEXTRACTF128 $1, Y1, X9
	VADDPS X9, X1, X1
	VMOVHLPS X1, X1, X9
	VADDPS X9, X1, X1
	VMOVSD X1, 8(DI)
	VEXTRACTF128 $1, Y2, X9
	VADDPS X9, X2, X2
	VMOVHLPS X2, X2, X9
	VADDPS X9, X2, X2
	VMOVSD X2, 16(DI)
	VEXTRACTF128 $1, Y3, X9
	VADDPS X9, X3, X3
	VMOVHLPS X3, X3, X9
	VADDPS X9, X3, X3
	VMOVSD X3, 24(DI)
	VEXTRACTF128 $1, Y4, X9
	VADDPS X9, X4, X4
	VMOVHLPS X4, X4, X9
	VADDPS X9, X4, X4
	VMOVSD X4, 32(DI)
	VEXTRACTF128 $1, Y5, X9
	VADDPS X9, X5, X5
	VMOVHLPS X5, X5, X9
	VADDPS X9, X5, X5
	VMOVSD X5, 40(DI)
	VEXTRACTF128 $1, Y6, X9
	VADDPS X9, X6, X6
	VMOVHLPS X6, X6, X9
	VADDPS X9, X6, X6
	VMOVSD X6, 48(DI)
	VEXTRACTF128 $1, Y7, X9
	VADDPS X9, X7, X7
	VMOVHLPS X7, X7, X9
	VADDPS X9, X7, X7
	VMOVSD X7, 56(DI)
	ADDQ $64, DI
	LEAQ (SI)(R9*8), SI
	DECQ CX
	JNZ  decimIQAVX2_group

decimIQAVX2_done:
	VZEROUPPER
	RET
