package store

import (
	"context"
	"math/bits"
	"strconv"
	"strings"
	"sync"
)

// batchInsert writes rows with multi-row INSERT statements whose texts are few: a batch
// has batchRows rows or a power of two fewer (300 rows at 128: 128, 128, 32, 8, 4), so
// each text is parsed and prepared once and kept (cachingConn on SQLite, pgx's statement
// cache on PostgreSQL) instead of parsed again for every size a caller happens to write.
type batchInsert struct {
	head string // "INSERT INTO t (a, b) VALUES "
	tail string // " ON CONFLICT ... DO NOTHING", or ""
	cols int

	once  sync.Once
	texts []string // by bit length of the batch's size: texts[k] holds 1<<k rows
}

// batchRows is the most rows one statement of a batchInsert writes; a power of two.
const batchRows = 128

// sizes splits n rows into the batches described above.
func (bi *batchInsert) sizes(n int) []int {
	var out []int
	for ; n >= batchRows; n -= batchRows {
		out = append(out, batchRows)
	}
	for n > 0 {
		k := 1 << (bits.Len(uint(n)) - 1)
		out = append(out, k)
		n -= k
	}
	return out
}

// text returns the statement of rows rows (a size sizes returns), with $N placeholders
// numbered in order.
func (bi *batchInsert) text(rows int) string {
	bi.once.Do(func() {
		bi.texts = make([]string, bits.Len(batchRows))
		for k := range bi.texts {
			var b strings.Builder
			b.WriteString(bi.head)
			for r := range 1 << k {
				writeRow(&b, r, r*bi.cols+1, bi.cols)
			}
			b.WriteString(bi.tail)
			bi.texts[k] = b.String()
		}
	})
	return bi.texts[bits.Len(uint(rows))-1]
}

// writeRow writes the placeholders of row number row (0-based) of a multi-row VALUES
// list: "($first,$first+1,...)", cols of them, after a comma unless it is the first row.
func writeRow(b *strings.Builder, row, first, cols int) {
	if row > 0 {
		b.WriteByte(',')
	}
	var num [20]byte
	b.WriteByte('(')
	for c := range cols {
		if c > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('$')
		b.Write(strconv.AppendInt(num[:0], int64(first+c), 10))
	}
	b.WriteByte(')')
}

// exec writes n rows, row(i, args) appending the cols values of row i to args, and
// returns the rows written.
func (bi *batchInsert) exec(ctx context.Context, q querier, n int, row func(i int, args []any) []any) (int64, error) {
	var (
		total int64
		args  = make([]any, 0, bi.cols*min(n, batchRows))
		i     = 0
	)
	for _, size := range bi.sizes(n) {
		args = args[:0]
		for end := i + size; i < end; i++ {
			args = row(i, args)
		}
		m, err := q.exec(ctx, bi.text(size), args...)
		if err != nil {
			return total, err
		}
		total += m
	}
	return total, nil
}
