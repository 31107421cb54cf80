package main

import (
	"context"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capwin/capwin/test/framework/harness"
)

// tokenIDAnnotation is where capwin's bootstrap provider records, on a data Secret, the ID of the
// bootstrap token it carries (bootstrap/reconcilers/windowsconfig).
const tokenIDAnnotation = "bootstrap.cluster.x-k8s.io/windows-token-id"

// tokens are the bootstrap tokens alive in the workload cluster at one moment.
type tokens struct {
	alive int
	// orphaned are the IDs of live tokens no data Secret refers to (so nothing revokes them; they
	// last until they expire), with their expiration.
	orphaned map[string]string
	// rerendered counts the WindowsConfigs whose bootstrap data was written more than once
	// (DataSecretCreated events): each write issues a new token.
	rerendered int
}

// checkTokens lists the workload cluster's bootstrap tokens and the management cluster's data
// Secrets. It reads live, after a phase's counters are taken.
func (b *bench) checkTokens(ctx context.Context) (tokens, error) {
	t := tokens{orphaned: map[string]string{}}
	live := &corev1.SecretList{}
	if err := b.h.WorkloadClient.List(ctx, live, client.InNamespace(metav1.NamespaceSystem)); err != nil {
		return t, err
	}
	data := &corev1.SecretList{}
	if err := b.h.Management.Client.List(ctx, data, client.InNamespace(harness.Namespace)); err != nil {
		return t, err
	}
	known := map[string]bool{}
	for _, s := range data.Items {
		if id := s.Annotations[tokenIDAnnotation]; id != "" {
			known[id] = true
		}
	}
	for _, s := range live.Items {
		if s.Type != corev1.SecretTypeBootstrapToken {
			continue
		}
		t.alive++
		if id := string(s.Data[bootstrapapi.BootstrapTokenIDKey]); !known[id] {
			t.orphaned[id] = string(s.Data[bootstrapapi.BootstrapTokenExpirationKey])
		}
	}
	t.rerendered, _ = b.rerendered(ctx)
	return t, nil
}

// rerendered counts WindowsConfigs with more than one DataSecretCreated event (events.k8s.io,
// read live so no informer is started).
func (b *bench) rerendered(ctx context.Context) (int, error) {
	list := &eventsv1.EventList{}
	if err := b.h.Management.Manager.GetAPIReader().List(ctx, list, client.InNamespace(harness.Namespace)); err != nil {
		return 0, err
	}
	writes := map[string]int{}
	for _, e := range list.Items {
		if e.Reason != "DataSecretCreated" || e.Regarding.Kind != "WindowsConfig" {
			continue
		}
		n := 1
		if e.Series != nil {
			n = int(e.Series.Count)
		}
		writes[e.Regarding.Name] += n
	}
	more := 0
	for _, n := range writes {
		if n > 1 {
			more++
		}
	}
	return more, nil
}

// String lists the orphaned tokens, "-" if none.
func (t tokens) String() string {
	if len(t.orphaned) == 0 {
		return "none"
	}
	ids := make([]string, 0, len(t.orphaned))
	for id := range t.orphaned {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := ""
	for i, id := range ids {
		if i > 0 {
			out += ", "
		}
		exp := t.orphaned[id]
		if e, err := time.Parse(time.RFC3339, exp); err == nil {
			exp = "expires in " + time.Until(e).Round(time.Second).String()
		}
		out += id + " (" + exp + ")"
	}
	return out
}
