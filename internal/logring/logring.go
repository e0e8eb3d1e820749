// Package logring keeps the most recent log lines in memory, as MongoDB's
// getLog command serves them, behind a slog.Handler that tees to another.
package logring

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
)

// Ring holds the last Size formatted log lines.
type Ring struct {
	mu    sync.Mutex
	lines []string
	next  int
	total int64
}

// New returns a ring holding up to size lines.
func New(size int) *Ring { return &Ring{lines: make([]string, 0, size)} }

func (r *Ring) add(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.total++
	if len(r.lines) < cap(r.lines) {
		r.lines = append(r.lines, line)
		return
	}
	r.lines[r.next] = line
	r.next = (r.next + 1) % len(r.lines)
}

// Lines returns the kept lines, oldest first, and how many were ever
// written.
func (r *Ring) Lines() ([]string, int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.lines))
	out = append(out, r.lines[r.next:]...)
	out = append(out, r.lines[:r.next]...)
	return out, r.total
}

// Clear forgets the kept lines and the count of lines written.
func (r *Ring) Clear() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines, r.next, r.total = r.lines[:0], 0, 0
}

// Handler returns a slog.Handler that records every record in r as a JSON
// line and passes it on to next.
func (r *Ring) Handler(next slog.Handler) slog.Handler {
	return &handler{ring: r, next: next}
}

type handler struct {
	ring  *Ring
	next  slog.Handler
	attrs []slog.Attr
	group string
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, rec slog.Record) error {
	var buf bytes.Buffer
	var jh slog.Handler = slog.NewJSONHandler(&buf, nil)
	if len(h.attrs) > 0 {
		jh = jh.WithAttrs(h.attrs)
	}
	if h.group != "" {
		jh = jh.WithGroup(h.group)
	}
	if err := jh.Handle(ctx, rec); err == nil {
		h.ring.add(string(bytes.TrimRight(buf.Bytes(), "\n")))
	}
	return h.next.Handle(ctx, rec)
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &handler{ring: h.ring, next: h.next.WithAttrs(attrs), attrs: append(h.attrs[:len(h.attrs):len(h.attrs)], attrs...), group: h.group}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{ring: h.ring, next: h.next.WithGroup(name), attrs: h.attrs, group: name}
}
