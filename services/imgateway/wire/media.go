package wire

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// MaxMediaBytes bounds a media file the gateway reads and inlines: a frame
// is held whole in memory on both sides, and 8 MiB keeps a few in flight cheap.
const MaxMediaBytes = 8 << 20

// ErrMediaDropped reports a media segment that cannot be sent: no
// data.media, a kind other than url, base64 or path, or a path outside the
// media directory, missing or too large.
var ErrMediaDropped = errors.New("sandbox_outbound_media_dropped")

// mediaTypes are the segment types whose content is a MediaRef in data.media.
var mediaTypes = map[string]bool{"image": true, "audio": true, "video": true, "file": true}

// IsMedia reports whether seg is an image, audio, video or file segment.
func IsMedia(seg Segment) bool { return mediaTypes[seg.Type] }

// Media returns the outbound form of a media segment, read only through
// data.media: {url} is passed through, {base64} inlined as "base64://…",
// {path} read from below dir (a path is untrusted: it must resolve inside
// dir, at most MaxMediaBytes) and inlined the same way. Anything else is
// ErrMediaDropped, wrapped with why.
func Media(seg Segment, dir string) (Segment, error) {
	ref, ok := seg.Data["media"].(map[string]any)
	if !ok {
		return Segment{}, fmt.Errorf("%s segment without data.media: %w", seg.Type, ErrMediaDropped)
	}
	var file string
	switch {
	case str(ref, "url") != "":
		file = str(ref, "url")
	case str(ref, "base64") != "":
		file = "base64://" + strings.TrimPrefix(str(ref, "base64"), "base64://")
	case str(ref, "path") != "":
		b, err := readMedia(dir, str(ref, "path"))
		if err != nil {
			return Segment{}, err
		}
		file = "base64://" + base64.StdEncoding.EncodeToString(b)
	default:
		return Segment{}, fmt.Errorf("%s segment's media has no url, base64 or path: %w", seg.Type, ErrMediaDropped)
	}
	return Segment{Type: seg.Type, Data: map[string]any{"file": file}}, nil
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// readMedia reads path, which must name a regular file inside dir once
// every link is resolved.
func readMedia(dir, path string) ([]byte, error) {
	if dir == "" {
		return nil, fmt.Errorf("media path without a media directory: %w", ErrMediaDropped)
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("media directory: %w: %w", err, ErrMediaDropped)
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, fmt.Errorf("media path: %w: %w", err, ErrMediaDropped)
	}
	if rel, err := filepath.Rel(root, resolved); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("media path outside the media directory: %w", ErrMediaDropped)
	}
	f, err := os.Open(resolved) //nolint:gosec // the path was confined to the media directory above
	if err != nil {
		return nil, fmt.Errorf("media path: %w: %w", err, ErrMediaDropped)
	}
	defer func() { _ = f.Close() }()
	b, err := io.ReadAll(io.LimitReader(f, MaxMediaBytes+1))
	if err != nil || len(b) > MaxMediaBytes {
		return nil, fmt.Errorf("media file unreadable or over %d bytes: %w", MaxMediaBytes, ErrMediaDropped)
	}
	return b, nil
}
