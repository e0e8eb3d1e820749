// Package logfile is the server's log file (-log-path, systemLog.path):
// written in append mode and rotated as MongoDB rotates its log
// (systemLog.logRotate): renamed aside with the time of the rotation
// ("rename"), or closed and opened again after an outside tool moved it
// ("reopen").
package logfile

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// Mode is how Rotate rotates.
type Mode int

const (
	// Rename renames the file to <path>.<UTC time> and starts a new one.
	Rename Mode = iota
	// Reopen closes the file and opens path again: a tool such as
	// logrotate has moved it.
	Reopen
)

// ParseMode reads systemLog.logRotate's values, rename and reopen.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "rename":
		return Rename, nil
	case "reopen":
		return Reopen, nil
	}
	return 0, fmt.Errorf("bad log rotation mode %q: want rename or reopen", s)
}

// File is an open log file. Its methods may be called concurrently.
type File struct {
	mu   sync.Mutex
	path string
	mode Mode
	f    *os.File
	// now is the clock of renamed files' names (tests set it).
	now func() time.Time
}

// Open opens the log at path for appending, creating it. Unless appendTo
// (systemLog.logAppend), an existing non-empty log is first renamed
// aside, as MongoDB does at startup.
func Open(path string, appendTo bool, mode Mode) (*File, error) {
	lf := &File{path: path, mode: mode, now: time.Now}
	if st, err := os.Stat(path); err == nil && st.Size() > 0 && !appendTo {
		if err := lf.renameAside(); err != nil {
			return nil, err
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	lf.f = f
	return lf, nil
}

// Write appends p.
func (lf *File) Write(p []byte) (int, error) {
	lf.mu.Lock()
	defer lf.mu.Unlock()
	return lf.f.Write(p)
}

// Rotate rotates the log by the file's mode. On failure the log goes on
// in the file it was written to.
func (lf *File) Rotate() error {
	lf.mu.Lock()
	defer lf.mu.Unlock()
	if lf.mode == Rename {
		if err := lf.renameAside(); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(lf.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	old := lf.f
	lf.f = f
	return old.Close()
}

// renameAside renames the log to <path>.<UTC time, 2006-01-02T15-04-05>,
// with -1, -2... when that name is taken.
func (lf *File) renameAside() error {
	base := lf.path + "." + lf.now().UTC().Format("2006-01-02T15-04-05")
	to := base
	for i := 1; ; i++ {
		if _, err := os.Lstat(to); errors.Is(err, os.ErrNotExist) {
			break
		}
		to = fmt.Sprintf("%s-%d", base, i)
	}
	return os.Rename(lf.path, to)
}

// Close closes the file.
func (lf *File) Close() error {
	lf.mu.Lock()
	defer lf.mu.Unlock()
	return lf.f.Close()
}
