package control

import (
	"encoding/json"
	"math"
	"testing"
)

// TestWelchNonFinite (issue 27 item 8): NaN or infinite samples no longer
// turn the whole spectrum into NaN (which JSON cannot carry, so the page
// showed nothing): they are counted in NonFinite and taken as 0, so the
// estimate equals that of the samples with zeros in their place.
func TestWelchNonFinite(t *testing.T) {
	for _, cplx := range []bool{false, true} {
		x := make([]float32, 4096)
		for i := range x {
			x[i] = float32(math.Sin(0.3 * float64(i)))
		}
		clean := append([]float32(nil), x...)
		for _, i := range []int{7, 1000, 1001, 4095} {
			x[i], clean[i] = float32(math.NaN()), 0
		}
		x[2000], clean[2000] = float32(math.Inf(-1)), 0
		got, err := Welch(x, cplx, 1000, 256)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := Welch(clean, cplx, 1000, 256)
		if got.NonFinite != 5 || want.NonFinite != 0 {
			t.Errorf("complex %v: NonFinite %d (clean %d), want 5 (0)", cplx, got.NonFinite, want.NonFinite)
		}
		for k := range got.DB {
			if got.DB[k] != want.DB[k] {
				t.Fatalf("complex %v: bin %d = %g, want %g (NaNs as zeros)", cplx, k, got.DB[k], want.DB[k])
			}
		}
		if b, err := json.Marshal(got); err != nil || len(b) < 100 {
			t.Errorf("complex %v: JSON %v (%d bytes)", cplx, err, len(b))
		}
	}
}
