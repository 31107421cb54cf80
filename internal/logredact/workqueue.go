package logredact

import "reflect"

// queueItemsMessage is the message controller-runtime's priority queue logs every 10 s at V(5)
// and above, with its live items as "items" (v0.24.1, priorityqueue.logState). It reads them
// after it let go of the queue's lock, so marshalling them races the queue: a worker that takes
// an item meanwhile sets its ReadyAt to nil between the encoder's nil check and its call
// ("value method time.Time.MarshalJSON called using nil *Time pointer"), and the manager panics.
// capwin's managers log how many items there are instead, and never read the items themselves.
const queueItemsMessage = "workqueue_items"

// queueItems returns keysAndValues with the priority queue's items replaced by their number, as
// a copy.
func queueItems(msg string, keysAndValues []any) []any {
	if msg != queueItemsMessage {
		return keysAndValues
	}
	out := append([]any(nil), keysAndValues...)
	for i := 0; i+1 < len(out); i += 2 {
		if out[i] != "items" {
			continue
		}
		n := 0
		if v := reflect.ValueOf(out[i+1]); v.Kind() == reflect.Slice {
			n = v.Len()
		}
		out[i], out[i+1] = "itemCount", n
	}
	return out
}
