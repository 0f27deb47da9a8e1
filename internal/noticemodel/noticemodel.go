// Package noticemodel is a small linear model over character n-grams that reads a short output
// as a product notice that the request was not done: a failure ("Der Server ist nicht
// erreichbar; Versuchen Sie es später erneut", "Τέλος χρονικού ορίου σύνδεσης.") or a
// refusal for want of permission ("Операция не позволена"), in any of the languages the
// programs it was trained on are translated into. Word lists cannot follow ninety
// languages; byte n-grams of the folded text can, and the model costs a few microseconds.
//
// It was built for the pre-screen's second pass and measured leave-one-source-out with
// internal/cmd/noticemodel; it did not beat the rules there (it catches a third to four
// fifths of an unseen program's notices and fails 1-14% of an unseen source's correct
// answers, QUALITY.md "The notice model"), so prescreen does not use it. It stays as the
// experiment's reproducible record: features, training and scoring in one place, integer
// scoring over int8 weights so that a future model gives the same verdict on every platform
// and in WebAssembly.
package noticemodel

import (
	"encoding/binary"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Buckets is the number of hashed n-gram features.
const Buckets = 1 << 16

// MaxRunes is the longest output the model reads: notices are short, and a longer text is an
// answer whatever its words.
const MaxRunes = 160

// Model is a trained notice model: one int8 weight per bucket, a bias and a threshold in the
// same units (see Fires).
type Model struct {
	Weights   [Buckets]int8
	Bias      int32
	Threshold int32
}

// Decode reads a model written by Encode.
func Decode(b []byte) (*Model, error) {
	if len(b) != 8+Buckets {
		return nil, fmt.Errorf("noticemodel: decode: %d bytes, want %d (bias, threshold, %d weights)", len(b), 8+Buckets, Buckets)
	}
	m := &Model{Bias: int32(binary.LittleEndian.Uint32(b)), Threshold: int32(binary.LittleEndian.Uint32(b[4:]))}
	for i := range m.Weights {
		m.Weights[i] = int8(b[8+i])
	}
	return m, nil
}

// Encode writes the model: bias and threshold (little-endian int32), then the weights.
func (m *Model) Encode() []byte {
	b := make([]byte, 8+Buckets)
	binary.LittleEndian.PutUint32(b, uint32(m.Bias))
	binary.LittleEndian.PutUint32(b[4:], uint32(m.Threshold))
	for i, w := range m.Weights {
		b[8+i] = byte(w)
	}
	return b
}

// Eligible reports whether the model reads out at all: a sentence of at most MaxRunes runes
// on at most two lines, of three words or more (or, in scripts written without spaces,
// eight letters or more). A word or two is a name, a label or a number: too little to read a
// notice in.
func Eligible(out string) bool {
	runes := utf8.RuneCountInString(out)
	if runes > MaxRunes || strings.Count(out, "\n") > 1 {
		return false
	}
	if len(strings.Fields(out)) >= 3 {
		return true
	}
	letters := 0
	for _, r := range out {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar) {
			letters++
		}
	}
	return letters >= 8
}

// Score returns the sum of the weights of out's n-grams and how many there were.
func (m *Model) Score(out string) (sum, n int32) {
	Grams(out, func(h uint32) {
		sum += int32(m.Weights[h])
		n++
	})
	return sum, n
}

// Fires reports whether out reads as a notice: its mean weight plus the bias exceeds the
// threshold. In integers: sum + (bias-threshold)*n > 0.
func (m *Model) Fires(out string) bool {
	if !Eligible(out) {
		return false
	}
	sum, n := m.Score(out)
	return n > 0 && sum+(m.Bias-m.Threshold)*n > 0
}

// Grams calls f with the bucket of every byte n-gram (n = 3, 4, 5) of the normalized text:
// lower case, every run of spaces and punctuation one space, every digit '0', framed by
// spaces.
func Grams(out string, f func(uint32)) {
	var buf [4 * (MaxRunes + 2)]byte
	b := append(buf[:0], ' ')
	space := true
	for _, r := range out {
		if len(b) > len(buf)-8 {
			break
		}
		switch {
		case unicode.IsLetter(r) || unicode.IsMark(r):
			b = utf8.AppendRune(b, unicode.ToLower(r))
			space = false
		case unicode.IsDigit(r):
			b = append(b, '0')
			space = false
		case !space:
			b = append(b, ' ')
			space = true
		}
	}
	if !space {
		b = append(b, ' ')
	}
	for i := 0; i < len(b); i++ {
		h := uint32(2166136261)
		for j := i; j < len(b) && j < i+5; j++ {
			h ^= uint32(b[j])
			h *= 16777619
			if j-i >= 2 {
				f((h ^ uint32(j-i)*0x9e3779b1) % Buckets)
			}
		}
	}
}
