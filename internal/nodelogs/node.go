package nodelogs

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"

	"k8s.io/client-go/kubernetes"
)

// windowsFolders are the folders of C:\var\log (the kubelet's node log directory) gathered from a
// Windows node: capwin's bootstrap log, the kubelet's (kube-log-runner, rotated files too),
// containerd's, and those of the kube-proxy and CNI addons when they write any.
var windowsFolders = []string{"capwin", "kubelet", "containerd", "kube-proxy", "calico", "flannel"}

// addonNamespaces are the namespaces whose pod logs (C:\var\log\pods\<namespace>_<pod>_<uid>) are
// gathered: kube-proxy and the CNI run there as HostProcess pods.
var addonNamespaces = []string{"kube-system", "calico-system", "tigera-operator", "kube-flannel"}

// linuxServices are read from a Linux node by Node Log Query (the journal).
var linuxServices = []string{"kubelet", "containerd"}

// nodeLogs reads a node's logs through the apiserver's node proxy (Node Log Query and the
// kubelet's /logs/ file server).
type nodeLogs struct {
	cs   kubernetes.Interface
	node string
	max  int64
}

// get is GET /api/v1/nodes/<node>/proxy/logs/<rel>?<params>; a trailing slash lists a folder
// ("" is the log directory itself). Only the last max bytes are kept.
func (n nodeLogs) get(ctx context.Context, rel string, params ...string) ([]byte, error) {
	if rel == "" {
		rel = "/" // the kubelet serves /logs/, not /logs
	}
	req := n.cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", n.node, "proxy", "logs").Suffix(rel)
	for i := 0; i+1 < len(params); i += 2 {
		req = req.Param(params[i], params[i+1])
	}
	body, err := req.Stream(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = body.Close() }()
	tail := &tailBuffer{max: n.max}
	if _, err := io.Copy(tail, body); err != nil {
		return nil, err
	}
	return tail.bytes(), nil
}

// hrefs are the entries of a folder listing of Go's file server (the kubelet's /logs/).
var hrefs = regexp.MustCompile(`<a href="([^"]+)">`)

// entries lists a folder of C:\var\log ("" for itself): its files and sub-folders, by name.
func (n nodeLogs) entries(ctx context.Context, folder string) (files, folders []string, err error) {
	page, err := n.get(ctx, folder+"/")
	if err != nil {
		return nil, nil, err
	}
	for _, m := range hrefs.FindAllSubmatch(page, -1) {
		name, err := url.PathUnescape(string(m[1]))
		if err != nil || strings.Contains(name, "..") || strings.HasPrefix(name, "/") {
			continue
		}
		if dir, ok := strings.CutSuffix(name, "/"); ok {
			folders = append(folders, dir)
		} else {
			files = append(files, name)
		}
	}
	return files, folders, nil
}

// walk returns the files below folder (slash-separated paths under C:\var\log), depth levels of
// sub-folders deep.
func (n nodeLogs) walk(ctx context.Context, folder string, depth int) ([]string, error) {
	files, folders, err := n.entries(ctx, folder)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(files))
	for _, f := range files {
		out = append(out, path.Join(folder, f))
	}
	for _, d := range folders {
		if depth == 0 {
			break
		}
		below, err := n.walk(ctx, path.Join(folder, d), depth-1)
		if err != nil {
			return nil, err
		}
		out = append(out, below...)
	}
	return out, nil
}

// gather adds the node's logs to the archive under prefix and notes what it could not read; it
// is false when Node Log Query does not answer at all.
func (n nodeLogs) gather(ctx context.Context, a *archive, prefix string, windows bool, notes *[]string) bool {
	if !windows {
		for _, s := range linuxServices {
			n.add(ctx, a, prefix+s+".log", notes, "", "query", s)
		}
		return true
	}
	_, folders, err := n.entries(ctx, "")
	if err != nil {
		*notes = append(*notes, fmt.Sprintf("Node Log Query: %v (the kubelet is not reachable through the apiserver, or its log handler is off)", err))
		return false
	}
	var files []string
	for _, folder := range folders {
		switch {
		case slices.Contains(windowsFolders, folder):
			found, err := n.walk(ctx, folder, 1)
			if err != nil {
				*notes = append(*notes, fmt.Sprintf("%s: %v", folder, err))
			}
			files = append(files, found...)
		case folder == "pods":
			files = append(files, n.addonPods(ctx, notes)...)
		}
	}
	for _, f := range files {
		n.add(ctx, a, prefix+f, notes, f)
	}
	return true
}

// addonPods are the log files of the addons' pods (C:\var\log\pods\<namespace>_<pod>_<uid>).
func (n nodeLogs) addonPods(ctx context.Context, notes *[]string) []string {
	_, pods, err := n.entries(ctx, "pods")
	if err != nil {
		*notes = append(*notes, fmt.Sprintf("pods: %v", err))
		return nil
	}
	var out []string
	for _, pod := range pods {
		if ns, _, _ := strings.Cut(pod, "_"); !slices.Contains(addonNamespaces, ns) {
			continue
		}
		files, err := n.walk(ctx, "pods/"+pod, 1)
		if err != nil {
			*notes = append(*notes, fmt.Sprintf("pods/%s: %v", pod, err))
		}
		out = append(out, files...)
	}
	return out
}

// add fetches one file (rel) or query into the archive at name.
func (n nodeLogs) add(ctx context.Context, a *archive, name string, notes *[]string, rel string, params ...string) {
	data, err := n.get(ctx, rel, params...)
	if err != nil {
		*notes = append(*notes, fmt.Sprintf("%s: %v", name, err))
		return
	}
	if err := a.file(name, data); err != nil {
		*notes = append(*notes, fmt.Sprintf("%s: %v", name, err))
	}
}

// tailBuffer keeps the last max bytes written to it (max <= 0: everything).
type tailBuffer struct {
	max  int64
	data []byte
	cut  bool
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.data = append(t.data, p...)
	if t.max > 0 && int64(len(t.data)) > 2*t.max {
		t.data = append(t.data[:0], t.data[int64(len(t.data))-t.max:]...)
		t.cut = true
	}
	return len(p), nil
}

func (t *tailBuffer) bytes() []byte {
	if t.max > 0 && int64(len(t.data)) > t.max {
		t.data, t.cut = t.data[int64(len(t.data))-t.max:], true
	}
	if t.cut {
		return append([]byte(fmt.Sprintf("[capwin: only the last %d bytes are kept]\n", t.max)), t.data...)
	}
	return t.data
}
