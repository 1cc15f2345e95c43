package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/model"
)

// ListFilesName is the name of the list_files tool.
const ListFilesName = "list_files"

type listFiles struct{ opts Options }

type listFilesArgs struct {
	Path  string `json:"path"`
	Depth count  `json:"depth"`
}

func (l listFiles) Spec() model.ToolSpec {
	return model.ToolSpec{
		Name: ListFilesName,
		Description: fmt.Sprintf("List the files and directories under a directory of the sandbox, recursively up to "+
			"depth levels. One entry per line, relative to the directory; directories end with \"/\". "+
			"At most %d entries are returned.", l.opts.MaxListEntries),
		Parameters: []byte(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Directory: absolute, or relative to the working directory (/workspace unless the run names another). Default \".\" (the working directory)."},
    "depth": {"type": "integer", "minimum": 1, "maximum": 5, "description": "Levels to descend; 1 lists direct children only. Default 2."}
  },
  "additionalProperties": false
}`),
	}
}

func (listFiles) ItemType() events.ItemType { return events.ItemToolCall }

// Run lists the directory, sorted by path. A missing directory is a tool
// error; an empty one says so.
func (l listFiles) Run(ctx context.Context, call Call) Result {
	a := listFilesArgs{Path: ".", Depth: 2}
	if r := decode(call, &a); r != nil {
		return *r
	}
	if ctx.Err() != nil {
		return cancelled("list_files " + a.Path)
	}
	dir := resolve(call.Sandbox, a.Path)
	infos, err := call.Sandbox.ListFiles(ctx, dir, int(a.Depth))
	if err != nil {
		return sandboxFailure(ctx, "list_files", dir, err)
	}
	entries := relativeEntries(call.Sandbox, dir, infos)
	if len(entries) == 0 {
		return Result{Output: fmt.Sprintf("%s is empty", dir)}
	}
	var sb strings.Builder
	for _, e := range entries[:min(len(entries), l.opts.MaxListEntries)] {
		sb.WriteString(e + "\n")
	}
	switch n := len(entries) - l.opts.MaxListEntries; {
	case len(infos) >= compute.MaxListed: // the sandbox listed no more
		fmt.Fprintf(&sb, "[... at least %d more entries not shown; list a subdirectory or use a smaller depth]\n", max(n, 0))
	case n > 0:
		fmt.Fprintf(&sb, "[... %d more entries not shown; list a subdirectory or use a smaller depth]\n", n)
	}
	return Result{Output: strings.TrimSuffix(sb.String(), "\n")}
}

// relativeEntries renders entries relative to dir, directories with a
// trailing "/", sorted; dir itself is left out.
func relativeEntries(sb compute.Sandbox, dir string, infos []compute.FileInfo) []string {
	out := make([]string, 0, len(infos))
	for _, fi := range infos {
		p := resolve(sb, fi.Path)
		if p == dir {
			continue
		}
		if rel, ok := strings.CutPrefix(p, strings.TrimSuffix(dir, "/")+"/"); ok {
			p = rel
		}
		if fi.IsDir {
			p += "/"
		}
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}
