package client_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/projections/uistream"
	"github.com/xbot-runtime/xbot/services/api/client"
)

// TestChunkTypesMirrorTheStream: the client's chunk types carry exactly the
// JSON fields of the types the server encodes (projections/uistream), so a
// field added there cannot be dropped here unnoticed.
func TestChunkTypesMirrorTheStream(t *testing.T) {
	t.Parallel()
	for _, pair := range []struct{ client, server any }{
		{client.Chunk{}, uistream.Chunk{}},
		{client.MessageMetadata{}, uistream.Metadata{}},
		{client.InteractionPart{}, uistream.Interaction{}},
		{client.StatusPart{}, uistream.Status{}},
	} {
		if got, want := jsonFields(pair.client), jsonFields(pair.server); !slices.Equal(got, want) {
			t.Errorf("%T has JSON fields %v, the stream's %T %v", pair.client, got, pair.server, want)
		}
	}
}

func jsonFields(v any) []string {
	var out []string
	rt := reflect.TypeOf(v)
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
