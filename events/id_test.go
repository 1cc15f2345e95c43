package events_test

import (
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/events"
)

// TestDerivedIDsAreStable pins derived ids as logs hold them: an item's,
// a command's or a run's id derived again on a replay or a retry must be
// the same, whether its parts are hashed from the stack (up to 256 bytes)
// or streamed into the hash.
func TestDerivedIDsAreStable(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		parts []string
		want  string
	}{
		{nil, "itm_03P324567W3GA9NYZMS2CPZE94"},
		{[]string{""}, "itm_066G5SSZXKFAC9S9A4WTXQG2HC"},
		{[]string{"acme", "k"}, "itm_02DCAR4A3XBSY155HZK76CG330"},
		{[]string{"tool", "itm_X", "call_1"}, "itm_04HKA51987F3XBJVBNWVHBCGM6"},
		{[]string{strings.Repeat("a", 254)}, "itm_03CPKXGG3T8SG5RRTRMRASAFT9"}, // 255 bytes with its end
		{[]string{strings.Repeat("a", 255)}, "itm_03DN0WK6D0TTD31K05CCEQWWTW"}, // 256
		{[]string{strings.Repeat("a", 128), strings.Repeat("b", 127)}, "itm_07FC7PYZHZ89V0VDRHADA7Q88Y"},
		{[]string{strings.Repeat("é", 300), "x"}, "itm_03BD98W9GZETGGSXXA8E4WDY31"},
	} {
		if got := events.DerivedID("itm", c.parts...); got != c.want {
			t.Errorf("DerivedID(itm, %d parts of %d bytes) = %s, want %s", len(c.parts), len(strings.Join(c.parts, "")), got, c.want)
		}
	}
	if id := events.NewID("evt"); !events.ValidID("evt", id) || len(id) != len("evt_")+26 {
		t.Errorf("NewID = %q", id)
	}
}
