// Package modroot finds the root of the Go module a folder is in, where the repository's
// own files are (testdata/, schemas/, build/): the commands and tests that read them from
// inside a checkout start there.
package modroot

import (
	"os"
	"path/filepath"
)

// Find returns the nearest folder at or above dir that holds a go.mod; ok is false when no
// folder up to the root of the file system does. dir should be absolute.
func Find(dir string) (root string, ok bool) {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, true
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}
