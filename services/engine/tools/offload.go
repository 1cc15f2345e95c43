package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// DefaultOffloadThreshold is a threshold for Offload and TruncateOutput:
// 32 KiB is about 8k tokens, enough for a failing test's report, while a
// few such results in one turn still leave most of a context window free.
const DefaultOffloadThreshold = 32 << 10

// OffloadDir is the directory, under the run's output directory
// (compute.Paths.Output), that holds offloaded tool outputs.
const OffloadDir = "tool-outputs"

// maxNameBytes bounds the call id part of an offloaded file's name, well
// below NAME_MAX (255) once the hash suffix and extension are added.
const maxNameBytes = 100

// Offload keeps a large tool result out of the model's context. When res.Output is longer than threshold bytes (threshold <= 0:
// never), the full Output is written to OffloadPath(sb.Paths(), id), then
// res.OutputRef is set and res.Output becomes a preview of at most threshold
// bytes: its head and tail and a note telling the model where the output is
// stored and how to read it with read_file_part. When res.Exec is set, its
// Stdout and Stderr are cut to head/tail previews of at most threshold/2
// bytes each (Truncated is then set) on a copy, so the event stays small.
//
// id names the file: it must be unique within the run (the tool item's id
// is; a model's call id may repeat across turns), else a later output
// replaces an earlier one. Offloading the same id and output again writes the
// same file, so a retried call is harmless.
//
// When the file cannot be written, Offload returns the error and leaves res
// unchanged; the caller should then keep the result small with
// TruncateOutput, which loses the middle of the output.
func Offload(ctx context.Context, sb compute.Sandbox, id string, res *Result, threshold int) error {
	if threshold <= 0 || len(res.Output) <= threshold {
		return nil
	}
	if sb == nil {
		return fmt.Errorf("offload tool output %s: no sandbox", id)
	}
	paths := sb.Paths()
	if paths.Output == "" {
		return fmt.Errorf("offload tool output %s: %w", id, errNoOutputDir)
	}
	full := []byte(res.Output)
	sum := sha256.Sum256(full)
	ref := &events.OutputRef{Path: OffloadPath(paths, id), Bytes: int64(len(full)), SHA256: hex.EncodeToString(sum[:])}
	if err := sb.WriteFile(ctx, ref.Path, full); err != nil {
		return fmt.Errorf("offload tool output %s to %s: %w", id, ref.Path, err)
	}
	shrink(res, threshold, offloadNote(ref))
	res.OutputRef = ref
	return nil
}

var errNoOutputDir = errors.New("the sandbox reports no output directory")

// TruncateOutput cuts res.Output longer than threshold bytes (threshold <= 0:
// never) to its head and tail and a note saying so, at most threshold bytes
// in all, and res.Exec's streams as Offload does. It is the fallback when
// Offload fails: the middle of the output is lost.
func TruncateOutput(res *Result, threshold int) {
	if threshold <= 0 || len(res.Output) <= threshold {
		return
	}
	shrink(res, threshold, fmt.Sprintf(
		"[output truncated: %d bytes in all, only the beginning and the end are shown]", len(res.Output)))
}

// OffloadPath is the sandbox path where Offload stores the output of the
// call id: <paths.Output>/tool-outputs/<id>.txt. An id that is not a safe
// file name (bytes outside [A-Za-z0-9_-], or longer than 100 bytes) is
// replaced by a safe form with a hash of the id appended, so distinct ids get
// distinct files and none leaves the directory.
func OffloadPath(paths compute.Paths, id string) string {
	return path.Join(paths.Output, OffloadDir, safeName(id)+".txt")
}

// StoreOutput writes data to <paths.Output>/tool-outputs/<id>-<suffix> in
// sb (id made safe as for OffloadPath; suffix must be a safe file name, e.g.
// "2.png") and returns its ref: how a tool keeps a part of its result
// (an image, a large block) out of the log and the model's context.
func StoreOutput(ctx context.Context, sb compute.Sandbox, id, suffix string, data []byte) (*events.OutputRef, error) {
	if sb == nil {
		return nil, fmt.Errorf("store tool output %s: no sandbox", id)
	}
	paths := sb.Paths()
	if paths.Output == "" {
		return nil, fmt.Errorf("store tool output %s: %w", id, errNoOutputDir)
	}
	sum := sha256.Sum256(data)
	ref := &events.OutputRef{Path: path.Join(paths.Output, OffloadDir, safeName(id)+"-"+suffix),
		Bytes: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
	if err := sb.WriteFile(ctx, ref.Path, data); err != nil {
		return nil, fmt.Errorf("store tool output %s at %s: %w", id, ref.Path, err)
	}
	return ref, nil
}

func safeName(id string) string {
	b := []byte(id)
	for i, c := range b {
		if !nameByte(c) {
			b[i] = '_'
		}
	}
	name := string(b[:min(len(b), maxNameBytes)])
	if name == id && name != "" {
		return name
	}
	sum := sha256.Sum256([]byte(id))
	if name == "" {
		name = "call"
	}
	return name + "-" + hex.EncodeToString(sum[:6])
}

func nameByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	default:
		return c == '_' || c == '-'
	}
}

// offloadNote tells the model where the full output is and how to read it.
func offloadNote(ref *events.OutputRef) string {
	p, _ := json.Marshal(ref.Path) // a string always marshals
	return fmt.Sprintf("[output truncated: the full output (%d bytes, sha256 %s) is stored at %s; "+
		`read byte ranges of it with the tool %s {"path": %s, "offset": 0, "length": %d}]`,
		ref.Bytes, ref.SHA256, ref.Path, ReadFilePartName, p, defaultPartLength)
}

// shrink replaces res.Output by its preview ending in note and cuts the
// streams of a copy of res.Exec.
func shrink(res *Result, threshold int, note string) {
	res.Output = preview(res.Output, threshold, threshold/4, note)
	if res.Exec == nil {
		return
	}
	x := *res.Exec
	var outCut, errCut bool
	x.Stdout, outCut = streamPreview(x.Stdout, threshold/2)
	x.Stderr, errCut = streamPreview(x.Stderr, threshold/2)
	x.Truncated = x.Truncated || outCut || errCut
	res.Exec = &x
}

func streamPreview(s string, limit int) (string, bool) {
	if len(s) <= limit {
		return s, false
	}
	return preview(s, limit, limit/2, ""), true
}
