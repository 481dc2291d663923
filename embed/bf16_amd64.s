#include "textflag.h"

// func addBF16AVX2(dst *float32, row *uint16, n int)
// Each step widens 8 bfloat16s to 32-bit lanes (VPMOVZXWD), shifts them
// into the top half (a float32 with the same value) and adds them to 8
// floats of dst.
TEXT ·addBF16AVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ row+8(FP), SI
	MOVQ n+16(FP), CX

loop16:
	CMPQ CX, $16
	JL   tail8
	VPMOVZXWD (SI), Y0
	VPMOVZXWD 16(SI), Y1
	VPSLLD    $16, Y0, Y0
	VPSLLD    $16, Y1, Y1
	VADDPS    (DI), Y0, Y0
	VADDPS    32(DI), Y1, Y1
	VMOVUPS   Y0, (DI)
	VMOVUPS   Y1, 32(DI)
	ADDQ      $32, SI
	ADDQ      $64, DI
	SUBQ      $16, CX
	JMP       loop16

tail8:
	CMPQ CX, $8
	JL   done
	VPMOVZXWD (SI), Y0
	VPSLLD    $16, Y0, Y0
	VADDPS    (DI), Y0, Y0
	VMOVUPS   Y0, (DI)

done:
	VZEROUPPER
	RET
