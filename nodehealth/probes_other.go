//go:build !windows

package main

import (
	"context"
	"errors"

	"github.com/capwin/capwin/nodehealth/health"
)

// notWindows answers every probe with an error: the checker reads Windows nodes only.
type notWindows struct{}

var errNotWindows = errors.New("capwin-node-health runs on Windows nodes only")

func (notWindows) Networks(context.Context) ([]health.Network, error) { return nil, errNotWindows }
func (notWindows) Runtime(context.Context) error                      { return errNotWindows }
func (notWindows) Kubelet(context.Context) error                      { return errNotWindows }
func (notWindows) Disk(context.Context) (uint64, uint64, error)       { return 0, 0, errNotWindows }

func probes() health.Probes { return notWindows{} }
