package config

import (
	"flag"
	"fmt"
)

// BindFlags registers every key as a string flag on fs (--kafka-brokers for
// kafka_brokers; help text names the default and the environment variable).
// Call the returned function after fs.Parse: it returns, by key name, only
// the flags the user actually set, ready for Sources.Flags. Other flags on fs
// are ignored. BindFlags panics if fs already defines one of the names.
func BindFlags(fs *flag.FlagSet) func() map[string]string {
	byFlag := make(map[string]Key, len(registry))
	for _, k := range Keys() {
		byFlag[k.Flag()] = k
		fs.String(k.Flag(), k.Default, fmt.Sprintf("%s (env %s)", k.Usage, k.Env()))
	}
	return func() map[string]string {
		set := make(map[string]string)
		fs.Visit(func(f *flag.Flag) {
			if k, ok := byFlag[f.Name]; ok {
				set[k.Name] = f.Value.String()
			}
		})
		return set
	}
}
