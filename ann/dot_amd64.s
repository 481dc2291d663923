#include "textflag.h"

// func dotI16I8AVX2(w *int16, c *int8, n int) int32
// Each step widens 16 codes to int16 (VPMOVSXBW), multiplies them by 16
// query components and adds adjacent pairs into 8 int32 lanes (VPMADDWD);
// two accumulators hide the adds' latency.
TEXT ·dotI16I8AVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ c+8(FP), DI
	MOVQ n+16(FP), CX
	VPXOR Y0, Y0, Y0
	VPXOR Y3, Y3, Y3

loop32:
	CMPQ CX, $32
	JL   tail16
	VPMOVSXBW (DI), Y1
	VPMADDWD  (SI), Y1, Y1
	VPADDD    Y1, Y0, Y0
	VPMOVSXBW 16(DI), Y2
	VPMADDWD  32(SI), Y2, Y2
	VPADDD    Y2, Y3, Y3
	ADDQ      $32, DI
	ADDQ      $64, SI
	SUBQ      $32, CX
	JMP       loop32

tail16:
	CMPQ CX, $16
	JL   done
	VPMOVSXBW (DI), Y1
	VPMADDWD  (SI), Y1, Y1
	VPADDD    Y1, Y0, Y0

done:
	VPADDD       Y3, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4E, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xB1, X0, X1
	VPADDD       X1, X0, X0
	VMOVD        X0, AX
	VZEROUPPER
	MOVL         AX, ret+24(FP)
	RET
