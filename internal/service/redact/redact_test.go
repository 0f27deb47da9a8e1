package redact

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func all(t *testing.T) *Redactor {
	t.Helper()
	r, err := Compile(Config{Kinds: Kinds})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Each kind is caught as people write it.
func TestEachKindCaught(t *testing.T) {
	r := all(t)
	cases := []struct {
		name, text, want string
		kind             string
		n                int
	}{
		{"email in a signature", "Thanks,\nSarah Johnson <sarah.j@partner-firm.co.uk>", "Thanks,\nSarah Johnson <[redacted:email]>", Email, 1},
		{"two emails", "cc: ops@example.com, Jane.Doe+billing@mail.example.org.", "cc: [redacted:email], [redacted:email].", Email, 2},
		{"US phone", "Please call our office at (555) 123-4567 to book.", "Please call our office at [redacted:phone] to book.", Phone, 1},
		{"toll-free", "Reach the hotline at 1-800-799-7233 (SAFE).", "Reach the hotline at [redacted:phone] (SAFE).", Phone, 1},
		{"international", "Mobile: +44 7700 900123, office +1 (415) 555-0132", "Mobile: [redacted:phone], office [redacted:phone]", Phone, 2},
		{"French", "Appelez le 06 12 34 56 78 demain.", "Appelez le [redacted:phone] demain.", Phone, 1},
		{"UK national", "NHS helpline 0345 854 7777 or 020 7946 0958", "NHS helpline [redacted:phone] or [redacted:phone]", Phone, 2},
		{"German", "Tel. 030 12345678", "Tel. [redacted:phone]", Phone, 1},
		{"Visa grouped, then a CVV", "card 4111 1111 1111 1111 123 exp 12/27", "card [redacted:card] 123 exp 12/27", Card, 1},
		{"Mastercard written out", "Charge 5555555555554444 now", "Charge [redacted:card] now", Card, 1},
		{"Amex", "Amex 3782-822463-10005 on file", "Amex [redacted:card] on file", Card, 1},
		{"OpenAI key", "export OPENAI_API_KEY=sk-proj-Abc123Def456Ghi789Jkl012Mno", "export OPENAI_API_KEY=[redacted:secret]", Secret, 1},
		{"AWS key id", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "aws_access_key_id = [redacted:secret]", Secret, 1},
		{"GitHub token", "token ghp_1234567890abcdefghijklmnopqrstuvwxyz12", "token [redacted:secret]", Secret, 1},
		{"bearer", "Authorization: Bearer abcDEF123456ghiJKL789mno", "Authorization: Bearer [redacted:secret]", Secret, 1},
		{"JWT", "id_token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
			"id_token [redacted:secret]", Secret, 1},
		{"password assigned", `{"user": "bob", "password": "hunter2hunter2"}`, `{"user": "bob", "password": "[redacted:secret]"}`, Secret, 1},
		{"private key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", "[redacted:secret]", Secret, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			counts := Counts{}
			got := r.Text(c.text, counts)
			if got != c.want || counts[c.kind] != c.n || len(counts) != 1 {
				t.Fatalf("got %q, %v; want %q with %d %s", got, counts, c.want, c.n, c.kind)
			}
		})
	}
}

// Ordinary numbers stay: years, dates, times, prices, versions, ids, measures.
func TestOrdinaryNumbersKept(t *testing.T) {
	r := all(t)
	texts := []string{
		"In 2024 revenue grew 12.5% to $1,299,999.99; Q3 2023 was €845.000,00.",
		"Version 1.2.3 (build 20240115) shipped on 2024-01-15 at 10:30; v2.10.0-rc.1 follows on 15/02/2024.",
		"The meeting moved from 05-06-2024 14:00 to 01/02/2025 09:15 (UTC+01:00).",
		"Order #123456789 of 3 items weighs 2.5 kg; tracking 1Z999AA10123456784.",
		"Server 192.168.100.200 and 10.0.0.1 answered in 0.5227272727272727 s; p < 0.05, n = 1200.",
		"ISBN 978-0-306-40615-7, DOI 10.1000/182, arXiv:2310.06825, PMID 31452104.",
		"Population 8,336,817 (2022); area 783.8 km²; coordinates 40.7128, -74.0060.",
		"Unix time 1700000000 and 1700000000123 ms; UUID 123e4567-e89b-12d3-a456-426614174000.",
		"Score 87/100 on 2023-12-31; ranked 1st of 1,024 teams; +15% year over year; 3 + 4 = 7.",
		"The token limit is 4096 and the secret is to keep prompts short; password policy: 12 characters.",
		"Call between 9 and 17, ext. 204; room 0.12; route 66; flight UA 1234.",
	}
	for _, text := range texts {
		counts := Counts{}
		if got := r.Text(text, counts); got != text || len(counts) != 0 {
			t.Errorf("redacted an ordinary text:\n  %s\n  %s", text, got)
		}
	}
}

