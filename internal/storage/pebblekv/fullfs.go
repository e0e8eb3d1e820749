package pebblekv

import (
	"os"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// fullFS is the file system Pebble runs on. Pebble treats a failed WAL or
// MANIFEST write as fatal and retries a failed flush at once, so a write the
// disk has no room for (ENOSPC, EDQUOT) never reaches it: the operation
// stalls, the guard refuses new commits with OutOfDiskSpace meanwhile, and
// the operation is retried until it succeeds once space is freed. Reads are
// not affected. Syncs are not retried: after a failed fsync the kernel may
// have dropped the unwritten pages, so a retry could succeed falsely;
// preallocated WAL space makes a sync's ENOSPC unlikely, and Pebble treats it
// as fatal.
type fullFS struct {
	vfs.FS
	g *spaceGuard
}

// Unwrap implements vfs.FS.
func (fs fullFS) Unwrap() vfs.FS { return fs.FS }

func (fs fullFS) file(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return fullFile{File: f, g: fs.g}, nil
}

// Create implements vfs.FS.
func (fs fullFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, c)
	if isNoSpace(err) {
		err = fs.g.stall(err, func() error { f, err = fs.FS.Create(name, c); return err })
	}
	return fs.file(f, err)
}

// ReuseForWrite implements vfs.FS.
func (fs fullFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, c)
	if isNoSpace(err) {
		err = fs.g.stall(err, func() error { f, err = fs.FS.ReuseForWrite(oldname, newname, c); return err })
	}
	return fs.file(f, err)
}

// OpenReadWrite implements vfs.FS.
func (fs fullFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	return fs.file(fs.FS.OpenReadWrite(name, c, opts...))
}

// Link implements vfs.FS.
func (fs fullFS) Link(oldname, newname string) error {
	return fs.g.retry(func() error { return fs.FS.Link(oldname, newname) })
}

// Rename implements vfs.FS.
func (fs fullFS) Rename(oldname, newname string) error {
	return fs.g.retry(func() error { return fs.FS.Rename(oldname, newname) })
}

// MkdirAll implements vfs.FS.
func (fs fullFS) MkdirAll(dir string, perm os.FileMode) error {
	return fs.g.retry(func() error { return fs.FS.MkdirAll(dir, perm) })
}

// fullFile retries writes the disk has no room for; a write that failed
// part way resumes after the bytes that were written.
type fullFile struct {
	vfs.File
	g *spaceGuard
}

// Write implements vfs.File.
func (f fullFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	if isNoSpace(err) {
		err = f.g.stall(err, func() error {
			m, err := f.File.Write(p[n:])
			n += m
			return err
		})
	}
	return n, err
}

// WriteAt implements vfs.File.
func (f fullFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.File.WriteAt(p, off)
	if isNoSpace(err) {
		err = f.g.stall(err, func() error {
			m, err := f.File.WriteAt(p[n:], off+int64(n))
			n += m
			return err
		})
	}
	return n, err
}
