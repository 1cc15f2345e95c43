package executor

// SetSnapshotMin lowers the records between two snapshots, for tests.
func SetSnapshotMin(n int) func() {
	old := snapshotMin
	snapshotMin = n
	return func() { snapshotMin = old }
}
