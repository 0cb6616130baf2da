package main

import (
	"fmt"

	"github.com/sigproc/sigproc/config"
	"github.com/sigproc/sigproc/sink"
)

// clipSummary is the summary's clipping field for integer outputs.
func clipSummary(format string, snk *sink.Deferred) string {
	switch format {
	case config.FormatRI16, config.FormatCI16, config.FormatCS8, config.WAVPCM16, config.WAVPCM24:
	default:
		return ""
	}
	return fmt.Sprintf("  clipped %d", snk.Clipped())
}
