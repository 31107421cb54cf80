package windowsconfig

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/cluster-api/util/secret"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	"github.com/capwin/capwin/internal/admit"
)

// waitRequeue is how often a config waiting on something that is not watched is looked at again.
const waitRequeue = 20 * time.Second

func (r *Reconciler) reconcileNormal(ctx context.Context, s *scope) (ctrl.Result, error) {
	cfg, m := s.Config, s.Machine
	created := ptr.Deref(cfg.Status.Initialization.DataSecretCreated, false)
	switch {
	case s.Rejected != nil && !created && m.Spec.Bootstrap.DataSecretName == nil:
		// Said at once, not after the waits below; generate refuses a re-render too.
		return r.refuse(s), nil
	case !ptr.Deref(s.Cluster.Status.Initialization.InfrastructureProvisioned, false):
		setDataSecretCondition(cfg, metav1.ConditionFalse, bootstrapv1.WaitingForClusterInfrastructureReason,
			"Waiting for the Cluster's infrastructure to be provisioned")
		return ctrl.Result{}, nil
	case m.Spec.Bootstrap.DataSecretName != nil && !created:
		// After clusterctl move or a restore the status is lost but the Machine still points at the Secret.
		cfg.Status.DataSecretName = *m.Spec.Bootstrap.DataSecretName
		cfg.Status.Initialization.DataSecretCreated = ptr.To(true)
		setDataSecretCondition(cfg, metav1.ConditionTrue, bootstrapv1.DataSecretAvailableReason, "")
		return ctrl.Result{}, nil
	case created:
		account := r.reconcileAccount(ctx, s)
		var res ctrl.Result
		var err error
		if m.Status.NodeRef.IsDefined() {
			setDataSecretCondition(cfg, metav1.ConditionTrue, bootstrapv1.DataSecretAvailableReason, "")
			res, err = r.revokeToken(ctx, s) // joined: the token has done its job
		} else {
			res, err = r.keepTokenFresh(ctx, s)
		}
		return sooner(res, account), err
	}
	return r.generate(ctx, s)
}

