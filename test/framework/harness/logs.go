package harness

import (
	"bytes"
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capwin/capwin/internal/diagnostics"
	"github.com/capwin/capwin/internal/nodelogs"
	"github.com/capwin/capwin/test/framework/secretscan"
)

// GatherLogs is render logs of a Machine, MachineDeployment or Cluster (nodelogs.Kind) of the
// harness's namespace, with the images' guest login for the machines Node Log Query cannot read
// (--guest-credentials): the archive, what it holds, and its files by name. The archive is
// scanned for every credential of the run: an archive an operator hands on must hold none.
func (h *Harness) GatherLogs(ctx context.Context, kind, name string) ([]byte, *nodelogs.Result, map[string]string, error) {
	// render logs reads the management cluster directly, as a workstation does (no informers).
	c, err := client.New(h.Management.Env.Config, client.Options{Scheme: diagnostics.Scheme()})
	if err != nil {
		return nil, nil, nil, err
	}
	var buf bytes.Buffer
	res, err := nodelogs.Gather(ctx, c, nodelogs.Target{Kind: kind, Namespace: Namespace, Name: name}, nodelogs.Options{GuestCredentials: GuestCredentials, GuestTimeout: 2 * time.Minute, GuestPoll: 250 * time.Millisecond}, &buf)
	if err != nil {
		return nil, nil, nil, err
	}
	files, err := nodelogs.ReadArchive(bytes.NewReader(buf.Bytes()))
	if err != nil {
		return nil, nil, nil, err
	}
	var hits []secretscan.Hit
	for name, text := range files {
		hits = append(hits, h.Secrets.Text("logs archive "+name, text)...)
	}
	return buf.Bytes(), res, files, secretscan.Verdict(hits)
}
