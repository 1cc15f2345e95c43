package skills

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

// budget counts what a skill's files take against the store's limits.
type budget struct {
	limits Limits
	files  int
	bytes  int64
}

func (b *budget) entry() error {
	b.files++
	if b.files > b.limits.MaxFiles {
		return fmt.Errorf("%w: more than %d files and directories", ErrInvalid, b.limits.MaxFiles)
	}
	return nil
}

// reader bounds r to what is left of the byte budget.
func (b *budget) reader(r io.Reader) io.Reader {
	return &countingReader{r: io.LimitReader(r, b.limits.MaxBytes-b.bytes+1), b: b}
}

type countingReader struct {
	r io.Reader
	b *budget
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.b.bytes += int64(n)
	if c.b.bytes > c.b.limits.MaxBytes {
		return n, fmt.Errorf("%w: its files hold more than %d bytes", ErrInvalid, c.b.limits.MaxBytes)
	}
	return n, err
}

// tarEntryBytes is what a tar may hold per entry beyond its files' bytes:
// its header, an extended (PAX) header for a long name, and padding.
const tarEntryBytes = 8 << 10

// unpacked bounds a compressed tar's decompressed stream to what a skill
// within the limits can take, so that a small archive cannot make the
// reader decompress without end.
func (b *budget) unpacked(r io.Reader) io.Reader {
	limit := b.limits.MaxBytes + int64(b.limits.MaxFiles+1)*tarEntryBytes
	return &cappedReader{r: r, left: limit}
}

type cappedReader struct {
	r    io.Reader
	left int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, fmt.Errorf("%w: the archive unpacks to more than its files and entries may take", ErrInvalid)
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// maxPathBytes bounds a file's path in a skill.
const maxPathBytes = 1024

// localPath checks an archive member's or a file's name: relative, no ..,
// UTF-8 without control characters. It returns it cleaned, slash-separated.
func localPath(name string) (string, error) {
	p := path.Clean(strings.TrimPrefix(filepath.ToSlash(name), "./"))
	bad := len(p) > maxPathBytes || !utf8.ValidString(p) || !filepath.IsLocal(p) ||
		strings.IndexFunc(p, unicode.IsControl) >= 0
	if bad {
		return "", fmt.Errorf("%w: file name %q is not a plain relative path", ErrInvalid, name)
	}
	return p, nil
}

// copyTree copies the directory src into dst: directories and regular
// files only (a symlink is refused), keeping the executable bit. It reads
// through an os.Root of src, so nothing swapped in during the copy leads
// outside it.
func copyTree(src, dst string, b *budget) error {
	root, err := os.OpenRoot(src)
	if err != nil {
		return fmt.Errorf("skill source: %w", err)
	}
	defer func() { _ = root.Close() }()
	return fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		rel, err := localPath(p)
		if err != nil {
			return err
		}
		if err := b.entry(); err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.Mkdir(filepath.Join(dst, rel), 0o700)
		case d.Type().IsRegular():
			return copyFile(root, p, dst, rel, b)
		}
		return fmt.Errorf("%w: %s is a symlink or special file; a skill holds directories and regular files only", ErrInvalid, rel)
	})
}

// copyFile copies the regular file p of root to dst/rel.
func copyFile(root *os.Root, p, dst, rel string, b *budget) error {
	f, err := root.Open(p)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is not a regular file", ErrInvalid, rel)
	}
	return writeFile(dst, rel, f, fi.Mode()&0o111 != 0, b)
}

// writeFile creates dst/rel (and its parents) with r's bytes.
func writeFile(dst, rel string, r io.Reader, exec bool, b *budget) error {
	target := filepath.Join(dst, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		return err
	}
	mode := os.FileMode(0o600)
	if exec {
		mode = 0o700
	}
	f, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode) // #nosec G304 -- a checked local path below dst
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%w: %s appears twice", ErrInvalid, rel)
		}
		return err
	}
	_, err = io.Copy(f, b.reader(r))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// extract unpacks the archive at src (tar, gzip-compressed tar or zip, told
// apart by their first bytes) into dst.
func extract(src, dst string, b *budget) error {
	f, err := os.Open(src) // #nosec G304 -- the operator's archive
	if err != nil {
		return fmt.Errorf("skill source: %w", err)
	}
	defer func() { _ = f.Close() }()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	switch {
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		return extractZip(f, fi.Size(), dst, b)
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		gz, err := gzip.NewReader(bufio.NewReader(f))
		if err != nil {
			return fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		return extractTar(b.unpacked(gz), dst, b)
	case len(head) > 262 && string(head[257:262]) == "ustar":
		return extractTar(f, dst, b)
	}
	return fmt.Errorf("%w: %s is not a directory, a tar, tar.gz or zip archive", ErrInvalid, filepath.Base(src))
}

func extractTar(r io.Reader, dst string, b *budget) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		if err := b.entry(); err != nil { // global headers too: each is parsed
			return err
		}
		if h.Typeflag == tar.TypeXGlobalHeader {
			continue
		}
		rel, err := localPath(h.Name)
		if err != nil {
			return err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(filepath.Join(dst, filepath.FromSlash(rel)), 0o700)
		case tar.TypeReg:
			err = writeFile(dst, rel, tr, h.Mode&0o111 != 0, b)
		default:
			err = fmt.Errorf("%w: %s is a link or special file; a skill holds directories and regular files only", ErrInvalid, rel)
		}
		if err != nil {
			return err
		}
	}
}

func extractZip(r io.ReaderAt, size int64, dst string, b *budget) error {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	for _, zf := range zr.File {
		rel, err := localPath(zf.Name)
		if err != nil {
			return err
		}
		if err := b.entry(); err != nil {
			return err
		}
		mode := zf.Mode()
		switch {
		case mode.IsDir():
			err = os.MkdirAll(filepath.Join(dst, filepath.FromSlash(rel)), 0o700)
		case mode.IsRegular():
			err = unzipFile(zf, dst, rel, b)
		default:
			err = fmt.Errorf("%w: %s is a link or special file; a skill holds directories and regular files only", ErrInvalid, rel)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func unzipFile(zf *zip.File, dst, rel string, b *budget) error {
	rc, err := zf.Open()
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrInvalid, rel, err)
	}
	defer func() { _ = rc.Close() }()
	return writeFile(dst, rel, rc, zf.Mode()&0o111 != 0, b)
}