// generate gathers the join parameters, issues a bootstrap token and writes the data Secret.
func (r *Reconciler) generate(ctx context.Context, s *scope) (ctrl.Result, error) {
	cfg, c := s.Config, s.Cluster
	if s.Rejected != nil {
		return r.refuse(s), nil
	}
	if !conditions.IsTrue(c, clusterv1.ClusterControlPlaneInitializedCondition) {
		setDataSecretCondition(cfg, metav1.ConditionFalse, bootstrapv1.WaitingForControlPlaneInitializedReason,
			"Waiting for the Cluster's control plane to be initialized")
		return ctrl.Result{RequeueAfter: waitRequeue}, nil
	}
	if !c.Spec.ControlPlaneEndpoint.IsValid() {
		setDataSecretCondition(cfg, metav1.ConditionFalse, bootstrapv1.WaitingForControlPlaneEndpointReason,
			"Waiting for Cluster spec.controlPlaneEndpoint to be set")
		return ctrl.Result{RequeueAfter: waitRequeue}, nil
	}
	if s.Machine.Spec.Version == "" {
		setDataSecretCondition(cfg, metav1.ConditionFalse, bootstrapv1.WaitingForMachineVersionReason,
			"Waiting for the Machine's spec.version (the Kubernetes version to join with)")
		return ctrl.Result{}, nil
	}
	if msg := KubeletFlagRefusal(&cfg.Spec, s.Machine.Spec.Version); msg != "" {
		setDataSecretCondition(cfg, metav1.ConditionFalse, bootstrapv1.KubeletFlagNotSupportedReason, msg)
		r.Recorder.Eventf(cfg, s.Machine, corev1.EventTypeWarning, bootstrapv1.KubeletFlagNotSupportedReason, "Render", "%s", msg)
		return ctrl.Result{}, nil
	}
	caHash, err := r.clusterCAHash(ctx, c)
	if err != nil {
		setDataSecretCondition(cfg, metav1.ConditionFalse, bootstrapv1.ClusterCANotAvailableReason, err.Error())
		return ctrl.Result{RequeueAfter: waitRequeue}, nil
	}
	files, err := r.resolveFiles(ctx, cfg)
	if err != nil {
		return r.referenceMissing(cfg, bootstrapv1.FileSecretNotAvailableReason, err), nil
	}
	regs, err := r.resolveRegistries(ctx, cfg)
	if err != nil {
		return r.referenceMissing(cfg, bootstrapv1.RegistryReferenceNotAvailableReason, err), nil
	}
	var domain userdata.Access
	if ad := cfg.Spec.ActiveDirectory; ad != nil && ad.Credentials != nil {
		if domain, err = r.credentials(ctx, cfg.Namespace, ad.Credentials.Name); err != nil {
			return r.referenceMissing(cfg, bootstrapv1.DomainCredentialsNotAvailableReason, fmt.Errorf("activeDirectory credentials: %w", err)), nil
		}
	}
	remote, res, err := r.remoteClient(ctx, s)
	if remote == nil {
		return res, err
	}
	// The finalizer is persisted with this reconcile's patch; until then a lost token only
	// lives until it expires.
	controllerutil.AddFinalizer(cfg, tokenFinalizer)
	if cleansAccount(cfg) {
		controllerutil.AddFinalizer(cfg, accountFinalizer)
	}
	ds, adopted, err := r.adoptDataSecret(ctx, s, remote)
	deadline := r.joinDeadline(ds) // a re-issued token keeps the first one's deadline
	if err != nil || adopted {
		return ctrl.Result{RequeueAfter: r.recheckAfter(deadline)}, err
	}
	token, err := createToken(ctx, remote, r.tokenExpiry(deadline))
	if err != nil {
		setDataSecretCondition(cfg, metav1.ConditionFalse, bootstrapv1.DataSecretNotCreatedReason, err.Error())
		return ctrl.Result{}, err
	}
	in := BuildInput(&cfg.Spec, JoinParams{
		Endpoint: c.Spec.ControlPlaneEndpoint.String(), Token: token, CAHash: caHash,
		KubernetesVersion: s.Machine.Spec.Version, Files: files, Registries: regs, DomainCredentials: domain,
		MachineCreated: s.Machine.CreationTimestamp.Time,
	})
	data, err := userdata.Render(in)
	if err != nil {
		// Admission should make this unreachable; say exactly what is wrong and do not retry hot.
		setDataSecretCondition(cfg, metav1.ConditionFalse, bootstrapv1.RenderFailedReason, err.Error())
		r.Recorder.Eventf(cfg, nil, corev1.EventTypeWarning, bootstrapv1.RenderFailedReason, "Render", "%s", err.Error())
		return ctrl.Result{}, nil
	}
	if err := r.storeDataSecret(ctx, s, data, string(in.Format), token); err != nil {
		setDataSecretCondition(cfg, metav1.ConditionFalse, bootstrapv1.DataSecretNotCreatedReason, err.Error())
		return ctrl.Result{}, err
	}
	cfg.Status.DataSecretName = cfg.Name
	cfg.Status.Initialization.DataSecretCreated = ptr.To(true)
	setDataSecretCondition(cfg, metav1.ConditionTrue, bootstrapv1.DataSecretAvailableReason, "")
	r.Recorder.Eventf(cfg, s.Machine, corev1.EventTypeNormal, "DataSecretCreated", "Render",
		"Bootstrap data (%s) written to Secret %s", in.Format, cfg.Name)
	if insecure := insecureEndpoints(cfg.Spec.Containerd.Registries); len(insecure) > 0 {
		r.Recorder.Eventf(cfg, s.Machine, corev1.EventTypeWarning, bootstrapv1.InsecureRegistryReason, "Render",
			"containerd does not verify the certificates of %s (insecureSkipVerify): anyone on the network path can serve this node's images", strings.Join(insecure, ", "))
	}
	return ctrl.Result{RequeueAfter: r.recheckAfter(deadline)}, nil
}

// refuse marks a config the admission webhook would reject; no token or data is made for it.
func (r *Reconciler) refuse(s *scope) ctrl.Result {
	admit.Refuse(s.Config, bootstrapv1.DataSecretAvailableCondition, s.Rejected, r.Recorder)
	return ctrl.Result{RequeueAfter: admit.Recheck}
}

