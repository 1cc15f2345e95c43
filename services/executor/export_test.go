package executor

// SetBaseMin lowers the records between two snapshots, for tests.
func SetBaseMin(n int) func() {
	old := baseMin
	baseMin = n
	return func() { baseMin = old }
}
