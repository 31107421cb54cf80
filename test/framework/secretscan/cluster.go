package secretscan

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// APIGroupSuffix selects the objects Cluster scans: Cluster API's and capwin's (every group ending
// in cluster.x-k8s.io).
const APIGroupSuffix = "cluster.x-k8s.io"

// Cluster scans a management cluster: every Event (reason, message or note, all namespaces) and the
// status (conditions included) and annotations of every object of the groups ending in
// APIGroupSuffix.
func (s *Scanner) Cluster(ctx context.Context, cfg *rest.Config) ([]Hit, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 200, 400 // one list per resource: client-go's default 5/s would take seconds
	hits, err := s.events(ctx, cfg)
	if err != nil {
		return hits, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return hits, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return hits, err
	}
	lists, err := dc.ServerPreferredResources()
	if err != nil && len(lists) == 0 {
		return hits, fmt.Errorf("discovery: %w", err)
	}
	// One list per resource, side by side: a consistent list can wait up to a second for the
	// API server's watch cache.
	var mu sync.Mutex
	grp, gctx := errgroup.WithContext(ctx)
	grp.SetLimit(16)
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil || !strings.HasSuffix(gv.Group, APIGroupSuffix) {
			continue
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") {
				continue
			}
			grp.Go(func() error {
				objs, err := dyn.Resource(gv.WithResource(r.Name)).List(gctx, metav1.ListOptions{})
				if err != nil {
					return fmt.Errorf("list %s: %w", r.Name, err)
				}
				for i := range objs.Items {
					found := s.object(&objs.Items[i])
					mu.Lock()
					hits = append(hits, found...)
					mu.Unlock()
				}
				return nil
			})
		}
	}
	err = grp.Wait()
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Where < hits[j].Where })
	return hits, err
}

// object scans an object's status and annotations.
func (s *Scanner) object(o *unstructured.Unstructured) []Hit {
	name := fmt.Sprintf("%s %s/%s", o.GetKind(), o.GetNamespace(), o.GetName())
	var hits []Hit
	if status, ok := o.Object["status"]; ok {
		b, _ := json.Marshal(status)
		hits = append(hits, s.Text(name+" status", string(b))...)
	}
	for k, v := range o.GetAnnotations() {
		hits = append(hits, s.Text(fmt.Sprintf("%s annotation %s", name, k), v)...)
	}
	return hits
}

func (s *Scanner) events(ctx context.Context, cfg *rest.Config) ([]Hit, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	var hits []Hit
	opts := metav1.ListOptions{Limit: 500}
	for {
		events, err := cs.CoreV1().Events("").List(ctx, opts)
		if err != nil {
			return hits, fmt.Errorf("list events: %w", err)
		}
		for _, e := range events.Items {
			hits = append(hits, s.event(&e)...)
		}
		if opts.Continue = events.Continue; opts.Continue == "" {
			return hits, nil
		}
	}
}

func (s *Scanner) event(e *corev1.Event) []Hit {
	where := fmt.Sprintf("Event %s/%s (%s %s)", e.Namespace, e.Name, e.InvolvedObject.Kind, e.InvolvedObject.Name)
	return s.Text(where, strings.Join([]string{e.Reason, e.Message, e.Action}, "\n"))
}

// Metrics scans what a metrics endpoint serves for a registry (the managers' endpoint serves
// controller-runtime's registry in the text format).
func (s *Scanner) Metrics(where string, g prometheus.Gatherer) ([]Hit, error) {
	families, err := g.Gather()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range families {
		if err := enc.Encode(f); err != nil {
			return nil, err
		}
	}
	return s.Reader(where, &buf)
}
