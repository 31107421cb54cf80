// Package holders tracks which holder (a cluster, one host of a cluster) uses which entry of a
// connection cache, so the cache can close an entry as soon as no holder uses it: when the last
// cluster naming it is deleted, or its Secret changed and every holder moved to the new entry.
package holders

import (
	"strings"
	"sync"
)

// Holders maps holders to cache keys. The zero value is ready to use.
type Holders struct {
	mu    sync.Mutex
	held  map[string]string
	users map[string]int
}

// Hold records that holder uses key from now on. It returns the key the holder used before when no
// holder uses that key any more (the caller closes its entry), "" otherwise.
func (h *Holders) Hold(holder, key string) (unused string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held == nil {
		h.held, h.users = map[string]string{}, map[string]int{}
	}
	old, had := h.held[holder]
	if had && old == key {
		return ""
	}
	h.held[holder] = key
	h.users[key]++
	if had {
		return h.drop(old)
	}
	return ""
}

// Release forgets every holder named prefix or starting with prefix+"/" and returns the keys no
// holder uses any more.
func (h *Holders) Release(prefix string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var unused []string
	for holder, key := range h.held {
		if holder != prefix && !strings.HasPrefix(holder, prefix+"/") {
			continue
		}
		delete(h.held, holder)
		if k := h.drop(key); k != "" {
			unused = append(unused, k)
		}
	}
	return unused
}

// Used reports whether a holder uses key.
func (h *Holders) Used(key string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.users[key] > 0
}

// Len is the number of holders.
func (h *Holders) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.held)
}

func (h *Holders) drop(key string) string {
	h.users[key]--
	if h.users[key] > 0 {
		return ""
	}
	delete(h.users, key)
	return key
}
