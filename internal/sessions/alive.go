package sessions

// Alive reports whether the session with id exists (it has not ended or
// expired), without creating it.
func (r *Registry) Alive(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sessions[id] != nil
}
