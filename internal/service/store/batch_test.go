package store

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A batch insert's sizes add up to the rows, and are batchRows or powers of two below it,
// so that its statements have few texts; each text has the rows its size says.
func TestBatchInsertSizes(t *testing.T) {
	bi := &batchInsert{head: "INSERT INTO t (a, b) VALUES ", tail: " ON CONFLICT DO NOTHING", cols: 2}
	texts := map[string]bool{}
	for n := range 1000 {
		sum := 0
		for _, k := range bi.sizes(n) {
			if k > batchRows || k&(k-1) != 0 {
				t.Fatalf("%d rows: a batch of %d; want a power of two up to %d", n, k, batchRows)
			}
			sum += k
			q := bi.text(k)
			texts[q] = true
			if got := strings.Count(q, "("); got != k+1 { // the columns' and each row's
				t.Fatalf("the text of %d rows has %d rows: %s", k, got-1, q)
			}
			if !strings.HasSuffix(q, "($"+strconv.Itoa(2*k-1)+",$"+strconv.Itoa(2*k)+") ON CONFLICT DO NOTHING") {
				t.Fatalf("the text of %d rows ends %q", k, q[max(0, len(q)-40):])
			}
		}
		if sum != n {
			t.Fatalf("%d rows in batches %v", n, bi.sizes(n))
		}
	}
	if want := 8; len(texts) != want { // 1, 2, 4, ..., 128
		t.Errorf("%d texts for every size up to 1000; want %d", len(texts), want)
	}
	if got := bi.sizes(300); !slices.Equal(got, []int{128, 128, 32, 8, 4}) {
		t.Errorf("300 rows: %v", got)
	}
}
