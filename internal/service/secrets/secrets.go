// Package secrets seals the secrets tenants hand the service (their own judge API keys)
// under a key the operator supplies, so that the database holds only ciphertext and a
// copy of the database alone reveals nothing.
//
// Sealing is XChaCha20-Poly1305 (golang.org/x/crypto/chacha20poly1305), an AEAD: a random
// 192-bit nonce per seal (random nonces of that size never repeat in practice, so there is
// no counter to keep across processes), and associated data the caller binds the secret to
// (the service uses the tenant id and the endpoint name), so that a sealed value copied to
// another tenant's row does not open there. RATIONALE.md ("Tenants' judge keys") says why
// this construction and library.
//
// A sealed value is: version byte (1) | key id (4 bytes) | nonce (24 bytes) | ciphertext
// and tag. The key id (the first 4 bytes of a SHA-256 over the key) says which operator
// key sealed it, so that a [Keyring] holding the current key and old ones opens values
// sealed under any of them, [Keyring.Stale] finds the ones to seal again after a
// rotation, and a wrong key is told apart from a damaged value.
package secrets

import (
	"bytes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/chacha20poly1305"
)

// KeySize is the size of an operator key: 32 bytes, given as base64 (44 characters).
const KeySize = chacha20poly1305.KeySize

const (
	version  = 1
	idSize   = 4
	overhead = 1 + idSize + chacha20poly1305.NonceSizeX
)

// Errors callers branch on.
var (
	// ErrWrongKey: the value was sealed under an operator key this keyring does not hold
	// (the key was changed without keeping the old one for the rotation).
	ErrWrongKey = errors.New("sealed under another operator key")
	// ErrDamaged: the value is not one this package sealed, was changed, or was sealed for
	// other associated data (another tenant or endpoint).
	ErrDamaged = errors.New("sealed value damaged or not for this tenant and endpoint")
)

type key struct {
	id   [idSize]byte
	aead cipher.AEAD
}

// Keyring seals under its current key and opens values sealed under the current or any
// old key. It is safe for concurrent use.
type Keyring struct {
	current key
	old     []key
}

// NewKey returns a new random operator key, base64-encoded, for the operator to keep.
func NewKey() string {
	b := make([]byte, KeySize)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.StdEncoding.EncodeToString(b)
}

// New returns a keyring that seals under current and also opens values sealed under the
// old keys (a rotation in progress). Keys are base64 (standard or URL alphabet, padded or
// not) of 32 bytes; an error says which is wrong and how to make one, without the key.
func New(current string, old ...string) (*Keyring, error) {
	k, err := parse(current, "the current key")
	if err != nil {
		return nil, err
	}
	kr := &Keyring{current: k}
	for i, o := range old {
		ok, err := parse(o, fmt.Sprintf("old key %d", i+1))
		if err != nil {
			return nil, err
		}
		if ok.id != k.id {
			kr.old = append(kr.old, ok)
		}
	}
	return kr, nil
}

func parse(s, what string) (key, error) {
	s = strings.TrimSpace(s)
	var raw []byte
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			raw = b
			break
		}
	}
	if len(raw) != KeySize {
		return key{}, fmt.Errorf("secrets: %s is not %d bytes of base64 (it is %d characters); make one with scorekit secret-key or openssl rand -base64 32", what, KeySize, len(s))
	}
	aead, err := chacha20poly1305.NewX(raw)
	if err != nil {
		return key{}, fmt.Errorf("secrets: %s: %w", what, err)
	}
	return key{id: keyID(raw), aead: aead}, nil
}

// keyID names a key without revealing it: a truncated hash under a fixed label.
func keyID(raw []byte) [idSize]byte {
	h := sha256.Sum256(append([]byte("scorekit secrets key id\x00"), raw...))
	var id [idSize]byte
	copy(id[:], h[:])
	return id
}

// ID is the current key's id in hex, as errors and the rotation command show it.
func (k *Keyring) ID() string { return hex.EncodeToString(k.current.id[:]) }

// Seal seals plaintext under the current key, bound to ad.
func (k *Keyring) Seal(plaintext, ad []byte) []byte {
	out := make([]byte, overhead, overhead+len(plaintext)+k.current.aead.Overhead())
	out[0] = version
	copy(out[1:], k.current.id[:])
	nonce := out[1+idSize : overhead]
	_, _ = rand.Read(nonce)
	return k.current.aead.Seal(out, nonce, plaintext, ad)
}

// Open returns the plaintext of sealed, which must have been sealed with the same ad. An
// error wraps ErrWrongKey or ErrDamaged and never holds the plaintext.
func (k *Keyring) Open(sealed, ad []byte) ([]byte, error) {
	if len(sealed) < overhead || sealed[0] != version {
		return nil, fmt.Errorf("secrets: %w (not a sealed value of version %d)", ErrDamaged, version)
	}
	id := sealed[1 : 1+idSize]
	for _, c := range append([]key{k.current}, k.old...) {
		if !bytes.Equal(c.id[:], id) {
			continue
		}
		pt, err := c.aead.Open(nil, sealed[1+idSize:overhead], sealed[overhead:], ad)
		if err != nil {
			return nil, fmt.Errorf("secrets: %w", ErrDamaged)
		}
		return pt, nil
	}
	return nil, fmt.Errorf("secrets: %w: it was sealed under key %x, and this service holds key %s%s; give the key that sealed it "+
		"as the old key (SCOREKIT_SECRET_KEY_OLD), or have the tenant store its key again", ErrWrongKey, id, k.ID(), k.oldIDs())
}

func (k *Keyring) oldIDs() string {
	if len(k.old) == 0 {
		return " only"
	}
	ids := make([]string, len(k.old))
	for i, o := range k.old {
		ids[i] = hex.EncodeToString(o.id[:])
	}
	return " and old keys " + strings.Join(ids, ", ")
}

// Stale reports whether sealed was sealed under another key than the current one: after
// a rotation, such values are opened and sealed again (scorekit secret-key rotate).
func (k *Keyring) Stale(sealed []byte) bool {
	return len(sealed) < overhead || !bytes.Equal(sealed[1:1+idSize], k.current.id[:])
}
