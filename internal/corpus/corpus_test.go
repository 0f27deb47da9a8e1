package corpus

import (
	"testing"
)

func TestLoad(t *testing.T) {
	dir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	cases, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	bySource := map[string]int{}
	for i, c := range cases {
		if ids[c.Run.ID] {
			t.Errorf("duplicate id %s", c.Run.ID)
		}
		ids[c.Run.ID] = true
		bySource[c.Source]++
		if again[i].Run.ID != c.Run.ID {
			t.Fatalf("order not stable at %d: %s then %s", i, c.Run.ID, again[i].Run.ID)
		}
		if c.Label == "" {
			t.Errorf("%s: no label", c.Run.ID)
		}
		if c.WantPass && c.Run.Output == "" {
			t.Errorf("%s: a passing case with an empty output", c.Run.ID)
		}
	}
	// Row counts of the public sets, so a truncated or moved file is noticed.
	tests := []struct {
		source string
		want   int
	}{
		{"halueval", 500},
		{"truthfulqa", 817},
		{"ares", 200},
		{"coqa", 20},
		{"coqa_off_topic", 20},
		{"email_triage", 16},
		{"ragas_triage", 40},
		{"synthetic_empty", 6},
	}
	for _, tt := range tests {
		t.Run(tt.source, func(t *testing.T) {
			if got := bySource[tt.source]; got != tt.want {
				t.Errorf("%s: %d cases, want %d", tt.source, got, tt.want)
			}
		})
	}
	for _, s := range []string{"halueval_off_topic", "truthfulqa_off_topic", "ares_off_topic", "xstest", "xstest_refusal", "xstest_unsafe_refusal", "synthetic_error"} {
		if bySource[s] == 0 {
			t.Errorf("set %s is empty", s)
		}
	}
	t.Logf("%v", bySource)
}

func TestDirEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     string
		wantErr bool
	}{
		{"missing folder", t.TempDir(), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvDir, tt.env)
			_, err := Dir()
			if (err != nil) != tt.wantErr {
				t.Fatalf("Dir() err = %v, wantErr %v", err, tt.wantErr)
			}
		})
	}
}
