package service

// SetAfterGate makes f run in Promote between the agreement gate's measure and the
// transaction that records the promotion, where another promotion may come.
func SetAfterGate(s *Service, f func()) { s.afterGate = f }