// adoptDataSecret takes over a data Secret this config already wrote whose token is still
// valid: an earlier reconcile's result that this one does not see in the status yet (a stale
// cache or a lost status patch). Issuing a second token would leave the first one behind.
// It returns the Secret it found (empty when there is none). Past the join deadline the Secret
// is adopted as it is; keepTokenFresh then revokes its token.
func (r *Reconciler) adoptDataSecret(ctx context.Context, s *scope, remote client.Client) (*corev1.Secret, bool, error) {
	cfg, ds := s.Config, &corev1.Secret{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cfg.Namespace, Name: cfg.Name}, ds); err != nil {
		return &corev1.Secret{}, false, client.IgnoreNotFound(err)
	}
	id := ds.Annotations[tokenIDAnnotation]
	if id == "" || ds.Annotations[tokenRevokedAnnotation] != "" || !metav1.IsControlledBy(ds, cfg) {
		return ds, false, nil
	}
	if deadline := r.joinDeadline(ds); r.now().Before(deadline) {
		found, err := refreshToken(ctx, remote, id, r.tokenExpiry(deadline), r.TokenTTL, r.now())
		if err != nil || !found {
			return ds, false, err
		}
	}
	cfg.Status.DataSecretName = ds.Name
	cfg.Status.Initialization.DataSecretCreated = ptr.To(true)
	setDataSecretCondition(cfg, metav1.ConditionTrue, bootstrapv1.DataSecretAvailableReason, "")
	return ds, true, nil
}

// keepTokenFresh extends the token while the Machine has no Node; if the token Secret is gone
// (expired and cleaned up, or deleted), it issues a new token and re-renders the data. Past the
// join deadline it revokes the token instead, once and for good.
func (r *Reconciler) keepTokenFresh(ctx context.Context, s *scope) (ctrl.Result, error) {
	ds := &corev1.Secret{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: s.Config.Namespace, Name: s.Config.Status.DataSecretName}, ds); err != nil {
		setDataSecretCondition(s.Config, metav1.ConditionTrue, bootstrapv1.DataSecretAvailableReason, "")
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	id := ds.Annotations[tokenIDAnnotation]
	ours := id != "" && metav1.IsControlledBy(ds, s.Config)
	if ours && ds.Annotations[tokenExpiredAnnotation] != "" {
		setTokenExpiredCondition(s.Config, r.JoinTimeout)
		return ctrl.Result{}, nil
	}
	setDataSecretCondition(s.Config, metav1.ConditionTrue, bootstrapv1.DataSecretAvailableReason, "")
	if !ours {
		return ctrl.Result{}, nil // not ours to refresh (e.g. a user-provided data secret)
	}
	if ds.Annotations[tokenRevokedAnnotation] != "" {
		// The node joined and its token was revoked; the Machine has no nodeRef only because its
		// status was lost (clusterctl move, restore) and CAPI has not restored it yet.
		return ctrl.Result{}, nil
	}
	remote, res, err := r.remoteClient(ctx, s)
	if remote == nil {
		return res, err
	}
	deadline := r.joinDeadline(ds)
	if !r.now().Before(deadline) {
		return ctrl.Result{}, r.expireToken(ctx, s, remote, ds, id)
	}
	found, err := refreshToken(ctx, remote, id, r.tokenExpiry(deadline), r.TokenTTL, r.now())
	if err != nil {
		return ctrl.Result{}, err
	}
	if found {
		return ctrl.Result{RequeueAfter: r.recheckAfter(deadline)}, nil
	}
	ctrl.LoggerFrom(ctx).Info("Bootstrap token is gone before the Node joined; issuing a new one", "tokenID", id)
	r.Recorder.Eventf(s.Config, s.Machine, corev1.EventTypeNormal, "BootstrapTokenRecreated", "Render",
		"Bootstrap token %s expired before the node joined; bootstrap data re-rendered with a new token", id)
	return r.generate(ctx, s)
}

// referenceMissing reports a Secret or ConfigMap the spec references that cannot be used yet; the
// message names it and never holds its content.
func (r *Reconciler) referenceMissing(cfg *bootstrapv1.WindowsConfig, reason string, err error) ctrl.Result {
	setDataSecretCondition(cfg, metav1.ConditionFalse, reason, err.Error())
	r.Recorder.Eventf(cfg, nil, corev1.EventTypeWarning, reason, "Render", "%s", err.Error())
	return ctrl.Result{RequeueAfter: waitRequeue}
}

