package session

import "sync"

// values holds what the VM services keep with a session or with the pool, by key: this package
// does not know what it is.
type values struct {
	mu sync.Mutex
	m  map[any]any
}

// get returns the value of key, made by init on its first use.
func (v *values) get(key any, init func() any) any {
	v.mu.Lock()
	defer v.mu.Unlock()
	if x, ok := v.m[key]; ok {
		return x
	}
	if v.m == nil {
		v.m = map[any]any{}
	}
	x := init()
	v.m[key] = x
	return x
}

// Value returns what the VM services keep with this session under key (what they looked up
// through it), made by init on its first use. It goes with the session: the one that replaces
// it after vCenter ended it starts without.
func (sess *Session) Value(key any, init func() any) any { return sess.values.get(key, init) }

// Shared is Value for what every session of the pool shares (what this manager does on its
// vCenter servers, whatever the identity).
func (sess *Session) Shared(key any, init func() any) any { return sess.pool.values.get(key, init) }
