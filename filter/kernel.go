package filter

// kernelKind selects the inner loop of a FIR.
type kernelKind int

const (
	kernelGeneric kernelKind = iota // portable Go
	kernelAVX2                      // amd64 AVX2 + FMA
	kernelAVX512                    // amd64 AVX-512F (falls back to AVX2 for short blocks)
)

func (k kernelKind) String() string {
	switch k {
	case kernelAVX2:
		return "avx2"
	case kernelAVX512:
		return "avx512"
	}
	return "generic"
}
