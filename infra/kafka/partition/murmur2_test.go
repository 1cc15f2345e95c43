package partition

import "testing"

// TestMurmur2MatchesKafka checks the hash against the vectors of the Java
// client's own test (UtilsTest.testMurmur2), read as signed 32-bit integers.
func TestMurmur2MatchesKafka(t *testing.T) {
	t.Parallel()
	cases := []struct {
		key  string
		want int32
	}{
		{"21", -973932308},
		{"foobar", -790332482},
		{"a-little-bit-long-string", -985981536},
		{"a-little-bit-longer-string", -1486304829},
		{"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971},
		{"abc", 479470107},
	}
	for _, c := range cases {
		if got := int32(murmur2(c.key)); got != c.want { //nolint:gosec // the Java client reads the hash as a signed int
			t.Errorf("murmur2(%q) = %d, want %d", c.key, got, c.want)
		}
	}
}
