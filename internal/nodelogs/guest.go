package nodelogs

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/internal/diagnostics"
)

// When the node's logs are collected through the hypervisor's guest channel (Options.Guest).
const (
	// GuestAuto: for Machines without a Node, and those whose Node Log Query failed.
	GuestAuto = "auto"
	// GuestAlways: for every Machine (adds the event logs and HNS state of joined nodes).
	GuestAlways = "always"
	// GuestNever: never.
	GuestNever = "never"
)

// maxGuestBytes bounds what one guest zip may unpack to in the archive (a zip bomb stops there).
const maxGuestBytes = 64 << 20

// guestRequest is a request for a machine's logs sent to its infrastructure manager
// (infrav1.CollectLogsAnnotation on its VCenterMachine or HyperVMachine).
type guestRequest struct {
	machine int // index in Result.Machines
	infra   *unstructured.Unstructured
	id      string
}

// requestID is a new log request id (infrav1.ValidCollectLogsID).
func requestID(now time.Time) string { return "r" + strconv.FormatInt(now.UnixNano(), 36) }

// requestGuest asks the machine's infrastructure manager to collect its node's logs; nil when the
// Machine's infrastructure is not a capwin machine (a note says so).
func requestGuest(ctx context.Context, c client.Client, story *diagnostics.Story, id, credentials string, m *MachineResult) *guestRequest {
	if story.Infra == nil {
		m.Notes = append(m.Notes, fmt.Sprintf("no guest logs: %s %s is not a capwin machine", story.InfraKind, story.InfraName))
		return nil
	}
	infra := &unstructured.Unstructured{}
	infra.SetGroupVersionKind(infrav1.GroupVersion.WithKind(story.InfraKind))
	infra.SetNamespace(story.Machine.Namespace)
	infra.SetName(story.InfraName)
	annotations := map[string]any{infrav1.CollectLogsAnnotation: id, infrav1.CollectLogsCredentialsAnnotation: nil}
	if credentials != "" {
		annotations[infrav1.CollectLogsCredentialsAnnotation] = credentials
	}
	if err := patchAnnotations(ctx, c, infra, annotations); err != nil {
		m.Notes = append(m.Notes, fmt.Sprintf("no guest logs: ask %s %s: %v", story.InfraKind, story.InfraName, err))
		return nil
	}
	return &guestRequest{infra: infra, id: id}
}

func patchAnnotations(ctx context.Context, c client.Client, obj client.Object, annotations map[string]any) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err != nil {
		return err
	}
	return c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch))
}

// wait reads the answer (the node logs Secret with the request's id) until the deadline, then
// withdraws the request. The zip is nil when there is none; message says what the manager did.
func (r *guestRequest) wait(ctx context.Context, c client.Client, deadline time.Time, poll time.Duration) ([]byte, string, error) {
	defer func() {
		// The request is answered or given up: withdraw it (a later render logs makes a new one).
		_ = patchAnnotations(context.WithoutCancel(ctx), c, r.infra,
			map[string]any{infrav1.CollectLogsAnnotation: nil, infrav1.CollectLogsCredentialsAnnotation: nil})
	}()
	key := client.ObjectKey{Namespace: r.infra.GetNamespace(), Name: infrav1.NodeLogsSecretName(r.infra.GetName())}
	for {
		secret := &corev1.Secret{}
		err := c.Get(ctx, key, secret)
		switch {
		case err == nil && secret.Annotations[infrav1.CollectLogsAnnotation] == r.id:
			return secret.Data[infrav1.NodeLogsArchiveKey], string(secret.Data[infrav1.NodeLogsMessageKey]), nil
		case err != nil && !apierrors.IsNotFound(err):
			return nil, "", fmt.Errorf("read Secret %s: %w", key.Name, err)
		}
		if time.Now().After(deadline) {
			return nil, "", fmt.Errorf("no answer from the infrastructure manager for %s %s by %s: the VM may be off "+
				"or the manager not running (see the machine's events)", r.infra.GetKind(), r.infra.GetName(), deadline.Format(time.RFC3339))
		}
		select {
		case <-ctx.Done():
			return nil, "", ctx.Err()
		case <-time.After(poll):
		}
	}
}

// addGuestZip unpacks the collector's zip into the archive under prefix; a name that would leave
// prefix is skipped, and each file keeps its last maxFile bytes.
func addGuestZip(a *archive, prefix string, data []byte, maxFile int64) error {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return fmt.Errorf("the guest's zip: %w", err)
	}
	var total int64
	for _, f := range zr.File {
		name := path.Clean(strings.ReplaceAll(f.Name, `\`, "/"))
		if f.FileInfo().IsDir() || name == "." || strings.HasPrefix(name, "/") || name == ".." || strings.HasPrefix(name, "../") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return fmt.Errorf("%s in the guest's zip: %w", f.Name, err)
		}
		tail := &tailBuffer{max: maxFile}
		n, err := io.Copy(tail, io.LimitReader(rc, maxGuestBytes-total+1))
		_ = rc.Close()
		if err != nil {
			return fmt.Errorf("%s in the guest's zip: %w", f.Name, err)
		}
		if total += n; total > maxGuestBytes {
			return fmt.Errorf("the guest's zip unpacks to more than %d bytes", maxGuestBytes)
		}
		if err := a.file(prefix+name, tail.bytes()); err != nil {
			return err
		}
	}
	return nil
}
