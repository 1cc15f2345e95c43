package main

import (
	"context"
	"encoding/base64"
	"path"
)

type fileArgs struct {
	SandboxID string `json:"sandbox_id"`
	Run       scope  `json:"run"`
	Path      string `json:"path"`
}

// maxRead keeps a files.read answer well inside a line: 4 MiB is 5.4 MiB
// in base64.
const maxRead = 4 << 20

func filesRead(p *plugin, m incoming) (any, error) {
	in, err := decode[struct {
		fileArgs
		Offset int64 `json:"offset"`
		Limit  int64 `json:"limit"`
	}](m)
	if err != nil {
		return nil, err
	}
	b, err := p.boxFor(in.SandboxID, in.Run)
	if err != nil {
		return nil, err
	}
	limit := in.Limit
	if limit <= 0 || limit > maxRead {
		limit = maxRead
	}
	// The local provider reads from the start: read offset+limit, keep the end.
	data, truncated, err := b.ReadFile(context.Background(), in.Path, max(in.Offset, 0)+limit)
	if err != nil {
		return nil, errorOf(err)
	}
	data = data[min(int64(len(data)), max(in.Offset, 0)):]
	return map[string]any{"data_b64": base64.StdEncoding.EncodeToString(data), "truncated": truncated}, nil
}

func filesWrite(p *plugin, m incoming) (any, error) {
	in, err := decode[struct {
		fileArgs
		DataB64 string `json:"data_b64"`
	}](m)
	if err != nil {
		return nil, err
	}
	data, err := base64.StdEncoding.DecodeString(in.DataB64)
	if err != nil {
		return nil, &rpcError{Code: -32602, Message: "data_b64 is not base64"}
	}
	b, err := p.boxFor(in.SandboxID, in.Run)
	if err != nil {
		return nil, err
	}
	if err := b.WriteFile(context.Background(), in.Path, data); err != nil {
		return nil, errorOf(err)
	}
	return nil, nil
}

type entry struct {
	Path  string `json:"path"`
	Size  int64  `json:"size"`
	IsDir bool   `json:"is_dir"`
}

func filesList(p *plugin, m incoming) (any, error) {
	in, err := decode[struct {
		fileArgs
		Depth int `json:"depth"`
	}](m)
	if err != nil {
		return nil, err
	}
	b, err := p.boxFor(in.SandboxID, in.Run)
	if err != nil {
		return nil, err
	}
	infos, err := b.ListFiles(context.Background(), in.Path, max(in.Depth, 1))
	if err != nil {
		return nil, errorOf(err)
	}
	entries := make([]entry, 0, len(infos))
	for _, f := range infos {
		entries = append(entries, entry{Path: f.Path, Size: f.Size, IsDir: f.IsDir})
	}
	return map[string]any{"entries": entries}, nil
}

// filesStat finds the path in its parent's listing.
func filesStat(p *plugin, m incoming) (any, error) {
	in, err := decode[fileArgs](m)
	if err != nil {
		return nil, err
	}
	b, err := p.boxFor(in.SandboxID, in.Run)
	if err != nil {
		return nil, err
	}
	abs := in.Path
	if !path.IsAbs(abs) {
		abs = path.Join(b.Paths().WorkingDirectory, abs)
	}
	abs = path.Clean(abs)
	infos, err := b.ListFiles(context.Background(), path.Dir(abs), 1)
	if err != nil {
		return nil, errorOf(err)
	}
	for _, f := range infos {
		if f.Path == abs {
			return map[string]any{"entry": entry{Path: f.Path, Size: f.Size, IsDir: f.IsDir}}, nil
		}
	}
	return nil, &rpcError{Code: -32002, Message: "stat " + in.Path + ": no such file or directory", Data: &errorRef{Kind: "file_not_found"}}
}
