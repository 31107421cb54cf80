// Package release builds what capwin publishes: the provider components (kustomize of
// bootstrap/config and infrastructure/config), metadata.yaml, the cluster templates of every
// flavor and the ClusterClass (kustomize of templates/, plus the addon ClusterResourceSets).
package release

import (
	"fmt"
	"path/filepath"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// build runs kustomize on dir (relative to the repository root) and returns its objects. Flavors
// may reuse files of sibling folders, so loading is not restricted to the kustomization's root.
func build(root, dir string) ([]*yaml.RNode, error) {
	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = types.LoadRestrictionsNone
	m, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), filepath.Join(root, dir))
	if err != nil {
		return nil, fmt.Errorf("kustomize %s: %w", dir, err)
	}
	return m.ToRNodeSlice(), nil
}

// encode writes objects as one multi-document YAML stream, keeping each scalar's quoting.
func encode(objs []*yaml.RNode) ([]byte, error) {
	s, err := kio.StringAll(objs)
	if err != nil {
		return nil, err
	}
	return []byte(s), nil
}

// find returns the objects of one kind.
func find(objs []*yaml.RNode, kind string) []*yaml.RNode {
	var out []*yaml.RNode
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// only returns the single object of a kind, or an error naming what was found.
func only(objs []*yaml.RNode, kind string) (*yaml.RNode, error) {
	found := find(objs, kind)
	if len(found) != 1 {
		return nil, fmt.Errorf("want exactly one %s, found %d", kind, len(found))
	}
	return found[0], nil
}

// Kustomize builds the kustomization in dir (absolute, or relative to the working directory)
// into one YAML stream, as `kustomize build dir` does.
func Kustomize(dir string) ([]byte, error) {
	objs, err := build("", dir)
	if err != nil {
		return nil, err
	}
	return encode(objs)
}
