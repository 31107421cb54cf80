package vcsim

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/url"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// PutFile writes a file in a VM's guest, as a program running there would.
func (g *GuestOps) PutFile(vm, path string, data []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.guest(vm).Files[path] = append([]byte(nil), data...)
}

// Exit ends a program started in a VM's guest with an exit code (Tools then lists its end).
func (g *GuestOps) Exit(vm string, pid int64, code int32) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, p := range g.guest(vm).Processes {
		if p.Pid == pid {
			end := time.Now()
			g.guests[vm].Processes[i].Ended, g.guests[vm].Processes[i].ExitCode = &end, code
		}
	}
}

// newTransfer registers a one-time transfer URL of a guest file.
func (g *GuestOps) newTransfer(t transfer) string {
	token := make([]byte, 16)
	_, _ = rand.Read(token)
	id := hex.EncodeToString(token)
	g.mu.Lock()
	g.pending[id] = t
	g.mu.Unlock()
	// Host "*" means "the host you connected to" (govmomi's guest.FileManager.TransferURL).
	u := url.URL{Scheme: "https", Host: "*", Path: transferPath + id}
	return u.String()
}

// serveDownload answers the GET of a transfer out of a guest.
func (g *GuestOps) serveDownload(w http.ResponseWriter, t transfer) {
	g.mu.Lock()
	data, ok := g.guest(t.vm).Files[t.path]
	g.mu.Unlock()
	if !ok {
		http.Error(w, "no such file", http.StatusNotFound)
		return
	}
	_, _ = w.Write(data)
}

func (m *fileManager) InitiateFileTransferFromGuest(ctx *simulator.Context, req *types.InitiateFileTransferFromGuest) soap.HasFault {
	body := new(methods.InitiateFileTransferFromGuestBody)
	if f := m.ops.check(ctx, req.Vm, req.Auth); f != nil {
		body.Fault_ = simulator.Fault("", f)
		return body
	}
	m.ops.mu.Lock()
	data, ok := m.ops.guest(req.Vm.Value).Files[req.GuestFilePath]
	m.ops.mu.Unlock()
	if !ok {
		body.Fault_ = simulator.Fault("", &types.FileNotFound{FileFault: types.FileFault{File: req.GuestFilePath}})
		return body
	}
	u := m.ops.newTransfer(transfer{vm: req.Vm.Value, path: req.GuestFilePath, size: int64(len(data)), out: true})
	body.Res = &types.InitiateFileTransferFromGuestResponse{Returnval: types.FileTransferInformation{
		Attributes: &types.GuestFileAttributes{}, Size: int64(len(data)), Url: u}}
	return body
}

func (m *fileManager) DeleteFileInGuest(ctx *simulator.Context, req *types.DeleteFileInGuest) soap.HasFault {
	body := new(methods.DeleteFileInGuestBody)
	if f := m.ops.check(ctx, req.Vm, req.Auth); f != nil {
		body.Fault_ = simulator.Fault("", f)
		return body
	}
	m.ops.mu.Lock()
	files := m.ops.guest(req.Vm.Value).Files
	_, ok := files[req.FilePath]
	delete(files, req.FilePath)
	m.ops.mu.Unlock()
	if !ok {
		body.Fault_ = simulator.Fault("", &types.FileNotFound{FileFault: types.FileFault{File: req.FilePath}})
		return body
	}
	body.Res = new(types.DeleteFileInGuestResponse)
	return body
}
