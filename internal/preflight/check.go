package preflight

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Finding is one reason a Pod template will not start on the target build.
type Finding struct {
	Workload Workload `json:"workload"`
	// Container and Image are empty for a finding about the whole template.
	Container string `json:"container,omitempty"`
	Image     string `json:"image,omitempty"`
	// Builds are the os.version values of the image's Windows images.
	Builds []string `json:"builds,omitempty"`
	// Unchecked is set when the image could not be read: the template may well start.
	Unchecked bool   `json:"unchecked,omitempty"`
	Problem   string `json:"problem"`
	Fix       string `json:"fix"`
}

// Report is the check of one cluster against a target build.
type Report struct {
	Target Build `json:"target"`
	// Workloads and Containers count the Windows Pod templates and their containers checked.
	Workloads  int `json:"workloads"`
	Containers int `json:"containers"`
	// HyperVClasses are the RuntimeClasses with Hyper-V isolation.
	HyperVClasses []string  `json:"hyperVClasses"`
	Findings      []Finding `json:"findings"`
}

// Blocking counts the findings that will keep Pods from starting; the others could not be checked.
func (r Report) Blocking() (blocking, unchecked int) {
	for _, f := range r.Findings {
		if f.Unchecked {
			unchecked++
		} else {
			blocking++
		}
	}
	return blocking, unchecked
}

// parallelReads is how many Pod templates have their images read at once.
const parallelReads = 8

// Check finds the Windows Pod templates of the cluster behind c (namespace "" = all) that will
// not start on nodes of the target build.
func Check(ctx context.Context, c client.Reader, reg *Registry, target Build, namespace string) (Report, error) {
	workloads, err := Workloads(ctx, c, namespace)
	if err != nil {
		return Report{}, err
	}
	classes, err := HyperVClasses(ctx, c)
	if err != nil {
		return Report{}, err
	}
	r := Report{Target: target, Workloads: len(workloads), HyperVClasses: sortedKeys(classes)}
	perWorkload := make([][]Finding, len(workloads))
	errs := make([]error, len(workloads))
	var wg sync.WaitGroup
	sem := make(chan struct{}, parallelReads)
	for i, w := range workloads {
		r.Containers += len(w.Template.Spec.InitContainers) + len(w.Template.Spec.Containers)
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			perWorkload[i], errs[i] = checkWorkload(ctx, c, reg, target, classes, w)
		}()
	}
	wg.Wait()
	for i := range workloads {
		if errs[i] != nil {
			return Report{}, errs[i]
		}
		r.Findings = append(r.Findings, perWorkload[i]...)
	}
	return r, nil
}

func checkWorkload(ctx context.Context, c client.Reader, reg *Registry, target Build, classes map[string]bool, w Workload) ([]Finding, error) {
	spec := &w.Template.Spec
	var out []Finding
	if pinned := pinnedBuilds(spec); pinned != nil && !slices.Contains(pinned, target.Label()) {
		out = append(out, Finding{Workload: w,
			Problem: fmt.Sprintf("pinned to %s %s: no node of the target build matches, so its Pods stay Pending once the old nodes are gone", buildLabel, strings.Join(pinned, ", ")),
			Fix:     fmt.Sprintf("add %s to the values (a required node affinity with operator In), or drop the pin once the images run on both builds", target.Label())})
	}
	hyperV := false
	if rc := spec.RuntimeClassName; rc != nil && *rc != "" {
		hyperV = classes[*rc]
		if !hyperV && !isClass(ctx, c, *rc) {
			out = append(out, Finding{Workload: w,
				Problem: fmt.Sprintf("runtimeClassName %s names no RuntimeClass: no Pod of it is admitted", *rc),
				Fix:     "create the RuntimeClass (Hyper-V isolation: handler " + hyperVHandler + ") or drop runtimeClassName"})
		}
	}
	secrets, err := pullSecrets(ctx, c, w)
	if err != nil {
		return nil, err
	}
	containers := append(slices.Clone(spec.InitContainers), spec.Containers...)
	for _, ctr := range containers {
		img, err := reg.Read(ctx, ctr.Image, secrets)
		f := Finding{Workload: w, Container: ctr.Name, Image: ctr.Image, Builds: img.Windows}
		if err != nil {
			f.Unchecked = true
			f.Problem = "could not read the image: " + err.Error()
			f.Fix = "check the image reference and the credentials (the template's imagePullSecrets, its ServiceAccount's, your docker config) and, for a registry with a private CA, --registry-ca"
			out = append(out, f)
			continue
		}
		if f.Problem, f.Fix = judge(img, target, hyperV, sortedKeys(classes)); f.Problem != "" {
			out = append(out, f)
		}
	}
	return out, nil
}

// judge decides whether an image runs on the target build: process isolation needs an image of
// the node's build; Hyper-V isolation runs the node's build and older ones.
func judge(img Image, target Build, hyperV bool, classes []string) (problem, fix string) {
	if len(img.Windows) == 0 {
		return fmt.Sprintf("no Windows image in it (it holds %s)", strings.Join(img.Others, ", ")),
			"use an image built for Windows: this container runs on no Windows node"
	}
	older, newer := false, false
	for _, v := range img.Windows {
		b, ok := buildOf(v)
		switch {
		case !ok:
			continue
		case b.Number == target.Number:
			return "", ""
		case b.Number < target.Number:
			older = true
		default:
			newer = true
		}
	}
	if hyperV && older {
		return "", "" // Hyper-V isolation runs an older image on a newer host
	}
	publish := fmt.Sprintf("publish an image for %s, best an image index with both builds (containerd pulls the one of its node's build, so the Pods run on the old and the new nodes during the rollout)", target)
	switch {
	case hyperV:
		return fmt.Sprintf("no image for %s, only for a newer build: Hyper-V isolation runs only images of the node's build or older", target), publish
	case older && len(classes) > 0:
		return fmt.Sprintf("no image for %s and process isolation, which needs the node's build", target),
			publish + fmt.Sprintf("; or, until then, run it with Hyper-V isolation: runtimeClassName: %s (nodes with hyperVIsolation: true, docs/upgrades.md)", classes[0])
	case older:
		return fmt.Sprintf("no image for %s and process isolation, which needs the node's build", target),
			publish + "; or, until then, run it with Hyper-V isolation: a RuntimeClass with handler " + hyperVHandler + " (the flavors ship windows-hyperv) and nodes with hyperVIsolation: true (docs/upgrades.md)"
	case newer:
		return fmt.Sprintf("no image for %s, only for a newer build: no isolation runs a newer image on an older node", target), publish
	}
	return fmt.Sprintf("no image for %s: its Windows images carry no os.version", target), publish
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
