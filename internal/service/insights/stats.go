package insights

import "math"

// zScore is the two-sided normal quantile for a confidence: 1.96 for 0.95.
func zScore(confidence float64) float64 { return math.Sqrt2 * math.Erfinv(confidence) }

// Wilson returns the Wilson score interval of a proportion of k in n at the two-sided
// confidence z stands for. Unlike the normal interval it stays inside [0, 1] and is honest
// at 0 of n and n of n, which is where insights live. With n = 0 it is [0, 1].
func Wilson(k, n int, z float64) (low, high float64) {
	if n <= 0 {
		return 0, 1
	}
	p := float64(k) / float64(n)
	nf := float64(n)
	z2 := z * z
	den := 1 + z2/nf
	center := (p + z2/(2*nf)) / den
	half := z / den * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	return math.Max(0, center-half), math.Min(1, center+half)
}

// newcombe returns Newcombe's hybrid score interval (his method 10) for the difference of
// two independent proportions, k1/n1 - k2/n2, built from the two Wilson intervals.
func newcombe(k1, n1, k2, n2 int, z float64) (d, low, high float64) {
	p1, p2 := float64(k1)/float64(n1), float64(k2)/float64(n2)
	l1, u1 := Wilson(k1, n1, z)
	l2, u2 := Wilson(k2, n2, z)
	d = p1 - p2
	low = d - math.Sqrt((p1-l1)*(p1-l1)+(u2-p2)*(u2-p2))
	high = d + math.Sqrt((u1-p1)*(u1-p1)+(p2-l2)*(p2-l2))
	return d, low, high
}

// moments are the count, mean and sample variance of some scores.
type moments struct {
	n        int
	mean, m2 float64
}

// add folds x in with Welford's update.
func (m *moments) add(x float64) {
	m.n++
	d := x - m.mean
	m.mean += d / float64(m.n)
	m.m2 += d * (x - m.mean)
}

func (m moments) variance() float64 {
	if m.n < 2 {
		return 0
	}
	return m.m2 / float64(m.n-1)
}

// meanDrop returns how far the mean fell from prev to cur and its interval (Welch's normal
// approximation; both windows hold at least MinScored scores when it is used).
func meanDrop(prev, cur moments, z float64) (d, low, high float64) {
	d = prev.mean - cur.mean
	se := math.Sqrt(prev.variance()/float64(prev.n) + cur.variance()/float64(cur.n))
	return d, d - z*se, d + z*se
}
