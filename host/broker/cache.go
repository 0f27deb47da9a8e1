package broker

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	openai "github.com/sashabaranov/go-openai"
)

// entry is what the cache keeps for one request: a completion or an embedding.
type entry struct {
	Content      string    `json:"content,omitempty"`
	FinishReason string    `json:"finish_reason,omitempty"`
	Embedding    []float32 `json:"embedding,omitempty"`
}

// cache is content addressed: the key is the sha256 of everything that shapes the answer,
// and of the tenant that paid for it: a tenant never gets another's answers, which would
// tell it what that tenant judged and let it skip paying for them.
// It lives in memory and, when dir is set, on disk (one file per key), so a new broker
// reuses what an earlier one paid for.
type cache struct {
	dir string
	max int

	mu  sync.Mutex
	mem map[string]entry
}

func newCache(dir string, max int) (*cache, error) {
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("broker: cache dir: %w; set CacheDir to a writable folder or leave it empty", err)
		}
	}
	return &cache{dir: dir, max: max, mem: map[string]entry{}}, nil
}

// keyVersion changes when the key's recipe changes, so old disk entries become misses.
const keyVersion = 3

// endpoint is where requests go, as far as the answer depends on it: the same model name
// behind another URL, API type or version, organization or Azure deployment may be
// another model (a proxy's alias, a fine-tune, a local server), so each is in the key.
type endpoint struct {
	Name         string `json:"name,omitempty"`
	URL          string `json:"url"`
	APIType      string `json:"api_type"`
	APIVersion   string `json:"api_version,omitempty"`
	Organization string `json:"organization,omitempty"`
	Deployment   string `json:"deployment,omitempty"`
}

// chatKey addresses a tenant's completion: the endpoint and the request exactly as it is sent
// (model, messages and every parameter), so a parameter added later is in the key without
// anyone remembering to add it. occurrence tells apart identical requests in one batch (a
// scorer asking for N generations of the same prompt wants N answers, and re-scoring must
// find each of them again).
func chatKey(tenant string, ep *endpoint, req *openai.ChatCompletionRequest, occurrence int) string {
	return hashKey(&struct {
		V          int                           `json:"v"`
		Kind       string                        `json:"kind"`
		Tenant     string                        `json:"tenant"`
		Endpoint   *endpoint                     `json:"endpoint"`
		Request    *openai.ChatCompletionRequest `json:"request"`
		Occurrence int                           `json:"occurrence"`
	}{keyVersion, "chat", tenant, ep, req, occurrence})
}

// embedKey addresses a tenant's embedding of one text.
func embedKey(tenant string, ep endpoint, model, text string) string {
	return hashKey(&struct {
		V        int      `json:"v"`
		Kind     string   `json:"kind"`
		Tenant   string   `json:"tenant"`
		Endpoint endpoint `json:"endpoint"`
		Model    string   `json:"model"`
		Text     string   `json:"text"`
	}{keyVersion, "embed", tenant, ep, model, text})
}

// hashKey is the sha256 of v's JSON, encoded straight into the hash.
func hashKey(v any) string {
	h := sha256.New()
	if err := json.NewEncoder(h).Encode(v); err != nil {
		// The key's parts are plain data; a failure here is a bug, and an empty key would
		// make unrelated requests share answers.
		panic(fmt.Sprintf("broker: cache key: %v", err))
	}
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0]))
}

func (c *cache) path(key string) string { return filepath.Join(c.dir, key[:2], key+".json") }

// get returns the entry for key from memory, then from disk.
func (c *cache) get(key string) (entry, bool) {
	c.mu.Lock()
	e, ok := c.mem[key]
	c.mu.Unlock()
	if ok || c.dir == "" {
		return e, ok
	}
	b, err := os.ReadFile(c.path(key))
	if err != nil {
		return entry{}, false
	}
	if err := json.Unmarshal(b, &e); err != nil {
		// A torn or foreign file is a miss; the next put overwrites it.
		return entry{}, false
	}
	c.remember(key, e)
	return e, true
}

// put stores e under key. A disk write error is returned for logging; the entry stays in
// memory either way.
func (c *cache) put(key string, e entry) error {
	c.remember(key, e)
	if c.dir == "" {
		return nil
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	p := c.path(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	// Write then rename, so a reader never sees half a file.
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), p)
}

func (c *cache) remember(key string, e entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.mem) >= c.max {
		// Evict an arbitrary entry: cheap, and the disk copy (if any) survives.
		for k := range c.mem {
			delete(c.mem, k)
			break
		}
	}
	c.mem[key] = e
}
