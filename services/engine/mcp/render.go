package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"strconv"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/tools"
)

// errorPrefix starts the model's text of a result the server marked isError.
const errorPrefix = "[the tool reported an error]\n"

// render turns one result into the item's data and the model's text.
type render struct {
	ctx    context.Context
	sb     compute.Sandbox
	itemID string
	keep   int
	scrub  func(string) string
	text   []string
	stored int
}

// result converts the server's result: its content blocks are kept as the
// server sent them (scrubbed of secrets), except that a block larger than
// the run's offload threshold is stored in the run's output directory and
// referenced; the model gets the text blocks and a line naming every other
// block, or the structured content when there is no text.
func (t *Tool) result(ctx context.Context, call tools.Call, res *sdk.CallToolResult, took time.Duration) tools.Result {
	r := &render{ctx: ctx, sb: call.Sandbox, itemID: call.ItemID, keep: max(t.keep, 1024), scrub: t.set.Secrets().Scrub}
	out := &events.MCPResult{Server: t.server.Name, Tool: t.tool.Tool, IsError: res.IsError,
		DurationMs: took.Milliseconds(), Content: make([]json.RawMessage, 0, len(res.Content))}
	hasText := false
	for i, c := range res.Content {
		block, text := r.block(i, c)
		out.Content = append(out.Content, block)
		if text != "" {
			r.text = append(r.text, text)
		}
		_, isText := c.(*sdk.TextContent)
		hasText = hasText || isText
	}
	if res.StructuredContent != nil {
		out.StructuredContent = r.structured(res.StructuredContent, &out.StructuredContentRef, !hasText)
	}
	text := strings.Join(r.text, "\n")
	if res.IsError {
		text = errorPrefix + text
	}
	return tools.Result{Output: text, MCP: out}
}

// block returns the block as the item keeps it and its line for the model.
func (r *render) block(i int, c sdk.Content) (json.RawMessage, string) {
	switch c := c.(type) {
	case *sdk.TextContent:
		c.Text = r.scrub(c.Text)
		text := c.Text
		if len(c.Text) > r.keep {
			c.Text, c.Meta = r.storeText(i, c.Text, c.Meta)
		}
		return r.encode(c), text
	case *sdk.ImageContent:
		return r.binary(i, "image", c.MIMEType, &c.Data, &c.Meta, c)
	case *sdk.AudioContent:
		return r.binary(i, "audio", c.MIMEType, &c.Data, &c.Meta, c)
	case *sdk.ResourceLink:
		c.URI, c.Name, c.Description = r.scrub(c.URI), r.scrub(c.Name), r.scrub(c.Description)
		return r.encode(c), fmt.Sprintf("[resource link %s: %s %s]", c.Name, c.URI, c.Description)
	case *sdk.EmbeddedResource:
		return r.resource(i, c)
	}
	raw := r.encode(c)
	return raw, "[a content block of another type: " + strings.ToValidUTF8(string(raw[:min(len(raw), 200)]), "") + "]"
}

// binary keeps small image or audio data in the block and stores larger
// data in the run's output directory.
func (r *render) binary(i int, kind, mimeType string, data *[]byte, meta *sdk.Meta, c sdk.Content) (json.RawMessage, string) {
	*data = []byte(r.scrub(string(*data))) // a file the model may read
	line := fmt.Sprintf("[%s %s, %d bytes", kind, r.scrub(mimeType), len(*data))
	if base64.StdEncoding.EncodedLen(len(*data)) > r.keep {
		if ref := r.store(i, extension(mimeType), *data); ref != nil {
			*data = nil
			*meta = withRef(*meta, ref)
			line += ", stored at " + ref.Path
		}
	}
	return r.encode(c), line + "]"
}

// resource handles an embedded resource: text like a text block, a blob
// like binary data.
func (r *render) resource(i int, c *sdk.EmbeddedResource) (json.RawMessage, string) {
	res := c.Resource
	if res == nil {
		return r.encode(c), "[an empty embedded resource]"
	}
	res.URI, res.Text = r.scrub(res.URI), r.scrub(res.Text)
	line := fmt.Sprintf("[resource %s (%s)]", res.URI, r.scrub(res.MIMEType))
	switch {
	case res.Text != "":
		line += "\n" + res.Text
		if len(res.Text) > r.keep {
			res.Text, res.Meta = r.storeText(i, res.Text, res.Meta)
		}
	case len(res.Blob) > 0:
		res.Blob = []byte(r.scrub(string(res.Blob))) // a file the model may read
		line = fmt.Sprintf("[resource %s (%s), %d bytes", res.URI, r.scrub(res.MIMEType), len(res.Blob))
		if base64.StdEncoding.EncodedLen(len(res.Blob)) > r.keep {
			if ref := r.store(i, extension(res.MIMEType), res.Blob); ref != nil {
				res.Blob, res.Meta = nil, withRef(res.Meta, ref)
				line += ", stored at " + ref.Path
			}
		}
		line += "]"
	}
	return r.encode(c), line
}

// structured keeps the structured content, or stores it when larger than
// the threshold; it is the model's text too when the result has no text.
func (r *render) structured(v any, ref **events.OutputRef, forModel bool) json.RawMessage {
	raw, err := scrubbedJSON(v, r.scrub)
	if err != nil {
		r.text = append(r.text, "[structured content that could not be kept: "+err.Error()+"]")
		return nil
	}
	if forModel {
		r.text = append(r.text, string(raw))
	}
	if len(raw) <= r.keep {
		return raw
	}
	if *ref = r.store(-1, ".json", raw); *ref != nil {
		return nil
	}
	return raw
}

// storeText stores a long text in the output directory; the block keeps
// its head and a reference.
func (r *render) storeText(i int, text string, meta sdk.Meta) (string, sdk.Meta) {
	ref := r.store(i, ".txt", []byte(text))
	if ref == nil {
		return text, meta
	}
	head := strings.ToValidUTF8(text[:r.keep/2], "")
	return head + fmt.Sprintf("\n[… %d bytes in all, stored at %s]", len(text), ref.Path), withRef(meta, ref)
}

// store writes data as the item's file for block i (-1: the structured
// content); nil when it cannot (the block is then kept whole).
func (r *render) store(i int, ext string, data []byte) *events.OutputRef {
	name := "structured" + ext
	if i >= 0 {
		name = "block" + strconv.Itoa(i) + ext
	}
	ref, err := tools.StoreOutput(r.ctx, r.sb, r.itemID, name, data)
	if err != nil {
		return nil
	}
	r.stored++
	return ref
}

// encode is block c as the item keeps it: scrubbed of secrets in every
// field (_meta, annotations, titles and data included, in their JSON
// spellings).
func (r *render) encode(c sdk.Content) json.RawMessage {
	raw, err := scrubbedJSON(c, r.scrub)
	if err != nil {
		raw, _ = json.Marshal(map[string]string{"type": "text", "text": "[a content block that could not be kept: " + err.Error() + "]"})
	}
	return raw
}

func withRef(meta sdk.Meta, ref *events.OutputRef) sdk.Meta {
	out := sdk.Meta{}
	for k, v := range meta {
		out[k] = v
	}
	out[events.MCPOutputRefMeta] = ref
	return out
}

// extension is the file extension of a MIME type, ".bin" when unknown.
func extension(mimeType string) string {
	if exts, err := mime.ExtensionsByType(mimeType); err == nil && len(exts) > 0 {
		return exts[len(exts)-1]
	}
	return ".bin"
}
