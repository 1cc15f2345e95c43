package skills

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// summary is what digest finds in a version's directory.
type summary struct {
	Digest string
	Files  int
	Bytes  int64
}

// digest is "sha256:" and the SHA-256 of a canonical listing of dir: one
// line per directory ("d" and its quoted slash path) and per regular file
// ("f", its quoted path, "x" when executable else "-", its size and the
// SHA-256 of its bytes), in lexical order. Anything else (a symlink, a
// device) is refused.
func digest(dir string) (summary, error) {
	var sum summary
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			_, _ = fmt.Fprintf(h, "d %s\n", strconv.Quote(rel))
			return nil
		case d.Type().IsRegular():
			n, err := fileLine(h, p, rel)
			sum.Files++
			sum.Bytes += n
			return err
		}
		return fmt.Errorf("%w: %s is neither a regular file nor a directory", ErrInvalid, rel)
	})
	if err != nil {
		return summary{}, err
	}
	sum.Digest = "sha256:" + hex.EncodeToString(h.Sum(nil))
	return sum, nil
}

// fileLine writes the digest line of the regular file at p and returns
// its size.
func fileLine(h hash.Hash, p, rel string) (int64, error) {
	f, err := os.Open(p) // #nosec G304 -- a path below the store or the staging directory
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	fh := sha256.New()
	n, err := io.Copy(fh, f)
	if err != nil {
		return 0, err
	}
	mode := "-"
	if fi.Mode()&0o111 != 0 {
		mode = "x"
	}
	_, _ = fmt.Fprintf(h, "f %s %s %d %s\n", strconv.Quote(rel), mode, n, hex.EncodeToString(fh.Sum(nil)))
	return n, nil
}

// changeTime is the later of a file's modification and status change
// times: a chmod or a rewrite that restores the mtime still moves it.
func changeTime(fi fs.FileInfo) time.Time {
	t := fi.ModTime()
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if c := time.Unix(st.Ctim.Sec, st.Ctim.Nsec); c.After(t) {
			t = c
		}
	}
	return t
}
