package redact

import (
	"regexp"
	"strings"
)

// builtin are the rules of each built-in kind. The patterns are compiled once: they
// are constants of the program, never changed.
var builtin = map[string][]rule{
	Secret: {
		{kind: Secret, re: regexp.MustCompile(`-----BEGIN[A-Z ]*PRIVATE KEY-----[\s\S]*?-----END[A-Z ]*PRIVATE KEY-----`),
			maybe: func(s string) bool { return strings.Contains(s, "PRIVATE KEY-----") }},
		// Keys and tokens whose format says what they are: OpenAI and Anthropic (sk-),
		// Stripe, scorekit's own (sk_ and 43 characters), AWS access key ids, GitHub,
		// Slack, Google API keys and JSON Web Tokens.
		{kind: Secret, re: regexp.MustCompile(`\b(?:sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}|sk_[A-Za-z0-9_\-]{40,}|` +
			`AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,}|xox[abprs]-[A-Za-z0-9\-]{10,}|AIza[0-9A-Za-z_\-]{35}|` +
			`eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,})`),
			anchors: literals(false, "sk-", "sk_", "rk_", "pk_", "AKIA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "AIza", "eyJ"), radius: 1},
		// The token of an Authorization header.
		{kind: Secret, re: regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9._~+/\-]{16,}=*)`), group: 1,
			anchors: literals(true, "bearer"), radius: 16},
		// The value given to a password, secret, token or API key.
		// The value given to a password, secret, token or API key; not a placeholder
		// (<token>, ${TOKEN}, {{token}}) nor an expression (secrets.get(...)).
		{kind: Secret, re: regexp.MustCompile(`(?i)\b(?:api[_\-]?key|client[_\-]?secret|secret|password|passwd|pwd|access[_\-]?token|auth[_\-]?token|token)["']?\s*[:=]\s*["']?([^\s"',;<>(){}$\[\]]{8,})(?:["',;\s]|$)`),
			group: 1, anchors: literals(true, "key", "secret", "password", "passwd", "pwd", "token"), radius: 32},
	},
	Email: {
		{kind: Email, re: regexp.MustCompile(`(?i)\b[a-z0-9._%+\-]+@[a-z0-9](?:[a-z0-9\-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9\-]*[a-z0-9])?)*\.[a-z]{2,}\b`),
			anchors: literals(false, "@"), radius: 1},
	},
	Card: {
		// Grouped as printed (4-4-4-4, 4-6-5) or written out; the groups keep a
		// number followed by other digits (a CVV) from being read as one longer number.
		{kind: Card, re: regexp.MustCompile(`\b(?:\d{4}[ \-]\d{4}[ \-]\d{4}[ \-]\d{4}|\d{4}[ \-]\d{6}[ \-]\d{4,5}|\d{13,19})\b`),
			valid: isCard, around: notDecimal, maybe: digits(13), segment: digits(13), anchors: digitRuns(3), radius: 24},
	},
	Phone: {
		// International: +, a country code, then groups (a group in parentheses too).
		{kind: Phone, re: regexp.MustCompile(`\+\d{1,3}(?:[ .\-]?(?:\(\d{1,4}\)|\d{1,5})){2,6}\b`), valid: phoneDigits(8), anchors: literals(false, "+"), radius: 24, segment: digits(8)},
		// North American: (555) 123-4567, 555-123-4567, 1-800-555-0199, 555.123.4567,
		// 555 123 4567.
		{kind: Phone, re: regexp.MustCompile(`(?:\b1[ .\-])?(?:\(\d{3}\)[ .\-]?|\b\d{3}[ .\-])\d{3}[ .\-]\d{4}\b`), maybe: digits(10),
			anchors: digitRuns(3), radius: 24, segment: digits(10)},
		// National with a trunk 0: 020 7946 0958, 0171-123-4567, 06 12 34 56 78,
		// 030 12345678. Day-month dates (05-06-2024) have too few digits in a group.
		{kind: Phone, re: regexp.MustCompile(`\b(?:0\d{1,4}[ \-]\d{3,4}[ \-]?\d{3,4}|0[1-9](?: \d\d){4}|0\d{2,4}[ /\-]\d{5,8})\b`),
			valid: phoneDigits(9), maybe: digits(9), anchors: digitRuns(2), radius: 24, segment: digits(9)},
	},
}

// digits returns a test that s holds at least n digits.
func digits(n int) func(string) bool {
	return func(s string) bool {
		c := 0
		for i := 0; i < len(s); i++ {
			if s[i] >= '0' && s[i] <= '9' {
				if c++; c >= n {
					return true
				}
			}
		}
		return false
	}
}

func onlyDigits(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// phoneDigits accepts a match of min to 15 digits (E.164's most).
func phoneDigits(min int) func(string) bool {
	return func(s string) bool {
		n := len(onlyDigits(s))
		return n >= min && n <= 15
	}
}

// notDecimal rejects digits that are the fraction of a decimal number (0.5227272727272727):
// they follow a '.' or ',' right after a digit.
func notDecimal(text string, start, _ int) bool {
	return start < 2 || (text[start-1] != '.' && text[start-1] != ',') || text[start-2] < '0' || text[start-2] > '9'
}

// isCard reports whether s (digits with spaces or dashes) is a payment card number: the
// length and prefix of a card issuer, and a valid Luhn check digit.
func isCard(s string) bool {
	d := onlyDigits(s)
	return issuer(d) && luhn(d)
}

// issuer reports whether d has the prefix and length of a card network's numbers.
func issuer(d string) bool {
	n := len(d)
	p := func(k int) int {
		v := 0
		for i := 0; i < k && i < n; i++ {
			v = v*10 + int(d[i]-'0')
		}
		return v
	}
	switch {
	case d[0] == '4': // Visa
		return n == 13 || n == 16 || n == 19
	case p(2) >= 51 && p(2) <= 55, p(4) >= 2221 && p(4) <= 2720: // Mastercard
		return n == 16
	case p(2) == 34 || p(2) == 37: // American Express
		return n == 15
	case p(4) == 6011, p(2) == 65, p(3) >= 644 && p(3) <= 649: // Discover
		return n >= 16 && n <= 19
	case p(2) == 62: // UnionPay
		return n >= 16 && n <= 19
	case p(4) >= 3528 && p(4) <= 3589: // JCB
		return n >= 16 && n <= 19
	case p(2) == 36, p(2) == 38, p(2) == 39, p(3) >= 300 && p(3) <= 305: // Diners Club
		return n >= 14 && n <= 19
	}
	return false
}

// luhn reports whether the digits d end in a valid Luhn check digit.
func luhn(d string) bool {
	sum := 0
	for i := len(d) - 1; i >= 0; i-- {
		v := int(d[i] - '0')
		if (len(d)-1-i)%2 == 1 {
			if v *= 2; v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	return sum%10 == 0
}

// literals returns the places where any of lits occurs in a text, in order; fold
// matches ASCII letters of either case (lits are then lower-case).
func literals(fold bool, lits ...string) func(string) []int {
	// One pass over the text, whatever the number of literals: a place whose first two
	// bytes start one (or first byte, for a literal of one byte) is checked against them.
	var (
		one [256]bool
		two = make([]bool, 1<<16)
	)
	cases := func(c byte) []byte {
		if fold && c >= 'a' && c <= 'z' {
			return []byte{c, c - 'a' + 'A'}
		}
		return []byte{c}
	}
	for _, l := range lits {
		for _, c0 := range cases(l[0]) {
			if len(l) == 1 {
				one[c0] = true
				continue
			}
			for _, c1 := range cases(l[1]) {
				two[int(c0)<<8|int(c1)] = true
			}
		}
	}
	return func(s string) []int {
		var at []int
		for i := 0; i < len(s); i++ {
			if !one[s[i]] && (i+1 == len(s) || !two[int(s[i])<<8|int(s[i+1])]) {
				continue
			}
			for _, l := range lits {
				if len(s)-i >= len(l) && (s[i:i+len(l)] == l || (fold && hasFoldPrefix(s[i:], l))) {
					at = append(at, i)
					break
				}
			}
		}
		return at
	}
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// hasFoldPrefix reports whether s starts with lit (lower-case) in ASCII letters of
// either case.
func hasFoldPrefix(s, lit string) bool {
	for i := 0; i < len(lit); i++ {
		if lower(s[i]) != lit[i] {
			return false
		}
	}
	return true
}

// digitRuns returns where each run of at least n digits starts.
func digitRuns(n int) func(string) []int {
	return func(s string) []int {
		var at []int
		for i := 0; i < len(s); {
			if s[i] < '0' || s[i] > '9' {
				i++
				continue
			}
			j := i
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if j-i >= n {
				at = append(at, i)
			}
			i = j
		}
		return at
	}
}
