package sharding

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/capwin/capwin/test/framework/harness"
)

// process is a running infrastructure manager.
type process struct {
	shard   string
	metrics string // address of its /metrics
	cmd     *exec.Cmd
	log     string
}

// startManager starts the manager of a shard as production runs it (leader election on, one
// Deployment per watch-filter value), with short polls. Its log is printed if the test fails.
func startManager(t *testing.T, bin, kubeconfig string, h *harness.Harness, shard string) *process {
	t.Helper()
	p := &process{shard: shard, metrics: freeAddr(t), log: filepath.Join(t.TempDir(), "manager-"+shard+".log")}
	logFile, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	webhooks := h.Management.Env.WebhookInstallOptions
	_, webhookPort, _ := net.SplitHostPort(freeAddr(t))
	p.cmd = exec.Command(bin,
		"--watch-filter="+shard,
		"--leader-elect", "--leader-elect-namespace="+leaseNamespace,
		"--health-addr=0", "--diagnostics-address="+p.metrics, "--insecure-diagnostics",
		"--webhook-port="+webhookPort, "--webhook-cert-dir="+webhooks.LocalServingCertDir,
		"--identity-namespace="+leaseNamespace,
		"--guest-poll-interval=1s", "--task-poll-interval=200ms", "--vcenter-max-tasks=4",
	)
	p.cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.stop()
		_ = logFile.Close()
		if t.Failed() {
			b, _ := os.ReadFile(p.log)
			t.Logf("manager %s log (last 8 KiB):\n%s", shard, tail(b, 8<<10))
		}
	})
	return p
}

// stop ends the process as a Pod's termination does (SIGTERM), and kills it after 20s.
func (p *process) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

// metric sums the samples of a metric on the manager's /metrics.
func (p *process) metric(name string) (float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.metrics+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = res.Body.Close() }()
	sum, seen := 0.0, false
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			return 0, fmt.Errorf("%q: %w", line, err)
		}
		sum, seen = sum+v, true
	}
	if !seen {
		return 0, fmt.Errorf("manager %s exports no %s", p.shard, name)
	}
	return sum, sc.Err()
}

// freeAddr is a local address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

func tail(b []byte, n int) []byte {
	return b[max(0, len(b)-n):]
}
