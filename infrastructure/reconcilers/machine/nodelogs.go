package machine

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

// +kubebuilder:rbac:groups="",resources=secrets,verbs=create;update

// maxNodeLogs is the largest archive written to a node logs Secret (the API server takes 1.5 MiB
// per object; the collector aims at guest.CollectMaxArchiveBytes).
const maxNodeLogs = 1 << 20

// collectLogs answers a request for the node's logs (infrav1.CollectLogsAnnotation) of a machine
// whose VM runs: it runs the log collector in the guest through the hypervisor's guest channel and
// writes the zip, or why there is none, to the machine's node logs Secret, once per request id.
// It never stops the machine's lifecycle: the wait it returns (0 = none) is for a collector that
// still runs.
func (r *Reconciler) collectLogs(ctx context.Context, s *hypervisor.Scope, b hypervisor.Backend, vm *hypervisor.VM) time.Duration {
	obj := s.InfraMachine
	id, asked := obj.GetAnnotations()[infrav1.CollectLogsAnnotation]
	if !asked {
		return 0
	}
	log := ctrl.LoggerFrom(ctx).WithValues("logRequest", id)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: obj.GetNamespace(), Name: infrav1.NodeLogsSecretName(obj.GetName())}}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(secret), secret)
	switch {
	case err == nil && secret.Type != infrav1.NodeLogsSecretType:
		r.Recorder.Eventf(obj, nil, "Warning", "NodeLogsNotCollected", "CollectLogs",
			"Secret %s exists and is not of type %s: it is left alone and no logs are collected", secret.Name, infrav1.NodeLogsSecretType)
		return 0
	case err == nil && secret.Annotations[infrav1.CollectLogsAnnotation] == id:
		return 0 // answered
	case err != nil && !apierrors.IsNotFound(err):
		log.Error(err, "read the node logs Secret")
		return r.TaskPollInterval
	}
	zip, message, done := r.runCollector(ctx, s, b, vm, id)
	if !done {
		return r.TaskPollInterval
	}
	if err := r.writeNodeLogs(ctx, s, secret, id, zip, message); err != nil {
		log.Error(err, "write the node logs Secret")
		return r.TaskPollInterval
	}
	if zip == nil {
		r.Recorder.Eventf(obj, nil, "Warning", "NodeLogsNotCollected", "CollectLogs", "Request %s: %s", id, message)
	} else {
		r.Recorder.Eventf(obj, nil, "Normal", "NodeLogsCollected", "CollectLogs", "Request %s: %s", id, message)
	}
	return 0
}

// runCollector runs the collector; done is false while it runs. Without a zip, message says why.
func (r *Reconciler) runCollector(ctx context.Context, s *hypervisor.Scope, b hypervisor.Backend, vm *hypervisor.VM, id string) ([]byte, string, bool) {
	obj := s.InfraMachine
	if !infrav1.ValidCollectLogsID(id) {
		return nil, fmt.Sprintf("request id %q is not 1 to 40 lower-case letters, digits and inner hyphens", id), true
	}
	if s.Linux() {
		return nil, "the machine is a Linux machine: its logs are not collected through the guest channel", true
	}
	if !vm.ToolsRunning {
		return nil, "the guest agent (VMware Tools / Hyper-V integration services) does not run in the VM", true
	}
	source, name := "spec.guestCredentialsRef", ""
	if n := obj.GetAnnotations()[infrav1.CollectLogsCredentialsAnnotation]; n != "" {
		source, name = "Secret "+n+" (annotation "+infrav1.CollectLogsCredentialsAnnotation+")", n
	} else if s.Spec.GuestCredentialsRef != nil {
		name = s.Spec.GuestCredentialsRef.Name
	}
	if name == "" {
		return nil, "no guest login: the machine has no spec.guestCredentialsRef; name a Secret with the keys username and password " +
			"of a guest administrator in the annotation " + infrav1.CollectLogsCredentialsAnnotation + " (render logs --guest-credentials)", true
	}
	creds, err := r.readGuestCredentials(ctx, obj.GetNamespace(), name)
	if err != nil {
		return nil, err.Error(), true
	}
	creds.Source = source
	guestScope := *s
	guestScope.GuestCredentials = creds
	zip, done, err := b.CollectLogs(ctx, &guestScope, vm, id)
	switch {
	case err != nil:
		return nil, err.Error(), true
	case !done:
		return nil, "", false
	case len(zip) > maxNodeLogs:
		// The guest made the zip: one too large for a Secret is answered, not written again and
		// again (a failed write would run the collector once more at every reconcile).
		return nil, fmt.Sprintf("the guest's archive has %d bytes, more than the %d a node logs Secret holds", len(zip), maxNodeLogs), true
	}
	return zip, fmt.Sprintf("collected %d bytes from the guest of VM %s", len(zip), vm.Ref.ID), true
}

// writeNodeLogs creates or replaces the node logs Secret, owned by the machine (it goes with it).
func (r *Reconciler) writeNodeLogs(ctx context.Context, s *hypervisor.Scope, secret *corev1.Secret, id string, zip []byte, message string) error {
	obj := s.InfraMachine
	fresh := secret.ResourceVersion == ""
	secret.Type = infrav1.NodeLogsSecretType
	secret.Labels = map[string]string{clusterv1.ClusterNameLabel: s.Cluster.Name}
	secret.Annotations = map[string]string{infrav1.CollectLogsAnnotation: id}
	secret.Data = map[string][]byte{infrav1.NodeLogsMessageKey: []byte(message)}
	if zip != nil {
		secret.Data[infrav1.NodeLogsArchiveKey] = zip
	}
	if err := controllerutil.SetOwnerReference(obj, secret, r.Client.Scheme()); err != nil {
		return err
	}
	if fresh {
		return r.Client.Create(ctx, secret)
	}
	return r.Client.Update(ctx, secret)
}
