package stack

import "testing"

func TestSameOrigin(t *testing.T) {
	t.Parallel()
	cases := []struct {
		a, b string
		same bool
	}{
		{"https://api.example.com/v1", "https://api.example.com/other/v2", true},
		{"https://API.example.com/v1", "https://api.example.com:443/v1", true},
		{"http://127.0.0.1/v1", "http://127.0.0.1:80/v1", true},
		{"https://api.example.com/v1", "http://api.example.com/v1", false},
		{"https://api.example.com/v1", "https://api.example.com:8443/v1", false},
		{"https://api.example.com/v1", "https://api.example.com.evil.test/v1", false},
		{"https://api.example.com@evil.test/v1", "https://api.example.com/v1", false},
		{"https://api.example.com/v1", "", false},
		{"", "", false},
	}
	for _, c := range cases {
		if got := sameOrigin(c.a, c.b); got != c.same {
			t.Errorf("sameOrigin(%q, %q) = %v, want %v", c.a, c.b, got, c.same)
		}
	}
}
