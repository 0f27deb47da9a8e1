package testkit

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
)

// ProcStatus reads a field of /proc/self/status (VmRSS, VmHWM ...), in KiB, failing t
// when the field is missing or not a number.
func ProcStatus(t testing.TB, field string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range bytes.Lines(b) {
		if rest, ok := bytes.CutPrefix(line, []byte(field+":")); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(string(rest)), " kB"))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}
