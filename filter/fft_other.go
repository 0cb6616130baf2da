//go:build !amd64 || purego

package filter

const haveFFTVec = false

func cmulSplit(xr, xi, hr, hi []float32)  { cmulGeneric(xr, xi, hr, hi) }
func dif4Vec(re, im, tv []float32, q int) { panic("filter: no vector FFT in this build") }
func dit4Vec(re, im, tv []float32, q int) { panic("filter: no vector FFT in this build") }
func dif2Vec(re, im, tv []float32, q int) { panic("filter: no vector FFT in this build") }
func dit2Vec(re, im, tv []float32, q int) { panic("filter: no vector FFT in this build") }
func fftTailFwd(re, im []float32)         { panic("filter: no vector FFT in this build") }
func fftTailInv(re, im []float32)         { panic("filter: no vector FFT in this build") }
func fftTailConv(re, im, hr, hi []float32) {
	panic("filter: no vector FFT in this build")
}
