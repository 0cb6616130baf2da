package config_test

import (
	"fmt"

	"github.com/sigproc/sigproc/config"
)

func ExampleParse() {
	cfg, err := config.Parse([]byte(`
source:
  type: synthetic
  sample_rate: 1e6
  signal: tone
  frequency_hz: 1000
  num_samples: 4096
filter:
  design: {type: lowpass, cutoff_hz: 1e5, num_taps: 129}
sink:
  type: null
`), "example.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	taps, _ := cfg.Taps(cfg.Source.SampleRate)
	fmt.Println(cfg.Source.Signal, cfg.BlockSize, cfg.RingSlots, cfg.EffectiveOverrun(), len(taps))

	_, err = config.Parse([]byte("source:\n  type: synthetic\n  sample_rate: -5\n"), "bad.yaml")
	fmt.Println(err)
	// Output:
	// tone 256 0 block 129
	// bad.yaml:1: source.signal: required (one of tone, multitone, chirp, noise, impulse, sum)
	// bad.yaml:3: source.sample_rate: must be > 0, got -5
	// bad.yaml: filter: required: one of taps, taps_file or design
	// bad.yaml: sink: required (a mapping with at least type)
}
