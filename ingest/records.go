package ingest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// maxRecordBytes bounds one record. A longer one is reported and skipped without being
// held whole; a log record of a chat completion is a few hundred KB at most.
const maxRecordBytes = 64 << 20

// errRecordTooLong is the reason a record over maxRecordBytes is skipped.
var errRecordTooLong = fmt.Errorf("longer than %d MiB: not read; split it", maxRecordBytes>>20)

// records calls f with each record of r: JSON Lines, JSON documents printed over several
// lines or concatenated, or a JSON array whose elements are the records. Records are
// numbered from 1 in order. A record that is not JSON is reported through o with its
// number, its line and the reason, and reading goes on at the next record: a log cut off
// mid-write loses that record only. A UTF-8 byte order mark is skipped.
//
// A document printed over several lines is one that opens with a line starting "{" or "["
// that is not JSON by itself; it ends where the lines read so far are JSON, checked at
// each line that starts with "}" or "]" (and, for an array, each line that ends with
// "]"). A line starting "{" (outside an array) or "[" in the first column while a
// document is open starts a new record, so a cut-off document costs that document only;
// an array with a cut-off element is one bad record.
func records(r io.Reader, o *Options, f func(n int, raw []byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	if b, err := br.Peek(3); err == nil && bytes.Equal(b, []byte("\xef\xbb\xbf")) {
		_, _ = br.Discard(3)
	}
	rd := &recordReader{o: o, f: f}
	line := 0
	for {
		b, tooLong, err := readLine(br)
		if len(b) > 0 || tooLong || err == nil {
			line++
			if tooLong {
				if err := rd.flush(); err != nil {
					return err
				}
				rd.n++
				rd.count()
				if err := o.report(rd.n, fmt.Errorf("line %d: %w", line, errRecordTooLong)); err != nil {
					return err
				}
			} else if err := rd.line(b, line); err != nil {
				return err
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("read line %d: %w", line+1, err)
		}
	}
	if err := rd.flush(); err != nil {
		return err
	}
	if rd.n == 0 {
		return ErrNoRuns
	}
	return nil
}

// readLine returns the next line without its end, or tooLong (and nothing) when it is
// longer than maxRecordBytes, in which case the rest of it has been read and dropped.
func readLine(br *bufio.Reader) (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > maxRecordBytes {
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(buf, "\r\n"), tooLong, err
	}
}

// count tells Convert how many records were read.
func (rd *recordReader) count() {
	if rd.o.seen != nil {
		rd.o.seen(rd.n)
	}
}

// recordReader turns lines into records.
type recordReader struct {
	o     *Options
	f     func(n int, raw []byte) error
	n     int    // records seen
	open  []byte // a document printed over several lines, not complete yet
	start int    // the line it started on
}

func (rd *recordReader) line(b []byte, line int) error {
	t := bytes.TrimSpace(b)
	if len(rd.open) > 0 {
		array := rd.open[0] == '['
		if len(b) > 0 && (b[0] == '{' && !array || b[0] == '[') {
			if err := rd.flush(); err != nil { // a new record starts: the open one was cut off
				return err
			}
			return rd.line(b, line)
		}
		rd.open = append(append(rd.open, b...), '\n')
		closes := len(b) > 0 && (b[0] == '}' || b[0] == ']') || array && len(t) > 0 && t[len(t)-1] == ']'
		if closes && json.Valid(rd.open) {
			doc := rd.open
			rd.open = nil
			return rd.values(doc, rd.start)
		}
		if len(rd.open) > maxRecordBytes {
			rd.open = nil
			rd.n++
			rd.count()
			return rd.o.report(rd.n, fmt.Errorf("line %d: %w", rd.start, errRecordTooLong))
		}
		return nil
	}
	switch {
	case len(t) == 0:
		return nil
	case json.Valid(t):
		return rd.values(t, line)
	case t[0] == '{' || t[0] == '[':
		if vals, ok := concatenated(t); ok {
			for _, v := range vals {
				if err := rd.values(v, line); err != nil {
					return err
				}
			}
			return nil
		}
		rd.open, rd.start = append(append([]byte(nil), t...), '\n'), line
		return nil
	}
	rd.n++
	rd.count()
	return rd.o.report(rd.n, notJSON(t, line))
}

// flush reports an open document that never completed, unless it turns out complete.
func (rd *recordReader) flush() error {
	if len(rd.open) == 0 {
		return nil
	}
	doc := rd.open
	rd.open = nil
	if json.Valid(doc) {
		return rd.values(doc, rd.start)
	}
	if vals, ok := concatenated(doc); ok {
		for _, v := range vals {
			if err := rd.values(v, rd.start); err != nil {
				return err
			}
		}
		return nil
	}
	rd.n++
	rd.count()
	return rd.o.report(rd.n, notJSON(bytes.TrimSpace(doc), rd.start))
}

// values hands a JSON value to f as one record, or each element of an array as one.
func (rd *recordReader) values(v []byte, line int) error {
	v = bytes.TrimSpace(v)
	if v[0] != '[' {
		rd.n++
		rd.count()
		return rd.f(rd.n, v)
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(v, &elems); err != nil {
		rd.n++
		rd.count()
		return rd.o.report(rd.n, notJSON(v, line))
	}
	for _, e := range elems {
		rd.n++
		rd.count()
		if err := rd.f(rd.n, e); err != nil {
			return err
		}
	}
	return nil
}

// concatenated splits JSON values written one after the other ({...}{...}), or reports
// false when b is not a sequence of whole values.
func concatenated(b []byte) ([][]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	var out [][]byte
	for {
		var v json.RawMessage
		err := dec.Decode(&v)
		if err == io.EOF {
			return out, len(out) > 1
		}
		if err != nil {
			return nil, false
		}
		out = append(out, v)
	}
}

// notJSON says why b is not a record, and what that usually means.
func notJSON(b []byte, line int) error {
	var v json.RawMessage
	err := json.Unmarshal(b, &v)
	if err == nil {
		err = errors.New("not a JSON value")
	}
	where := "line " + strconv.Itoa(line)
	var se *json.SyntaxError
	if errors.As(err, &se) && se.Error() == "unexpected end of JSON input" || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%s: not JSON: the record is cut off after %d bytes (a log written when its process stopped?)", where, len(b))
	}
	return fmt.Errorf("%s: not JSON: %v", where, err)
}
