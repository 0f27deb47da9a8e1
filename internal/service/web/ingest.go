package web

import (
	"net/http"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/store"
)

type ingestData struct {
	pageData
	View service.IngestView
}

// ingest shows what the tenant's OpenTelemetry exports brought in (service.Ingest).
func (h *Handler) ingest(w http.ResponseWriter, r *http.Request, t store.Tenant) {
	v, err := h.svc.Ingest(r.Context(), t)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	d := ingestData{pageData: h.page(t, "Ingest"), View: v}
	d.Nav = "ingest"
	h.render(w, r, "ingest", http.StatusOK, d)
}

// dropReason says what a drop's reason means and what to do about it.
func dropReason(reason string) string {
	switch reason {
	case service.DropLate:
		return "arrived after its run was made; a run is made once (export spans and records as they end)"
	case service.DropOverCap:
		return "the tenant's open spans and records were full (serve --otlp-max-open-bytes)"
	case service.DropWindowEnded:
		return "waited for its run until the trace's window ended (serve --otlp-window)"
	case service.DropNoOutput:
		return "made or joined no run: no output recorded (message content not captured), or its run was rejected"
	case service.DropNoSpan:
		return "its span never came"
	case service.DropNoIDs:
		return "no trace or span id"
	}
	return ""
}
