package devstack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ErrPostgresMissing matches (errors.Is) the error returned when the
// PostgreSQL server binaries cannot be found.
var ErrPostgresMissing = errors.New("PostgreSQL server binaries not found")

// PostgresMissingError reports where the PostgreSQL binaries were looked for.
// It matches ErrPostgresMissing.
type PostgresMissingError struct {
	// Looked lists the places searched, in order.
	Looked []string
}

// Error is one sentence naming the package to install.
func (e *PostgresMissingError) Error() string {
	return fmt.Sprintf("%s (looked in %s); install them with: apt-get install -y postgresql",
		ErrPostgresMissing, strings.Join(e.Looked, ", "))
}

// Is reports whether target is ErrPostgresMissing.
func (e *PostgresMissingError) Is(target error) bool { return target == ErrPostgresMissing }

// debianGlob is where Debian/Ubuntu packages install server binaries.
const debianGlob = "/usr/lib/postgresql/*/bin"

// findBinDir returns a directory holding initdb and postgres.
func findBinDir(configured string) (string, error) {
	if configured != "" {
		if hasServerBinaries(configured) {
			return configured, nil
		}
		return "", &PostgresMissingError{Looked: []string{configured}}
	}
	looked := []string{debianGlob, "pg_config --bindir", "$PATH"}
	for _, dir := range candidateBinDirs() {
		if hasServerBinaries(dir) {
			return dir, nil
		}
	}
	return "", &PostgresMissingError{Looked: looked}
}

// candidateBinDirs lists possible binary directories, best first.
func candidateBinDirs() []string {
	dirs, _ := filepath.Glob(debianGlob)
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	if dir := pgConfigBinDir(); dir != "" {
		dirs = append(dirs, dir)
	}
	if p, err := exec.LookPath("postgres"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	return dirs
}

// versionOf parses the version directory of /usr/lib/postgresql/<v>/bin
// ("9.6" → 9.6, "15" → 15); unparsable names sort last.
func versionOf(binDir string) float64 {
	v, err := strconv.ParseFloat(filepath.Base(filepath.Dir(binDir)), 64)
	if err != nil {
		return -1
	}
	return v
}

// pgConfigBinDir asks pg_config; "" when it is missing or fails.
func pgConfigBinDir() string {
	if _, err := exec.LookPath("pg_config"); err != nil {
		return ""
	}
	// pg_config answers instantly; the timeout only guards against a broken one.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "pg_config", "--bindir").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func hasServerBinaries(dir string) bool {
	for _, name := range []string{"initdb", "postgres"} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.IsDir() || st.Mode().Perm()&0o111 == 0 {
			return false
		}
	}
	return true
}
