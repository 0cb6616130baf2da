//go:build !amd64 || purego

package filter

const haveFFTVec = false

func cmulSplit(xr, xi, hr, hi []float32)  { cmulGeneric(xr, xi, hr, hi) }
func dif4Vec(re, im, tv []float32, q int) { panic("filter: no vector FFT in this build") }
func dit4Vec(re, im, tv []float32, q int) { panic("filter: no vector FFT in this build") }
