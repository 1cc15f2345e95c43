package epp_test

import "os"

// helperPlugin runs this test binary as a test plugin when its arguments
// say so, and reports whether it did.
func helperPlugin() bool {
	if len(os.Args) < 3 || os.Args[1] != "-epp-helper" {
		return false
	}
	os.Exit(0)
	return true
}
