#include "textflag.h"

// func storeTagged(dst *uint64, src *float32, n int, tag uint32)
TEXT ·storeTagged(SB), NOSPLIT, $0-28
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVL tag+24(FP), DX
	SHLQ $32, DX
	TESTQ CX, CX
	JLE done
loop:
	MOVL (SI), AX      // zero-extends into RAX
	ORQ DX, AX
	MOVQ AX, (DI)      // one aligned 8-byte store: value and tag land together
	ADDQ $4, SI
	ADDQ $8, DI
	DECQ CX
	JNZ loop
done:
	RET
