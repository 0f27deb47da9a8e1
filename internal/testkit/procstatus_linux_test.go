package testkit

import "testing"

func TestProcStatusReadsResidentMemory(t *testing.T) {
	rss, peak := ProcStatus(t, "VmRSS"), ProcStatus(t, "VmHWM")
	if rss <= 0 || peak < rss {
		t.Fatalf("VmRSS %d KiB, VmHWM %d KiB: want a positive RSS at most its peak", rss, peak)
	}
}
