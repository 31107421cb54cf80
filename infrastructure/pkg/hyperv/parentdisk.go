package hyperv

import (
	"context"
	"fmt"
	"strings"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

// parentDisk returns the path of the machine's parent disk on host: spec.parentDisk, or the
// verified copy of spec.parentDiskSource. While the host copies it, the error is a
// *hypervisor.CreatePending (nothing was created; the reconciler looks again after its poll
// interval); a copy whose hash differs is an InvalidSpec error.
func (b *backend) parentDisk(ctx context.Context, c *Conn, host string) (string, error) {
	src := b.m.Spec.ParentDiskSource
	if src == nil {
		return b.m.Spec.ParentDisk, nil
	}
	var st wire.ParentState
	if err := c.Run(ctx, wire.OpParent, wire.ParentInput{DiskPath: b.folders.DiskPath, URL: src.URL, SHA256: strings.ToLower(src.SHA256)}, &st); err != nil {
		return "", err
	}
	return parentPath(st, host, b.folders.DiskPath, src)
}

// parentPath reads parent.ps1's answer: the path of a ready copy, which must be the cache path of
// the source's hash, or the error that says why there is none yet.
func parentPath(st wire.ParentState, host, diskPath string, src *infrav1.HyperVParentDiskSource) (string, error) {
	want := wire.ParentCachePath(diskPath, src.SHA256)
	switch st.State {
	case wire.ParentReady:
		if !strings.EqualFold(st.Path, want) {
			return "", fmt.Errorf("copy parent disk %s to host %s: the host reports %q, want %s", src.URL, host, st.Path, want)
		}
		return want, nil
	case wire.ParentCopying:
		return "", &hypervisor.CreatePending{Err: fmt.Errorf("host %s is copying the parent disk %s to %s; the VM is created once the copy is verified", host, src.URL, want)}
	case wire.ParentFailed:
		if st.Kind == wire.KindInvalidSpec {
			return "", hypervisor.Errorf(infrav1.InvalidSpecReason, "parent disk on host %s: %s", host, st.Message)
		}
		return "", fmt.Errorf("copy parent disk %s to host %s (tried again on the next create): %s", src.URL, host, st.Message)
	}
	return "", fmt.Errorf("copy parent disk %s to host %s: unknown state %q", src.URL, host, st.State)
}
