package diagnostics

import (
	"context"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Event is one event of an object of the story.
type Event struct {
	Time                 time.Time
	Type, Reason, Object string
	Message              string
	Count                int32
}

// events lists the events of objects (by UID), oldest first.
func events(ctx context.Context, c client.Client, objs ...client.Object) ([]Event, error) {
	var out []Event
	for _, o := range objs {
		list := &corev1.EventList{}
		if err := c.List(ctx, list, client.InNamespace(o.GetNamespace()),
			client.MatchingFields{"involvedObject.uid": string(o.GetUID())}); err != nil {
			return nil, err
		}
		for _, e := range list.Items {
			out = append(out, toEvent(e))
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out, nil
}

// toEvent reads an event of either API (core/v1 Event, or events.k8s.io/v1 seen through core/v1).
func toEvent(e corev1.Event) Event {
	t := e.LastTimestamp.Time
	if t.IsZero() {
		t = e.EventTime.Time
	}
	if e.Series != nil && !e.Series.LastObservedTime.IsZero() {
		t = e.Series.LastObservedTime.Time
	}
	if t.IsZero() {
		t = e.CreationTimestamp.Time
	}
	count := max(e.Count, 1)
	if e.Series != nil {
		count = max(e.Series.Count, count)
	}
	return Event{Time: t, Type: e.Type, Reason: e.Reason, Object: e.InvolvedObject.Kind + "/" + e.InvolvedObject.Name,
		Message: e.Message, Count: count}
}
