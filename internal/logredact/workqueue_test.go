package logredact

import (
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
)

// TestQueueItemsCounted: the priority queue's V(5) message reaches the log with the number of its
// items, never the items (which the queue changes while they are marshalled: a nil ReadyAt
// crashed the chaos soak's manager under load).
func TestQueueItemsCounted(t *testing.T) {
	type item struct {
		Key     string
		ReadyAt *time.Time
	}
	var out strings.Builder
	l := Logger(funcr.NewJSON(func(obj string) { out.WriteString(obj) }, funcr.Options{Verbosity: 5}))
	now := time.Now()
	l.V(5).Info(queueItemsMessage, "items", []*item{{Key: "ns/a", ReadyAt: &now}, {Key: "ns/b"}})
	if got := out.String(); strings.Contains(got, "ns/a") || !strings.Contains(got, `"itemCount":2`) {
		t.Fatalf("the queue's items are logged: %s", got)
	}
	out.Reset()
	l.V(5).Info("other", "items", []string{"kept"})
	if !strings.Contains(out.String(), "kept") {
		t.Fatalf("another message's items were changed: %s", out.String())
	}
}
