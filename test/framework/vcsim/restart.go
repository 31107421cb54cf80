package vcsim

import (
	"context"
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// Endpoint is vcsim's HTTPS endpoint that can be restarted as vCenter's vpxd service is: the
// address goes away for a while (connections refused, those open cut with their requests),
// then listens again with the same certificate and inventory, every session and task gone.
type Endpoint struct {
	model *simulator.Model
	first *simulator.Server

	mu     sync.Mutex
	live   *http.Server // the listener of the last restart (nil: first still serves)
	closed bool
}

// NewEndpoint takes over a server started by model.Service.NewServer.
func NewEndpoint(model *simulator.Model, srv *simulator.Server) *Endpoint {
	return &Endpoint{model: model, first: srv}
}

// Restart stops listening, cuts every connection, waits for down (or ctx), forgets the sessions
// and tasks and listens again on the same address.
func (e *Endpoint) Restart(ctx context.Context, down time.Duration) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return net.ErrClosed
	}
	e.stop()
	select {
	case <-ctx.Done():
	case <-time.After(down):
	}
	e.forget(context.WithoutCancel(ctx)) // what ran while it was away is forgotten too
	l, err := net.Listen("tcp", e.first.Listener.Addr().String())
	if err != nil {
		return err
	}
	e.live = &http.Server{Handler: e.first.Config.Handler, ErrorLog: log.New(io.Discard, "", 0), ReadHeaderTimeout: 30 * time.Second}
	go func(srv *http.Server) { _ = srv.Serve(tls.NewListener(l, e.first.TLS)) }(e.live)
	return nil
}

// Close stops the endpoint for good.
func (e *Endpoint) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.closed {
		e.stop()
		e.closed = true
	}
}

// stop closes the listener and every connection, busy or idle.
func (e *Endpoint) stop() {
	if e.live != nil {
		_ = e.live.Close()
		return
	}
	// The first server waits for its busy connections: cut them until it is closed. A handler
	// that goes on after its connection was cut (vcsim's WaitForUpdatesEx of a client that is
	// gone waits out its MaxWaitSeconds) is left to finish on its own after a while.
	closed := make(chan struct{})
	go func() { e.first.Close(); close(closed) }()
	giveUp := time.After(2 * time.Second)
	for {
		e.first.CloseClientConnections()
		select {
		case <-closed:
			return
		case <-giveUp:
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// forget ends every session and drops the tasks that ended: their references are unknown
// afterwards and no entity lists them as recent. A task still running goes on (vcsim's own
// tasks look their sub-tasks up by reference), as does one queued less than a second ago: a
// clone cut off by the restart may still finish, as its host's part of the work does.
func (e *Endpoint) forget(ctx context.Context) {
	m := e.model.Map()
	sctx := &simulator.Context{Context: ctx, Map: m,
		Session: &simulator.Session{UserSession: types.UserSession{Key: "vcsim-restart"}, Registry: simulator.NewRegistry(), Map: m}}
	if sm, ok := sctx.Session.Get(*e.model.ServiceContent.SessionManager).(*simulator.SessionManager); ok {
		var keys []string
		for _, s := range sm.SessionList {
			keys = append(keys, s.Key)
		}
		if len(keys) > 0 {
			m.SessionManager().TerminateSession(sctx, &types.TerminateSession{SessionId: keys})
		}
	}
	for _, obj := range m.AllReference("Task") {
		t, ok := obj.(*simulator.Task)
		if !ok {
			continue
		}
		var ended bool
		m.WithLock(sctx, t, func() {
			ended = (t.Info.State == types.TaskInfoStateSuccess || t.Info.State == types.TaskInfoStateError) &&
				time.Since(t.Info.QueueTime) > time.Second
		})
		if ended {
			m.Remove(sctx, t.Self)
		}
	}
	for _, obj := range m.All("") {
		m.WithLock(sctx, obj, func() { e.known(sctx, obj, obj.Entity().RecentTask) })
	}
	if tm, ok := m.Get(*e.model.ServiceContent.TaskManager).(*simulator.TaskManager); ok {
		tm.Lock()
		e.known(sctx, tm, tm.RecentTask)
		tm.Unlock()
	}
}

// known sets obj's recentTask to the tasks of recent that vcsim still knows.
func (e *Endpoint) known(ctx *simulator.Context, obj mo.Reference, recent []types.ManagedObjectReference) {
	kept := []types.ManagedObjectReference{}
	for _, ref := range recent {
		if e.model.Map().Get(ref) != nil {
			kept = append(kept, ref)
		}
	}
	if len(kept) < len(recent) {
		e.model.Map().Update(ctx, obj, []types.PropertyChange{{Name: "recentTask", Val: kept}})
	}
}
