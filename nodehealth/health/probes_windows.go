package health

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"

	"github.com/Microsoft/go-winio"
	"golang.org/x/sys/windows"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// NodeProbes read a Windows node: HNS through Get-HnsNetwork (module HostNetworkingService),
// containerd through its CRI named pipe, the kubelet through its local health endpoint, and the
// system disk through GetDiskFreeSpaceEx.
type NodeProbes struct {
	// Pipe is containerd's CRI endpoint (default \\.\pipe\containerd-containerd).
	Pipe string
	// Healthz is the kubelet's health URL (default http://127.0.0.1:10248/healthz).
	Healthz string
	// Root is the system disk's root (default C:\).
	Root string
}

func (p NodeProbes) Networks(ctx context.Context) ([]Network, error) {
	cmd := exec.CommandContext(ctx, "powershell.exe", "-NoProfile", "-NonInteractive", "-Command",
		"ConvertTo-Json -Compress -InputObject @(Get-HnsNetwork | Select-Object -Property Name, Type)")
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("Get-HnsNetwork: %w", err)
	}
	var nets []Network
	if err := json.Unmarshal(out, &nets); err != nil {
		return nil, fmt.Errorf("Get-HnsNetwork: %w", err)
	}
	return nets, nil
}

func (p NodeProbes) Runtime(ctx context.Context) error {
	pipe := p.Pipe
	if pipe == "" {
		pipe = `\\.\pipe\containerd-containerd`
	}
	conn, err := grpc.NewClient("passthrough:///containerd", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return winio.DialPipeContext(ctx, pipe) }))
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	_, err = runtimeapi.NewRuntimeServiceClient(conn).Version(ctx, &runtimeapi.VersionRequest{})
	return err
}

func (p NodeProbes) Kubelet(ctx context.Context) error {
	url := p.Healthz
	if url == "" {
		url = "http://127.0.0.1:10248/healthz"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = res.Body.Close() }()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 512))
	if res.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "ok" {
		return fmt.Errorf("%s answered %s: %s", url, res.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

func (p NodeProbes) Disk(context.Context) (uint64, uint64, error) {
	root := p.Root
	if root == "" {
		root = `C:\`
	}
	path, err := windows.UTF16PtrFromString(root)
	if err != nil {
		return 0, 0, err
	}
	var free, total, totalFree uint64
	if err := windows.GetDiskFreeSpaceEx(path, &free, &total, &totalFree); err != nil {
		return 0, 0, err
	}
	return free, total, nil
}
