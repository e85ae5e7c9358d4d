package plugin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// External provider binaries are named BinaryPrefix+NAME and live in a
// plugins directory: DefaultDir unless EnvDir or a command's flag says
// otherwise.
const (
	BinaryPrefix = "rackform-provider-"
	DefaultDir   = ".rackform/plugins"
	EnvDir       = "RACKFORM_PLUGIN_DIR"
)

// Binary is a provider plugin found on disk.
type Binary struct {
	Name string
	Path string
}

// Dir is the plugins directory: the flag value if set, else $RACKFORM_PLUGIN_DIR,
// else DefaultDir.
func Dir(flagValue string, getenv func(string) string) string {
	if flagValue != "" {
		return flagValue
	}
	if d := getenv(EnvDir); d != "" {
		return d
	}
	return DefaultDir
}

// namePattern is a provider name as it appears in a provider block label.
var namePattern = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

func checkName(name string) error {
	if !namePattern.MatchString(name) {
		return fmt.Errorf("provider name %q is not valid: use lowercase letters, digits, '_' and '-', starting with a letter", name)
	}
	return nil
}

// Discover lists the provider binaries in dir, sorted by name: regular,
// executable files named rackform-provider-NAME (with ".exe" on Windows).
// A missing directory has no plugins. Discover does not verify hashes: that
// is Lock.Verify's job, before anything is executed.
func Discover(dir string) ([]Binary, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading plugins directory: %w", err)
	}
	var out []Binary
	for _, e := range entries {
		base, ok := strings.CutPrefix(e.Name(), BinaryPrefix)
		if !ok {
			continue
		}
		base = strings.TrimSuffix(base, ".exe")
		if checkName(base) != nil {
			continue
		}
		path := filepath.Join(dir, e.Name())
		info, err := os.Stat(path) // follows symlinks: a linked binary counts
		if err != nil || !info.Mode().IsRegular() || info.Mode().Perm()&0o111 == 0 {
			continue
		}
		out = append(out, Binary{Name: base, Path: path})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
