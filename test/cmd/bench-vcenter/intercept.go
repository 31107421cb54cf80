package main

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// call is one finished call of a client: its verb ("get", "patch", …), subresource ("" or
// "status"), the object or list (and the key a get asked for), the object's resourceVersion
// before a write, and the outcome.
type call struct {
	verb, sub string
	key       client.ObjectKey
	obj       runtime.Object
	rvBefore  string
	start     time.Time
	err       error
}

// observe returns interceptor funcs that make every call and then tell done about it, with the
// client underneath (nil for subresource calls).
func observe(done func(context.Context, client.WithWatch, call)) interceptor.Funcs {
	finish := func(ctx context.Context, c client.WithWatch, verb, sub string, obj runtime.Object, rv string, start time.Time, err error) error {
		done(ctx, c, call{verb: verb, sub: sub, obj: obj, rvBefore: rv, start: start, err: err})
		return err
	}
	return interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			start := time.Now()
			err := c.Get(ctx, key, obj, opts...)
			done(ctx, c, call{verb: "get", key: key, obj: obj, start: start, err: err})
			return err
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			start := time.Now()
			return finish(ctx, c, "list", "", list, "", start, c.List(ctx, list, opts...))
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			start := time.Now()
			return finish(ctx, c, "create", "", obj, "", start, c.Create(ctx, obj, opts...))
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			rv, start := obj.GetResourceVersion(), time.Now()
			return finish(ctx, c, "update", "", obj, rv, start, c.Update(ctx, obj, opts...))
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			rv, start := obj.GetResourceVersion(), time.Now()
			return finish(ctx, c, "patch", "", obj, rv, start, c.Patch(ctx, obj, patch, opts...))
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			start := time.Now()
			return finish(ctx, c, "delete", "", obj, "", start, c.Delete(ctx, obj, opts...))
		},
		DeleteAllOf: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteAllOfOption) error {
			start := time.Now()
			return finish(ctx, c, "deletecollection", "", obj, "", start, c.DeleteAllOf(ctx, obj, opts...))
		},
		SubResourceGet: func(ctx context.Context, c client.Client, sub string, obj, subObj client.Object, opts ...client.SubResourceGetOption) error {
			start := time.Now()
			return finish(ctx, nil, "get", sub, obj, "", start, c.SubResource(sub).Get(ctx, obj, subObj, opts...))
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			rv, start := obj.GetResourceVersion(), time.Now()
			return finish(ctx, nil, "update", sub, obj, rv, start, c.SubResource(sub).Update(ctx, obj, opts...))
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			rv, start := obj.GetResourceVersion(), time.Now()
			return finish(ctx, nil, "patch", sub, obj, rv, start, c.SubResource(sub).Patch(ctx, obj, patch, opts...))
		},
	}
}

// resource names an object's or list's resource, e.g. "vcentermachines" or "vcentermachines/status".
func resource(s *runtime.Scheme, obj runtime.Object, sub string) string {
	gvk, err := apiutil.GVKForObject(obj, s)
	if err != nil {
		return "unknown"
	}
	if meta.IsListType(obj) {
		gvk.Kind = gvk.Kind[:len(gvk.Kind)-len("List")]
	}
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	if sub != "" {
		return plural.Resource + "/" + sub
	}
	return plural.Resource
}
