package hypervsim

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
)

var csvFolders = wire.Placement{VMPath: `C:\ClusterStorage\Volume1\capwin\vms`, DiskPath: `C:\ClusterStorage\Volume1\capwin\disks`, Cluster: "hvclu1"}

// simCluster starts two hosts as the nodes of failover cluster HVCLU1 (the parent disk on its CSV)
// and real WinRM connections to both.
func simCluster(t *testing.T) (*Cluster, []*Host, []*hyperv.Conn) {
	t.Helper()
	var hosts []*Host
	for _, name := range []string{"node1", "node2"} {
		hosts = append(hosts, NewHost(name, 65536, []string{"external"}, nil))
	}
	c := NewCluster("HVCLU1", hosts...)
	hosts[0].AddVHD(`C:\ClusterStorage\Volume1\golden\win2022.vhdx`, VHD{Type: "Dynamic", SizeBytes: 30 << 30})
	var conns []*hyperv.Conn
	for _, h := range hosts {
		srv, err := h.Serve(map[string]string{"capwin": "Host-pw1"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Close)
		conn, err := hyperv.Dial(hyperv.HostConfig{Name: h.Name, Address: srv.Host, Port: srv.Port, Username: "capwin", Password: "Host-pw1",
			CABundle: srv.CACertPEM()}, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, conn)
	}
	return c, hosts, conns
}

func clusteredInput(uid, class string) wire.CreateInput {
	in := createInput(uid, []byte("iso"))
	in.Placement, in.ParentDisk, in.AntiAffinityClass = csvFolders, `C:\ClusterStorage\Volume1\golden\win2022.vhdx`, class
	return in
}

// TestFailoverClusterThroughWinRM: on a node of a two-node cluster, create puts the VM's files on
// the CSV (seen from both nodes) and registers its role with the class name, once across runs;
// locate on either node names the owner, which follows a move and a node failure; remove on the
// new owner unregisters the role and leaves no file on the CSV.
func TestFailoverClusterThroughWinRM(t *testing.T) {
	c, hosts, conns := simCluster(t)
	ctx := context.Background()
	var info wire.HostInfo
	if err := conns[1].Run(ctx, wire.OpHost, csvFolders, &info); err != nil || info.Cluster != "HVCLU1" {
		t.Fatalf("host: %v, cluster %q", err, info.Cluster)
	}
	var v wire.View
	for range 2 {
		if err := conns[0].Run(ctx, wire.OpCreate, clusteredInput("u1", "capwin-ns-win-md-md-0-abc"), &v); err != nil {
			t.Fatal(err)
		}
	}
	groups := c.Groups()
	if len(groups) != 1 || groups[0].Name != "u1" || groups[0].VMID != v.ID || groups[0].Owner != "node1" ||
		strings.Join(groups[0].AntiAffinityClassNames, ",") != "capwin-ns-win-md-md-0-abc" {
		t.Fatalf("groups %+v", groups)
	}
	if files := hosts[1].Files(); len(files) != 3 || !strings.HasPrefix(files[1], `c:\clusterstorage\volume1\capwin\`) {
		t.Fatalf("node2 sees %v; want the parent, the VM's disk and its config drive on the CSV", files)
	}
	locate := func(conn *hyperv.Conn) wire.Located {
		t.Helper()
		var at wire.Located
		if err := conn.Run(ctx, wire.OpLocate, wire.VMKey{Placement: csvFolders, UID: "u1"}, &at); err != nil {
			t.Fatal(err)
		}
		return at
	}
	if at := locate(conns[1]); !at.Found || at.Node != "node1" || at.State != "Offline" {
		t.Fatalf("locate before the move: %+v", at)
	}
	if err := c.Move("u1", "node2"); err != nil {
		t.Fatal(err)
	}
	if at := locate(conns[0]); at.Node != "node2" || len(hosts[0].VMs()) != 0 || len(hosts[1].VMs()) != 1 {
		t.Fatalf("after the move: %+v, node1 %d VMs, node2 %d", at, len(hosts[0].VMs()), len(hosts[1].VMs()))
	}
	if moved := c.Fail("node2"); moved["u1"] != "node1" {
		t.Fatalf("failover moved %v", moved)
	}
	if err := conns[1].Run(ctx, wire.OpLocate, wire.VMKey{Placement: csvFolders, UID: "u1"}, &wire.Located{}); err == nil {
		t.Fatal("a failed node answered")
	}
	c.Recover("node2")
	if err := conns[0].Run(ctx, wire.OpRemove, wire.VMKey{Placement: csvFolders, ID: v.ID, UID: "u1"}, nil); err != nil {
		t.Fatal(err)
	}
	if len(c.Groups()) != 0 || len(hosts[0].VMs()) != 0 || len(c.Files()) != 1 {
		t.Fatalf("after remove: groups %+v, VMs %d, CSV files %v", c.Groups(), len(hosts[0].VMs()), c.Files())
	}
	if at := locate(conns[1]); at.Found {
		t.Fatalf("locate after remove: %+v", at)
	}
}

// TestFailoverClusterChecks: a host that is no node of the named cluster fails as InvalidSpec, and
// so does Hard anti-affinity on a cluster that does not enforce it; a remove cut after the role
// was unregistered leaves the VM for the next run, which removes it.
func TestFailoverClusterChecks(t *testing.T) {
	c, hosts, conns := simCluster(t)
	ctx := context.Background()
	other := csvFolders
	other.Cluster = "HVCLU9"
	err := conns[0].Run(ctx, wire.OpHost, other, &wire.HostInfo{})
	if hyperv.KindOf(err) != wire.KindInvalidSpec || !strings.Contains(err.Error(), "not a node of failover cluster HVCLU9") {
		t.Fatalf("host of another cluster: %v", err)
	}
	in := clusteredInput("u2", "class")
	in.EnforceAntiAffinity = true
	if err := conns[0].Run(ctx, wire.OpCreate, in, &wire.View{}); hyperv.KindOf(err) != wire.KindInvalidSpec {
		t.Fatalf("hard without enforcement: %v", err)
	}
	c.EnforceAntiAffinity(true)
	var v wire.View
	if err := conns[0].Run(ctx, wire.OpCreate, in, &v); err != nil || len(c.Groups()) != 1 {
		t.Fatalf("hard with enforcement: %v, groups %+v", err, c.Groups())
	}
	hosts[0].CutRemoves(1)
	key := wire.VMKey{Placement: csvFolders, ID: v.ID, UID: "u2"}
	if err := conns[0].Run(ctx, wire.OpRemove, key, nil); err == nil || errors.Is(err, context.Canceled) {
		t.Fatalf("cut remove: %v", err)
	}
	if len(c.Groups()) != 0 || len(hosts[0].VMs()) != 1 {
		t.Fatalf("after the cut: groups %+v, %d VMs", c.Groups(), len(hosts[0].VMs()))
	}
	if err := conns[0].Run(ctx, wire.OpRemove, key, nil); err != nil || len(hosts[0].VMs()) != 0 || len(c.Files()) != 1 {
		t.Fatalf("second remove: %v, %d VMs, CSV %v", err, len(hosts[0].VMs()), c.Files())
	}
}
