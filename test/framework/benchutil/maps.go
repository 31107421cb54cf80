package benchutil

import (
	"cmp"
	"sort"
)

// Sum adds up a map's values.
func Sum[V int | int64 | float64](m map[string]V) V {
	var n V
	for _, v := range m {
		n += v
	}
	return n
}

// ByValue returns a map's keys by value (largest first), then by name.
func ByValue[V cmp.Ordered](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}
