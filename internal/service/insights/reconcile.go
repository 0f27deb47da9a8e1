package insights

import (
	"fmt"
	"reflect"
	"time"
)

// Changes is what the service writes after an assessment.
type Changes struct {
	// Opened are new insights: no insight of their key was open.
	Opened []Insight
	// Updated are open insights with new evidence or a new severity.
	Updated []Change
	// Resolved are open insights whose condition cleared; ResolvedAt is set.
	Resolved []Insight
}

// Change is an open insight with new evidence.
type Change struct {
	// Insight is the insight as it is now (OpenedAt kept, UpdatedAt new).
	Insight Insight
	// From is the severity it had.
	From Severity
}

// Empty reports whether there is nothing to write.
func (c Changes) Empty() bool { return len(c.Opened)+len(c.Updated)+len(c.Resolved) == 0 }

// Apply returns open after the changes, as a store keeps them: resolved insights left out,
// updated ones replaced, opened ones added at the end. open is not modified.
func (c Changes) Apply(open []Insight) []Insight {
	gone := map[Key]bool{}
	for _, r := range c.Resolved {
		gone[r.Key()] = true
	}
	now := map[Key]Insight{}
	for _, u := range c.Updated {
		now[u.Insight.Key()] = u.Insight
	}
	out := make([]Insight, 0, len(open)+len(c.Opened))
	for _, in := range open {
		if gone[in.Key()] {
			continue
		}
		if u, ok := now[in.Key()]; ok {
			in = u
		}
		out = append(out, in)
	}
	return append(out, c.Opened...)
}

// NewCritical returns the insights that became critical: opened as critical, or raised to
// critical from a warning. These are the ones to notify about.
func (c Changes) NewCritical() []Insight {
	var out []Insight
	for _, in := range c.Opened {
		if in.Severity == SeverityCritical {
			out = append(out, in)
		}
	}
	for _, u := range c.Updated {
		if u.Insight.Severity == SeverityCritical && u.From != SeverityCritical {
			out = append(out, u.Insight)
		}
	}
	return out
}

// Reconcile compares the insights the rules want (desired, from [Assess]) with the open
// ones and says what changed at time now: desired insights without an open one are opened;
// open ones that are still desired are updated when their severity, title or evidence
// changed (and left out when nothing did); open ones no longer desired are resolved.
// Both lists must cover the same (agent, scorer) series: an open insight of a series that
// was not assessed would be resolved. Two insights with one key in either list are an
// error (the store must keep one open insight per key).
func Reconcile(open, desired []Insight, now time.Time) (Changes, error) {
	byKey := map[Key]Insight{}
	for _, in := range open {
		if in.ResolvedAt != nil {
			continue
		}
		if _, dup := byKey[in.Key()]; dup {
			return Changes{}, fmt.Errorf("insights: reconcile: two open insights for %+v; the store must keep one open insight per (agent, scorer, kind)", in.Key())
		}
		byKey[in.Key()] = in
	}
	var c Changes
	seen := map[Key]bool{}
	for _, in := range desired {
		k := in.Key()
		if seen[k] {
			return Changes{}, fmt.Errorf("insights: reconcile: two desired insights for %+v", k)
		}
		seen[k] = true
		old, ok := byKey[k]
		if !ok {
			in.OpenedAt, in.UpdatedAt, in.ResolvedAt = now, now, nil
			c.Opened = append(c.Opened, in)
			continue
		}
		if old.Severity == in.Severity && old.Title == in.Title && reflect.DeepEqual(normal(old.Evidence), normal(in.Evidence)) {
			continue
		}
		in.OpenedAt, in.UpdatedAt, in.ResolvedAt = old.OpenedAt, now, nil
		c.Updated = append(c.Updated, Change{Insight: in, From: old.Severity})
	}
	for _, in := range open {
		if in.ResolvedAt != nil || seen[in.Key()] {
			continue
		}
		t := now
		in.UpdatedAt, in.ResolvedAt = now, &t
		c.Resolved = append(c.Resolved, in)
	}
	return c, nil
}

// normal makes evidence comparable after a round trip through JSON, which turns empty
// slices and maps into absent ones and times into UTC.
func normal(e Evidence) Evidence {
	if len(e.Flags) == 0 {
		e.Flags = nil
	}
	if len(e.Causes) == 0 {
		e.Causes = nil
	}
	if len(e.Worst) == 0 {
		e.Worst = nil
	}
	worst := make([]Example, len(e.Worst))
	for i, w := range e.Worst {
		w.RunTime = w.RunTime.UTC()
		if len(w.Flags) == 0 {
			w.Flags = nil
		}
		worst[i] = w
	}
	if e.Worst != nil {
		e.Worst = worst
	}
	norm := func(c Counts) Counts { c.From, c.To = c.From.UTC(), c.To.UTC(); return c }
	e.Window = norm(e.Window)
	if e.Previous != nil {
		p := norm(*e.Previous)
		e.Previous = &p
	}
	return e
}

// Update assesses one (agent, scorer) and reconciles the result with the insights open
// for it; open insights of other series are left alone. It is the one call the service
// makes after new results of the pair are stored.
func Update(cfg Config, agent, scorer string, results []Result, open []Insight, now time.Time) (Changes, error) {
	var mine []Insight
	for _, in := range open {
		if in.Agent == agent && in.Scorer == scorer {
			mine = append(mine, in)
		}
	}
	desired, err := Assess(cfg, agent, scorer, results, mine)
	if err != nil {
		return Changes{}, err
	}
	return Reconcile(mine, desired, now)
}
