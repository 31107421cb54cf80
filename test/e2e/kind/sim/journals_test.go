//go:build e2e

package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	guestmeta "github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
)

// guestLogs runs capwin's log collector in a VM's guest as the provider does (guestlogs.ps1 over
// WinRM, PowerShell Direct) and returns the zip's files by name.
func guestLogs(ctx context.Context, t *testing.T, conn *hyperv.Conn, m hvMachine) map[string]string {
	t.Helper()
	paths := guestmeta.PathsOfCollect("r1")
	script, err := guestmeta.NewCollect("r1").Script()
	if err != nil {
		t.Fatal(err)
	}
	in := wire.GuestLogsInput{ID: m.id, Username: "Administrator", Password: "Guest-pw1", Directory: guestmeta.GuestDir,
		ScriptPath: paths.Script, Script: base64.StdEncoding.EncodeToString(script),
		PowerShell: guestmeta.GuestPowerShell, Arguments: guestmeta.CollectArgs(paths.Script), Output: paths.Output,
		MaxBytes: guestmeta.CollectMaxArchiveBytes * 2}
	var out wire.GuestLogs
	if err := conn.Run(ctx, wire.OpGuestLogs, in, &out); err != nil {
		t.Fatalf("collect the logs of VM %s: %v", m.id, err)
	}
	data, err := base64.StdEncoding.DecodeString(out.Data)
	if err != nil {
		t.Fatal(err)
	}
	return unzipFiles(t, data)
}

// vcenterGuestLogs runs capwin's log collector in a VM's guest as vcsim does (-guest-agent): a
// POST of the script to the simulator's collectPath.
func vcenterGuestLogs(t *testing.T, s *sim, ref string) map[string]string {
	t.Helper()
	script, err := guestmeta.NewCollect("r1").Script()
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	s.journals.serveCollect(rec, httptest.NewRequest(http.MethodPost, collectPath+"?vm="+ref, bytes.NewReader(script)))
	if rec.Code != http.StatusOK {
		t.Fatalf("collect in VM %s: %d %s", ref, rec.Code, rec.Body)
	}
	return unzipFiles(t, rec.Body.Bytes())
}

func unzipFiles(t *testing.T, data []byte) map[string]string {
	t.Helper()
	z, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range z.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		_ = r.Close()
		if err != nil {
			t.Fatal(err)
		}
		files[f.Name] = string(b)
	}
	return files
}

// breakImage gives a Machine a broken image (BrokenImageAnnotation).
func breakImage(ctx context.Context, t *testing.T, mgmt client.Client, namespace, name string) {
	t.Helper()
	m := &clusterv1.Machine{}
	if err := mgmt.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, m); err != nil {
		t.Fatal(err)
	}
	m.Annotations = map[string]string{BrokenImageAnnotation: ""}
	if err := mgmt.Update(ctx, m); err != nil {
		t.Fatal(err)
	}
}
