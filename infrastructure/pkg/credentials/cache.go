package credentials

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capwin/capwin/internal/loginsecret"
)

// Label marks the Secrets capwin reads logins from. Own sets it together with the owner
// reference; the manager caches only Secrets that carry it (NewCache), so a login is read from
// memory on every reconcile instead of from the API server.
const Label = loginsecret.Label

// NewCache starts (with the manager) a cache of the Secrets labelled Label in namespaces (none:
// all) and returns a reader of login Secrets: from that cache, and live through live when the
// cache has no Secret of that name (one not labelled yet, or missing). Only labelled Secrets
// are held in memory, so the cache grows with the number of logins, not of Secrets or machines.
func NewCache(mgr ctrl.Manager, live client.Reader, namespaces ...string) (client.Reader, error) {
	req, err := labels.NewRequirement(Label, selection.Exists, nil)
	if err != nil {
		return nil, fmt.Errorf("credentials cache: select label %s: %w", Label, err)
	}
	opts := ctrlcache.Options{
		HTTPClient: mgr.GetHTTPClient(), Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		DefaultLabelSelector:        labels.NewSelector().Add(*req),
		DefaultTransform:            ctrlcache.TransformStripManagedFields(),
		ReaderFailOnMissingInformer: true,
	}
	for _, ns := range namespaces {
		if opts.DefaultNamespaces == nil {
			opts.DefaultNamespaces = map[string]ctrlcache.Config{}
		}
		opts.DefaultNamespaces[ns] = ctrlcache.Config{}
	}
	c, err := ctrlcache.New(mgr.GetConfig(), opts)
	if err != nil {
		return nil, fmt.Errorf("credentials cache: %w", err)
	}
	// The informer starts with the manager, before the controllers read through it.
	if _, err := c.GetInformer(context.Background(), &corev1.Secret{}, ctrlcache.BlockUntilSynced(false)); err != nil {
		return nil, fmt.Errorf("credentials cache: %w", err)
	}
	if err := mgr.Add(c); err != nil {
		return nil, fmt.Errorf("credentials cache: add it to the manager: %w", err)
	}
	return secrets{cached: c, live: live}, nil
}

// secrets reads a Secret from the cache, else (not labelled yet, missing, outside the cache's
// namespaces) live.
type secrets struct{ cached, live client.Reader }

func (s secrets) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := s.cached.Get(ctx, key, obj, opts...); err == nil {
		return nil
	}
	return s.live.Get(ctx, key, obj, opts...)
}

func (s secrets) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return s.cached.List(ctx, list, opts...)
}