// On the repository's public text (testdata/, 10 MB: RAG answers on documentation,
// model completions, QA, emails) the phone, card and secret rules find exactly the real
// phone numbers it holds; the card and secret rules were fitted to it (a decimal
// fraction and documentation placeholders were read as such before). The held-out text
// (internal/corpus/testdata, fitted on nothing) is measured in the next test.
func TestPublicTextRedactsOnlyRealData(t *testing.T) {
	found := redactFiles(t, "../../../testdata/*/*", nil)
	wantPhones := []string{"(555) 123-4567", "0345 854 7777", "1-206-266-4064", "1-800-196-1014", "1-800-201-7575",
		"1-800-275-2273", "1-800-366-4484", "1-800-422-4453", "1-800-642-7676", "1-800-692-7753", "1-800-799-7233",
		"1-800-829-1040", "1-800-829-4933", "1-866-331-9474", "1-888-373-7888"}
	if got := found[Phone]; !slices.Equal(got, wantPhones) {
		t.Errorf("phones: %q\nwant %q", got, wantPhones)
	}
	for _, k := range []string{Card, Secret} {
		if len(found[k]) != 0 {
			t.Errorf("%s: %q; the public text holds none", k, found[k])
		}
	}
}

// Held out: the corpus's embedded sets (code, help pages, product failures, QA in other
// languages, 1.6 MB) were not looked at while the rules were written. Measured: no
// phone or secret; one card false positive, a 19-digit id inside "korean-...-0" that
// passes the Luhn check and has a JCB prefix.
func TestHeldOutText(t *testing.T) {
	skip := []string{"alpaca_eval", "gsm8k", "nq_open"} // sets the repository keeps for other checks
	found := redactFiles(t, "../../../internal/corpus/testdata/*/*", skip)
	if len(found[Phone]) != 0 || len(found[Secret]) != 0 {
		t.Errorf("phones %q, secrets %q; the held-out text holds none", found[Phone], found[Secret])
	}
	if want := []string{"3543942044825767374"}; !slices.Equal(found[Card], want) {
		t.Errorf("cards %q; measured %q (a false positive, documented)", found[Card], want)
	}
}

// redactFiles redacts every file glob matches (but those under a folder in skip) with
// the phone, card and secret kinds and returns what each kind replaced, distinct and
// sorted.
func redactFiles(t *testing.T, glob string, skip []string) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(glob)
	if err != nil || len(files) == 0 {
		t.Fatalf("no files at %s: %v", glob, err)
	}
	found := map[string][]string{}
	for _, f := range files {
		if slices.Contains(skip, filepath.Base(filepath.Dir(f))) {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		for _, k := range []string{Secret, Card, Phone} {
			for _, ru := range builtin[k] {
				for _, sp := range ru.find(text) {
					found[k] = append(found[k], text[sp[0]:sp[1]])
				}
			}
		}
	}
	for k, v := range found {
		slices.Sort(v)
		found[k] = slices.Compact(v)
	}
	return found
}

func TestCompileErrors(t *testing.T) {
	cases := []struct {
		name string
		c    Config
		want string
	}{
		{"unknown kind", Config{Kinds: []string{"ssn"}}, `unknown kind "ssn": use secret, email, card, phone`},
		{"bad regexp", Config{Patterns: []Pattern{{Name: "emp", Regexp: `EMP-(\d+`}}}, "redact.patterns[0] (emp): error parsing regexp: missing closing ): `EMP-(\\d+`: write an RE2 expression"},
		{"lookahead", Config{Patterns: []Pattern{{Name: "emp", Regexp: `EMP(?=\d)`}}}, "invalid or unsupported Perl syntax"},
		{"matches nothing but empty", Config{Patterns: []Pattern{{Name: "emp", Regexp: `\d*`}}}, "matches the empty text"},
		{"a built-in's name", Config{Patterns: []Pattern{{Name: "email", Regexp: `x`}}}, "is a built-in kind"},
		{"bad name", Config{Patterns: []Pattern{{Name: "Employee ID", Regexp: `x`}}}, `name "Employee ID": use 1-32 lower-case`},
		{"too long", Config{Patterns: []Pattern{{Name: "long", Regexp: strings.Repeat("a", MaxPatternBytes+1)}}}, "at most 512"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Compile(c.c); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v; want one with %q", err, c.want)
			}
		})
	}
}

func TestCustomPatternAndJSON(t *testing.T) {
	r, err := Compile(Config{Kinds: []string{Email}, Patterns: []Pattern{{Name: "employee_id", Regexp: `\bEMP-\d{6}\b`}}})
	if err != nil {
		t.Fatal(err)
	}
	// An escape hides nothing (\u0040 is @), keys stay where they were, numbers as sent,
	// and only the top-level id is kept.
	doc := []byte(`{"id":"EMP-123456","agent":"hr","input":"Reset EMP-654321\nfor ann\u0040example.com","output":{"role":"assistant","content":"done <ok>"},"metadata":{"n":1.50,"id":"EMP-222222","tags":["EMP-111111"]}}`)
	out, counts, err := r.JSON(doc, "id", "agent", "time")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"EMP-123456","agent":"hr","input":"Reset [redacted:employee_id]\nfor [redacted:email]","output":{"role":"assistant","content":"done <ok>"},"metadata":{"n":1.50,"id":"[redacted:employee_id]","tags":["[redacted:employee_id]"]}}`
	if string(out) != want || counts["employee_id"] != 3 || counts[Email] != 1 {
		t.Fatalf("got %s %v\nwant %s", out, counts, want)
	}
	clean := []byte(`{"id": "x", "input": "nothing here", "n": 1.50}`)
	if out, counts, err := r.JSON(clean, "id"); err != nil || string(out) != string(clean) || counts != nil {
		t.Fatalf("a document with nothing to redact changed: %s %v %v", out, counts, err)
	}
}
