package localpods

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// GarbageCollector stands in for kube-controller-manager's garbage collector, which an envtest
// API server lacks: an object whose owners (its ownerReferences) are all gone is deleted, in the
// background, as the real collector does for a dependent of a deleted owner. An owner counts as
// gone when a GET of it (by kind, name and, for a namespaced kind, the dependent's namespace)
// finds nothing or an object of another UID, checked right before the delete, so an owner made
// while a sweep runs keeps its dependents. Foreground deletion and blockOwnerDeletion are not
// modelled: nothing in a management cluster relies on them.
type GarbageCollector struct {
	disc discovery.DiscoveryInterface
	meta metadata.Interface
	log  logr.Logger
}

// NewGarbageCollector returns a collector for the cluster of cfg.
func NewGarbageCollector(cfg *rest.Config, log logr.Logger) (*GarbageCollector, error) {
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &GarbageCollector{disc: disc, meta: meta, log: log}, nil
}

// Run sweeps every interval until ctx ends.
func (gc *GarbageCollector) Run(ctx context.Context, interval time.Duration) {
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if _, err := gc.Sweep(ctx); err != nil && ctx.Err() == nil {
			gc.log.V(1).Info("garbage collection sweep", "err", err.Error())
		}
	}, interval)
}

// resourceInfo is a listable, deletable resource and whether it is namespaced.
type resourceInfo struct {
	gvr        schema.GroupVersionResource
	namespaced bool
}

// Sweep deletes the objects whose owners are all gone and returns how many it deleted. A sweep
// that cannot list every resource deletes nothing.
func (gc *GarbageCollector) Sweep(ctx context.Context) (int, error) {
	lists, err := discovery.ServerPreferredResources(gc.disc)
	if err != nil {
		return 0, err
	}
	byKind := map[schema.GroupVersionKind]resourceInfo{}
	var all []resourceInfo
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			return 0, err
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !hasVerbs(r.Verbs, "list", "get", "delete") {
				continue
			}
			info := resourceInfo{gvr: gv.WithResource(r.Name), namespaced: r.Namespaced}
			byKind[gv.WithKind(r.Kind)] = info
			all = append(all, info)
		}
	}
	// First every object's UID, then a live GET only for a dependent none of whose owners was
	// listed: a sweep costs one list per resource, not one GET per owned object.
	type dependent struct {
		gvr schema.GroupVersionResource
		obj *metav1.PartialObjectMetadata
	}
	seen := map[types.UID]bool{}
	var dependents []dependent
	for _, r := range all {
		list, err := gc.meta.Resource(r.gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			return 0, fmt.Errorf("list %s: %w", r.gvr, err)
		}
		for i := range list.Items {
			o := &list.Items[i]
			seen[o.UID] = true
			if len(o.OwnerReferences) > 0 && o.DeletionTimestamp == nil {
				dependents = append(dependents, dependent{r.gvr, o})
			}
		}
	}
	deleted := 0
	for _, d := range dependents {
		o := d.obj
		if slices.ContainsFunc(o.OwnerReferences, func(ref metav1.OwnerReference) bool { return seen[ref.UID] }) {
			continue
		}
		gone, err := gc.ownersGone(ctx, o, byKind)
		if err != nil || !gone {
			continue
		}
		background := metav1.DeletePropagationBackground
		err = gc.meta.Resource(d.gvr).Namespace(o.Namespace).Delete(ctx, o.Name, metav1.DeleteOptions{
			Preconditions: &metav1.Preconditions{UID: &o.UID}, PropagationPolicy: &background})
		if err == nil {
			deleted++
			gc.log.V(1).Info("deleted: its owners are gone", "resource", d.gvr.String(), "namespace", o.Namespace, "name", o.Name)
		}
	}
	return deleted, nil
}

// ownersGone reports whether no owner of o exists with the UID o names. An owner of a kind the
// API server does not serve counts as present (the real collector waits for it too).
func (gc *GarbageCollector) ownersGone(ctx context.Context, o *metav1.PartialObjectMetadata, byKind map[schema.GroupVersionKind]resourceInfo) (bool, error) {
	for _, ref := range o.OwnerReferences {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			return false, err
		}
		info, ok := byKind[gv.WithKind(ref.Kind)]
		if !ok {
			info, ok = sameKind(gv.Group, ref.Kind, byKind)
		}
		if !ok {
			return false, nil
		}
		ns := ""
		if info.namespaced {
			ns = o.Namespace
		}
		owner, err := gc.meta.Resource(info.gvr).Namespace(ns).Get(ctx, ref.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return false, err
		case owner.UID == types.UID(ref.UID):
			return false, nil
		}
	}
	return true, nil
}

// sameKind finds the kind in another served version of its group (an ownerReference keeps the
// version it was written with).
func sameKind(group, kind string, byKind map[schema.GroupVersionKind]resourceInfo) (resourceInfo, bool) {
	for gvk, info := range byKind {
		if gvk.Group == group && gvk.Kind == kind {
			return info, true
		}
	}
	return resourceInfo{}, false
}

func hasVerbs(verbs metav1.Verbs, want ...string) bool {
	for _, w := range want {
		if !slices.Contains(verbs, w) {
			return false
		}
	}
	return true
}
