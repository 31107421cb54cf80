// Package logredact keeps API bodies out of the managers' logs. At verbosity 8 and above, client-go
// logs the body of every request and response it sends to the API server ("Request Body",
// "Response Body"): Secrets with their data included, so a manager run with -v=8 to debug would
// write vCenter and Hyper-V passwords, guest, registry and domain credentials and bootstrap tokens
// into its log. The managers' logger and klog's own output drop those bodies; everything else
// client-go logs at those levels (verbs, URLs, status codes, timings, masked headers) stays.
package logredact

import (
	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// Omitted replaces a body.
const Omitted = "[omitted: capwin does not log API bodies, they can hold Secrets]"

// bodyMessages are client-go's messages that carry a body (k8s.io/client-go/rest logBody).
var bodyMessages = map[string]bool{"Request Body": true, "Response Body": true}

// Logger returns l with API bodies dropped (l itself when it already drops them).
func Logger(l logr.Logger) logr.Logger {
	if _, wrapped := l.GetSink().(*sink); wrapped || l.GetSink() == nil {
		return l
	}
	return logr.New(&sink{next: l.GetSink()})
}

// redact returns keysAndValues with the body of a body message replaced, as a copy.
func redact(msg string, keysAndValues []any) []any {
	if !bodyMessages[msg] {
		return keysAndValues
	}
	out := append([]any(nil), keysAndValues...)
	for i := 0; i+1 < len(out); i += 2 {
		if out[i] == "body" {
			out[i+1] = Omitted
		}
	}
	return out
}

type sink struct{ next logr.LogSink }

func (s *sink) Init(info logr.RuntimeInfo) {
	s.next.Init(logr.RuntimeInfo{CallDepth: info.CallDepth + 1})
}
func (s *sink) Enabled(level int) bool { return s.next.Enabled(level) }
func (s *sink) Info(level int, msg string, keysAndValues ...any) {
	s.next.Info(level, msg, queueItems(msg, redact(msg, keysAndValues))...)
}
func (s *sink) Error(err error, msg string, keysAndValues ...any) {
	s.next.Error(err, msg, redact(msg, keysAndValues)...)
}
func (s *sink) WithValues(keysAndValues ...any) logr.LogSink {
	return &sink{next: s.next.WithValues(keysAndValues...)}
}
func (s *sink) WithName(name string) logr.LogSink { return &sink{next: s.next.WithName(name)} }

// WithCallDepth keeps the caller's file and line right (and with them klog's -vmodule).
func (s *sink) WithCallDepth(depth int) logr.LogSink {
	if d, ok := s.next.(logr.CallDepthLogSink); ok {
		return &sink{next: d.WithCallDepth(depth)}
	}
	return s
}

// Filter is klog's filter for the messages that go through klog itself (client-go's calls
// without a logger in their context, with the text format).
type Filter struct{}

var _ klog.LogFilter = Filter{}

// Filter passes klog's printf-style arguments.
func (Filter) Filter(args []any) []any { return args }

// FilterF passes klog's printf-style arguments.
func (Filter) FilterF(format string, args []any) (string, []any) { return format, args }

// FilterS drops the body of client-go's body messages.
func (Filter) FilterS(msg string, keysAndValues []any) (string, []any) {
	return msg, redact(msg, keysAndValues)
}

// Apply installs the filter in klog and, with the json format (whose logger klog hands to
// client-go as is), wraps klog's logger. Call it after the logging flags are applied.
func Apply(format string) {
	klog.SetLogFilter(Filter{})
	if format == "json" {
		klog.SetLoggerWithOptions(Logger(klog.Background()), klog.ContextualLogger(true))
	}
}
