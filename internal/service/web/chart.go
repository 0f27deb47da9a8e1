package web

import (
	"fmt"
	"html"
	"html/template"
	"strings"

	"github.com/scorekit/scorekit/internal/service"
)

// chart is the geometry of one trend chart.
type chart struct {
	w, h                     float64
	left, right, top, bottom float64
	axes                     bool
	label                    string
}

// trendChart draws a series' trend as SVG: the mean score and the pass rate of each
// point (a group of consecutive runs), oldest on the left, both on a 0-1 scale. A point
// with no scored run leaves a gap: skipped and failed results are not zeros. Colours come
// from the stylesheet (classes mean and pass), so the page needs no inline style.
func trendChart(v service.SeriesView, small bool) template.HTML {
	c := chart{w: 720, h: 220, left: 44, right: 12, top: 12, bottom: 34, axes: true}
	if small {
		c = chart{w: 180, h: 44, left: 2, right: 2, top: 4, bottom: 4}
	}
	c.label = fmt.Sprintf("Trend of %s on %s over its last %d runs: mean score and pass rate", v.Scorer, v.Agent, v.TrendRuns)
	var b strings.Builder
	size := "chart"
	if small {
		size = "chart spark"
	}
	fmt.Fprintf(&b, `<svg class="%s" viewBox="0 0 %g %g" width="%g" height="%g" role="img" aria-label="%s" data-points="%d">`,
		size, c.w, c.h, c.w, c.h, html.EscapeString(c.label), len(v.Trend))
	fmt.Fprintf(&b, `<title>%s</title>`, html.EscapeString(c.label))
	if c.axes {
		for _, y := range []float64{0, 0.25, 0.5, 0.75, 1} {
			py := c.y(y)
			fmt.Fprintf(&b, `<line class="grid" x1="%g" y1="%.1f" x2="%g" y2="%.1f"/>`, c.left, py, c.w-c.right, py)
			fmt.Fprintf(&b, `<text class="tick" x="%g" y="%.1f" text-anchor="end">%.2g</text>`, c.left-6, py+4, y)
		}
		if n := len(v.Trend); n > 0 {
			first, last := v.Trend[0], v.Trend[n-1]
			fmt.Fprintf(&b, `<text class="tick" x="%g" y="%g" text-anchor="start">%s</text>`, c.left, c.h-10, first.From.Format("2006-01-02 15:04"))
			fmt.Fprintf(&b, `<text class="tick" x="%g" y="%g" text-anchor="end">%s</text>`, c.w-c.right, c.h-10, last.To.Format("2006-01-02 15:04"))
		}
	}
	c.line(&b, "pass", v.Trend, func(p service.TrendPoint) *float64 { return p.PassRate })
	c.line(&b, "mean", v.Trend, func(p service.TrendPoint) *float64 { return p.Mean })
	if c.axes {
		for i, p := range v.Trend {
			val := p.PassRate
			if val == nil {
				val = p.Mean
			}
			if val == nil {
				continue
			}
			fmt.Fprintf(&b, `<circle class="dot" cx="%.1f" cy="%.1f" r="3"><title>%s</title></circle>`, c.x(i, len(v.Trend)), c.y(*val), html.EscapeString(pointText(p)))
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // every text in it is escaped above
}

func (c chart) x(i, n int) float64 {
	if n <= 1 {
		return c.left + (c.w-c.left-c.right)/2
	}
	return c.left + float64(i)*(c.w-c.left-c.right)/float64(n-1)
}

func (c chart) y(v float64) float64 { return c.top + (1-v)*(c.h-c.top-c.bottom) }

// line draws one polyline per run of points that have a value.
func (c chart) line(b *strings.Builder, class string, pts []service.TrendPoint, val func(service.TrendPoint) *float64) {
	var seg []string
	flush := func() {
		if len(seg) == 1 {
			seg = append(seg, seg[0]) // a lone point still shows, as a dot of the line's width
		}
		if len(seg) > 0 {
			fmt.Fprintf(b, `<polyline class="%s" points="%s"/>`, class, strings.Join(seg, " "))
		}
		seg = seg[:0]
	}
	for i, p := range pts {
		v := val(p)
		if v == nil {
			flush()
			continue
		}
		seg = append(seg, fmt.Sprintf("%.1f,%.1f", c.x(i, len(pts)), c.y(*v)))
	}
	flush()
}

// pointText describes one point for its tooltip.
func pointText(p service.TrendPoint) string {
	s := fmt.Sprintf("%d runs, %s to %s: %d scored", p.Runs, p.From.Format("2006-01-02 15:04"), p.To.Format("2006-01-02 15:04"), p.Scored)
	if p.Mean != nil {
		s += fmt.Sprintf(", mean %.2f", *p.Mean)
	}
	if p.PassRate != nil {
		s += fmt.Sprintf(", pass rate %.0f%%", *p.PassRate*100)
	}
	return s
}
