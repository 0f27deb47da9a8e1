package secrets_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/service/secrets"
)

func keyring(t *testing.T, current string, old ...string) *secrets.Keyring {
	t.Helper()
	k, err := secrets.New(current, old...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSealOpen(t *testing.T) {
	k := keyring(t, secrets.NewKey())
	secret := []byte("sk-tenant-secret-0123456789")
	ad := []byte("tenant 7\x00endpoint team")
	sealed := k.Seal(secret, ad)
	if bytes.Contains(sealed, secret) {
		t.Fatal("the sealed value holds the secret")
	}
	if again := k.Seal(secret, ad); bytes.Equal(again, sealed) {
		t.Fatal("two seals of one secret are equal: the nonce is not random")
	}
	got, err := k.Open(sealed, ad)
	if err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("open: %q, %v", got, err)
	}
	for _, tt := range []struct {
		name   string
		sealed []byte
		ad     []byte
	}{
		{"denied: another tenant's associated data", sealed, []byte("tenant 8\x00endpoint team")},
		{"denied: another endpoint", sealed, []byte("tenant 7\x00endpoint other")},
		{"denied: a flipped byte", flip(sealed, len(sealed)-1), ad},
		{"denied: cut short", sealed[:20], ad},
		{"denied: not sealed at all", []byte("sk-plain"), ad},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pt, err := k.Open(tt.sealed, tt.ad)
			if !errors.Is(err, secrets.ErrDamaged) || pt != nil {
				t.Fatalf("open: %q, %v; want ErrDamaged", pt, err)
			}
			if strings.Contains(err.Error(), string(secret)) {
				t.Fatalf("the error holds the secret: %v", err)
			}
		})
	}
}

func flip(b []byte, i int) []byte {
	c := bytes.Clone(b)
	c[i] ^= 1
	return c
}

// A wrong operator key is told apart from damage, says which keys are involved and how
// to fix it; a keyring with the old key opens and finds what to seal again (rotation).
func TestWrongKeyAndRotation(t *testing.T) {
	oldKey, newKey := secrets.NewKey(), secrets.NewKey()
	ad := []byte("tenant 1\x00endpoint default")
	sealed := keyring(t, oldKey).Seal([]byte("sk-abc"), ad)

	wrong := keyring(t, newKey)
	_, err := wrong.Open(sealed, ad)
	if !errors.Is(err, secrets.ErrWrongKey) || !strings.Contains(err.Error(), "SCOREKIT_SECRET_KEY_OLD") || !strings.Contains(err.Error(), wrong.ID()) {
		t.Fatalf("open under the wrong key: %v; want ErrWrongKey naming the keys and the fix", err)
	}
	if strings.Contains(err.Error(), newKey) || strings.Contains(err.Error(), oldKey) {
		t.Fatalf("the error holds an operator key: %v", err)
	}

	rotating := keyring(t, newKey, oldKey)
	if !rotating.Stale(sealed) {
		t.Fatal("a value sealed under the old key is not stale")
	}
	pt, err := rotating.Open(sealed, ad)
	if err != nil || string(pt) != "sk-abc" {
		t.Fatalf("open under the old key during rotation: %q, %v", pt, err)
	}
	resealed := rotating.Seal(pt, ad)
	if rotating.Stale(resealed) {
		t.Fatal("a value sealed again is still stale")
	}
	if pt, err := keyring(t, newKey).Open(resealed, ad); err != nil || string(pt) != "sk-abc" {
		t.Fatalf("after rotation the new key alone opens: %q, %v", pt, err)
	}
}

func TestBadKeys(t *testing.T) {
	for _, tt := range []struct{ name, key string }{
		{"denied: empty", ""},
		{"denied: too short", "c2hvcnQ="},
		{"denied: not base64", strings.Repeat("!", 44)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := secrets.New(tt.key)
			if err == nil || !strings.Contains(err.Error(), "openssl rand -base64 32") {
				t.Fatalf("New(%q): %v; want an error that says how to make a key", tt.key, err)
			}
		})
	}
	if _, err := secrets.New(secrets.NewKey(), "bad"); err == nil || !strings.Contains(err.Error(), "old key 1") {
		t.Fatalf("a bad old key: %v; want it named", err)
	}
}
