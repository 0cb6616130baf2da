package cuda

// Pure helpers of the chain filter (chainx_cuda.go), tested without a GPU.

// chainSharedLimit is the dynamic shared memory a tile may take (the
// default per-block limit, no opt-in needed).
const chainSharedLimit = 48 << 10

// chainLoopClasses is the most output classes (L/gcd(L, M)) one tiled
// block loops over; with more, each block takes one class, so that a
// large L still makes a grid of many blocks.
const chainLoopClasses = 8

// chainTile picks the tiled kernel's geometry: the most threads (256 down
// to 32) whose tile of tq = threads·perThr outputs per class, with its
// input span mp·tq+q samples de-interleaved into mp rows of w (odd, so
// the staging writes spread over the banks), fits chainSharedLimit. It
// returns threads 0 when none fits: the direct kernel runs.
func chainTile(mp, q int64, elem, perThr int) (threads int, tq, w int64, smem int) {
	for threads = 256; threads >= 32; threads /= 2 {
		tq = int64(threads * perThr)
		span := mp*tq + q
		w = ((span+mp-1)/mp | 1)
		if b := mp * w * int64(elem); b <= chainSharedLimit {
			return threads, tq, w, int(b)
		}
	}
	return 0, 0, 0, 0
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return max(a, 1)
}

// ceilMulDiv is ceil(n·l/m) without overflow for n < 2^62.
func ceilMulDiv(n, l, m int64) int64 {
	q, r := n/m, n%m
	return q*l + (r*l+m-1)/m
}

// channels is the float32 values per sample.
func channels(complex bool) int {
	if complex {
		return 2
	}
	return 1
}