// revokeToken deletes the token of a joined node from the workload cluster (once; the data
// Secret records it), so a join credential does not outlive its use until it expires.
func (r *Reconciler) revokeToken(ctx context.Context, s *scope) (ctrl.Result, error) {
	ds, id, err := r.unrevokedToken(ctx, s)
	if id == "" || err != nil {
		return ctrl.Result{}, err
	}
	remote, res, err := r.remoteClient(ctx, s)
	if remote == nil {
		return res, err
	}
	if err := r.deleteToken(ctx, remote, ds, id, tokenRevokedAnnotation); err != nil {
		return ctrl.Result{}, err
	}
	ctrl.LoggerFrom(ctx).Info("Node joined; bootstrap token revoked", "tokenID", id, "node", s.Machine.Status.NodeRef.Name)
	return ctrl.Result{}, nil
}

// unrevokedToken returns the config's data Secret and the ID of its token when that token is
// ours and not revoked yet ("" otherwise).
func (r *Reconciler) unrevokedToken(ctx context.Context, s *scope) (*corev1.Secret, string, error) {
	ds := &corev1.Secret{}
	if s.Config.Status.DataSecretName == "" {
		return ds, "", nil
	}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: s.Config.Namespace, Name: s.Config.Status.DataSecretName}, ds); err != nil {
		return ds, "", client.IgnoreNotFound(err)
	}
	id := ds.Annotations[tokenIDAnnotation]
	if ds.Annotations[tokenRevokedAnnotation] != "" || !metav1.IsControlledBy(ds, s.Config) {
		return ds, "", nil
	}
	return ds, id, nil
}

// deleteToken deletes the token Secret in the workload cluster and records it on the data Secret
// with the current time in each of the marks (annotations).
func (r *Reconciler) deleteToken(ctx context.Context, remote client.Client, ds *corev1.Secret, id string, marks ...string) error {
	tok := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: bootstrapapi.BootstrapTokenSecretPrefix + id}}
	switch err := remote.Delete(ctx, tok); {
	case err == nil:
		tokensTotal.WithLabelValues(tokenRevoke).Inc()
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("revoke bootstrap token %s: %w", id, err)
	}
	before := ds.DeepCopy()
	for _, m := range marks {
		ds.Annotations[m] = r.now().UTC().Format(time.RFC3339)
	}
	return r.Client.Patch(ctx, ds, client.MergeFrom(before))
}

// remoteClient returns a client for the workload cluster, or nil with the result to return.
func (r *Reconciler) remoteClient(ctx context.Context, s *scope) (client.Client, ctrl.Result, error) {
	c, err := r.ClusterCache.GetClient(ctx, util.ObjectKey(s.Cluster))
	if err == nil {
		return c, ctrl.Result{}, nil
	}
	if errors.Is(err, clustercache.ErrClusterNotConnected) {
		if !ptr.Deref(s.Config.Status.Initialization.DataSecretCreated, false) {
			setDataSecretCondition(s.Config, metav1.ConditionFalse, bootstrapv1.WorkloadClusterNotReachableReason,
				"Waiting for the connection to the workload cluster to create a bootstrap token")
		}
		return nil, ctrl.Result{RequeueAfter: waitRequeue}, nil
	}
	return nil, ctrl.Result{}, err
}

// clusterCAHash reads <cluster>-ca and returns kubeadm's discovery hash.
func (r *Reconciler) clusterCAHash(ctx context.Context, c *clusterv1.Cluster) (string, error) {
	ca, err := secret.GetFromNamespacedName(ctx, r.SecretCachingClient, util.ObjectKey(c), secret.ClusterCA)
	if err != nil {
		return "", fmt.Errorf("cluster CA Secret %s-ca: %w", c.Name, err)
	}
	hash, err := CACertHash(ca.Data[secret.TLSCrtDataName])
	if err != nil {
		return "", fmt.Errorf("cluster CA Secret %s-ca key %s: %w", c.Name, secret.TLSCrtDataName, err)
	}
	return hash, nil
}

// sooner is the result that comes back first.
func sooner(a, b ctrl.Result) ctrl.Result {
	if a.RequeueAfter == 0 || (b.RequeueAfter > 0 && b.RequeueAfter < a.RequeueAfter) {
		a.RequeueAfter = b.RequeueAfter
	}
	return a
}
