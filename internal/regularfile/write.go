package regularfile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Write puts b at path whole or not at all, across a crash too: a
// temporary file beside path is written and synced, renamed over path,
// and the directory is synced. perm is the file's mode.
func Write(path string, b []byte, perm fs.FileMode) error {
	return put(path, b, perm, os.Rename)
}

// Create is Write for a file that must not exist yet (a lock): when one
// does, it is left alone and the error matches fs.ErrExist.
func Create(path string, b []byte, perm fs.FileMode) error {
	return put(path, b, perm, os.Link)
}

func put(path string, b []byte, perm fs.FileMode, place func(oldpath, newpath string) error) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // after a rename, nothing is there
	_, err = f.Write(b)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = place(f.Name(), path)
	}
	if err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
