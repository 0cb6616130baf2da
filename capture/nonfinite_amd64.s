//go:build amd64 && !purego

#include "textflag.h"

// A float32 is NaN or ±Inf when its exponent bits are all ones: adding
// one to the exponent then carries into the sign bit (as in
// anyNonFiniteGeneric). The sign bits are ORed over all values.
DATA nfExpMask<>+0(SB)/4, $0x7f800000
GLOBL nfExpMask<>(SB), RODATA|NOPTR, $4
DATA nfExpOne<>+0(SB)/4, $0x00800000
GLOBL nfExpOne<>(SB), RODATA|NOPTR, $4

// func anyNonFiniteAVX2(x []float32) bool
TEXT ·anyNonFiniteAVX2(SB), NOSPLIT, $0-25
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	VPBROADCASTD nfExpMask<>(SB), Y8
	VPBROADCASTD nfExpOne<>(SB), Y9
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3

loop32:
	CMPQ CX, $32
	JB   loop8
	VPAND  (SI), Y8, Y4
	VPAND  32(SI), Y8, Y5
	VPAND  64(SI), Y8, Y6
	VPAND  96(SI), Y8, Y7
	VPADDD Y9, Y4, Y4
	VPADDD Y9, Y5, Y5
	VPADDD Y9, Y6, Y6
	VPADDD Y9, Y7, Y7
	VPOR   Y4, Y0, Y0
	VPOR   Y5, Y1, Y1
	VPOR   Y6, Y2, Y2
	VPOR   Y7, Y3, Y3
	ADDQ   $128, SI
	SUBQ   $32, CX
	JMP    loop32

loop8:
	CMPQ CX, $8
	JB   reduce
	VPAND  (SI), Y8, Y4
	VPADDD Y9, Y4, Y4
	VPOR   Y4, Y0, Y0
	ADDQ   $32, SI
	SUBQ   $8, CX
	JMP    loop8

reduce:
	VPOR      Y1, Y0, Y0
	VPOR      Y3, Y2, Y2
	VPOR      Y2, Y0, Y0
	VMOVMSKPS Y0, AX
	VZEROUPPER
	TESTQ     CX, CX
	JZ        done

tail:
	MOVL (SI), DX
	ANDL $0x7f800000, DX
	ADDL $0x00800000, DX
	SHRL $31, DX
	ORL  DX, AX
	ADDQ $4, SI
	DECQ CX
	JNZ  tail

done:
	TESTL AX, AX
	SETNE ret+24(FP)
	RET
