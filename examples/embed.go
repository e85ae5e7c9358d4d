// Package examples embeds the example configurations that rackform ships
// inside its binary, so `rackform demo` works from any directory.
package examples

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

//go:embed nexus-lab
var files embed.FS

// NexusLab is the nexus-lab example (one cluster, four racks, 40 servers):
// its *.rf.hcl files, inventory.csv and README.md at the root of the FS.
func NexusLab() fs.FS {
	sub, err := fs.Sub(files, "nexus-lab")
	if err != nil {
		panic(err) // the embed directive guarantees the directory
	}
	return sub
}

// WriteNexusLab writes the nexus-lab example into dir, which must exist.
// Files get mode 0644; existing files of the same name are replaced.
func WriteNexusLab(dir string) error {
	return writeFS(NexusLab(), dir)
}

func writeFS(src fs.FS, dir string) error {
	return fs.WalkDir(src, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(path))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := fs.ReadFile(src, path)
		if err != nil {
			return err
		}
		if err := os.WriteFile(target, data, 0o644); err != nil {
			return fmt.Errorf("writing the example: %w", err)
		}
		return nil
	})
}
