package broker

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	openai "github.com/sashabaranov/go-openai"

	"github.com/scorekit/scorekit/sdk"
)

// embedChunk is how many texts one embeddings request carries: at 3,072 dimensions their
// vectors stay near 4 MB, well under the default answer cap.
const embedChunk = 64

// embed returns one vector per text, from the cache where it can and from requests of at
// most embedChunk texts to the endpoint for the rest.
func (b *Broker) embed(ctx context.Context, t *tenant, s sinks, c *call, texts []string) ([][]float32, error) {
	if b.cfg.EmbeddingModel == "" {
		return nil, &batchErr{sdk.CodeUnavailable, "judge: " + ErrNoEmbeddingModel.Error() + "; set the judge's embedding model (judge.embedding_model in the config file, e.g. \"text-embedding-3-small\")", ErrNoEmbeddingModel}
	}
	if err := b.checkBatch(ctx, t, c, len(texts), "texts"); err != nil {
		return nil, err
	}
	// Embeddings go to the default endpoint (the one with an embedding model), with the
	// tenant's own key for it when it stored one.
	d, err := b.dest(t.name, Route{})
	if err != nil {
		return nil, err
	}
	ep := d.key(b.cfg.EmbeddingModel)
	out := make([][]float32, len(texts))
	var missing []string
	missingIdx := map[string][]int{}
	hits := int64(0)
	for i, text := range texts {
		if e, ok := b.cache.get(embedKey(t.name, ep, b.cfg.EmbeddingModel, text)); ok {
			out[i] = e.Embedding
			hits++
			continue
		}
		if _, dup := missingIdx[text]; !dup {
			missing = append(missing, text)
		}
		missingIdx[text] = append(missingIdx[text], i)
	}
	if hits > 0 {
		s.hit(hits)
	}
	for len(missing) > 0 {
		n := min(len(missing), embedChunk)
		if err := b.embedChunk(ctx, t, s, c, d, ep, missing[:n], missingIdx, out); err != nil {
			return nil, err
		}
		missing = missing[n:]
	}
	return out, nil
}

// embedChunk embeds texts with one request and puts each vector where missingIdx says.
func (b *Broker) embedChunk(ctx context.Context, t *tenant, s sinks, c *call, d *dest, ep endpoint, texts []string, missingIdx map[string][]int, out [][]float32) error {
	est := int64(0)
	for _, m := range texts {
		est += int64(len(m)/4 + 1)
	}
	var resp openai.EmbeddingResponse
	err := b.do(ctx, t, s, c, d, est, func(actx context.Context) (int64, int64, http.Header, error) {
		var err error
		resp, err = d.client.CreateEmbeddings(actx, openai.EmbeddingRequestStrings{
			Input: texts, Model: openai.EmbeddingModel(b.cfg.EmbeddingModel),
		})
		if err != nil {
			return 0, 0, resp.Header(), err
		}
		return int64(resp.Usage.PromptTokens), 0, nil, nil
	})
	if err != nil {
		return err
	}
	if len(resp.Data) != len(texts) {
		return &batchErr{sdk.CodeJudgeError, fmt.Sprintf("judge: the endpoint returned %d embeddings for %d texts", len(resp.Data), len(texts)), errors.New("embedding count mismatch")}
	}
	for j, d := range resp.Data {
		idx := j
		if d.Index >= 0 && d.Index < len(texts) {
			idx = d.Index
		}
		text := texts[idx]
		if len(d.Embedding) == 0 {
			return &batchErr{sdk.CodeJudgeError, fmt.Sprintf("judge: the endpoint returned an empty embedding for text %d", idx), errors.New("empty embedding")}
		}
		b.store(embedKey(t.name, ep, b.cfg.EmbeddingModel, text), entry{Embedding: d.Embedding})
		for _, i := range missingIdx[text] {
			out[i] = d.Embedding
		}
	}
	return nil
}
