package capture

// OpenIIOTraced exposes openIIO's trace hook to the external tests, which
// check the order of sysfs writes against the IIO ABI.
func OpenIIOTraced(cfg IIOConfig, trace func(string)) (*IIO, error) { return openIIO(cfg, trace) }
