package tools

import "fmt"

// BuiltinTools returns the built-in tools configured by opts: shell,
// read_file, read_file_part, write_file, list_files and ask_user. It panics
// when opts is invalid, a wiring mistake.
func BuiltinTools(opts Options) []Tool {
	opts.setDefaults()
	if err := opts.Validate(); err != nil {
		panic(err)
	}
	return []Tool{
		shell{opts: opts},
		readFile{opts: opts},
		readFilePart{},
		writeFile{opts: opts},
		listFiles{opts: opts},
		askUser{},
	}
}

// Builtin returns a registry of the built-in tools. It panics when opts is
// invalid, a wiring mistake.
func Builtin(opts Options) *Registry {
	r, err := NewRegistry(BuiltinTools(opts)...)
	if err != nil {
		panic(fmt.Sprintf("tools: built-in tools: %v", err))
	}
	return r
}
