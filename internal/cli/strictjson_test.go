package cli

import (
	"strings"
	"testing"
)

// TestStrictFiles holds the config and policy files to one strict reading: an unknown key
// and data after the object are refused, each file with its own message.
func TestStrictFiles(t *testing.T) {
	for _, tc := range []struct {
		name, content, want string
		read                func(string) error
	}{
		{"config unknown key", `{"judgee": {}}`, `read config CONFIG: unknown key "judgee" (known keys: scorers, judge`, readConfigErr},
		{"config trailing data", `{} {}`, "read config CONFIG: trailing data after the JSON object", readConfigErr},
		{"config not an object", `[]`, `read config CONFIG: key "": want cli.fileConfig, got array`, readConfigErr},
		{"policy unknown key", `{"limit": {}}`, `--policy CONFIG: unknown field "limit" (keys: judge, requests_per_second`, readPolicyErr},
		{"policy trailing data", `{}x`, "--policy CONFIG: trailing data after the JSON object", readPolicyErr},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, "config.json", tc.content)
			err := tc.read(path)
			if err == nil {
				t.Fatal("read: nil error")
			}
			want := strings.ReplaceAll(tc.want, "CONFIG", path)
			if !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("read: %v\nwant it to begin %q", err, want)
			}
		})
	}
	for _, read := range []func(string) error{readConfigErr, readPolicyErr} {
		if err := read(writeFile(t, "config.json", "{}\n\n")); err != nil {
			t.Errorf("an object and white space: %v", err)
		}
	}
}

func readConfigErr(path string) error { _, err := readConfig(path); return err }

func readPolicyErr(path string) error { _, err := readPolicy(path); return err }
