package main

import (
	"context"
	"crypto/rsa"
	"fmt"
	"net"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	devv1 "sigs.k8s.io/cluster-api/test/infrastructure/docker/api/v1beta2"
	"sigs.k8s.io/cluster-api/util/certs"
	"sigs.k8s.io/cluster-api/util/kubeconfig"
	"sigs.k8s.io/cluster-api/util/secret"

	"github.com/capwin/capwin/test/framework/harness"
	"github.com/capwin/capwin/test/framework/harness/management"
)

// The anchor's objects: its own namespace and Cluster, two machine templates (the rollout
// switches from the first to the second) and the bootstrap data every Machine shares.
const (
	anchorNS        = "anchor"
	anchorCluster   = "anchor"
	anchorBootstrap = "anchor-bootstrap"
)

var anchorTemplates = [2]string{"anchor-a", "anchor-b"}

// createCluster creates the anchor's Cluster: a DevCluster (inMemory), the harness's externally
// managed control plane pointed at the in-memory API server the DevCluster got, the cluster CA
// and kubeconfig a control plane provider would write, and the machine templates. It returns
// when CAPI reaches the in-memory workload cluster, as the capwin run's Cluster.
func (a *anchor) createCluster(ctx context.Context) error {
	c := a.c
	key := client.ObjectKey{Namespace: anchorNS, Name: anchorCluster}
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: anchorNS}},
		// an annotation, since the DevCluster controller adds one to the map as it is
		&devv1.DevCluster{ObjectMeta: metav1.ObjectMeta{Name: anchorCluster, Namespace: anchorNS, Annotations: map[string]string{"capwin.io/bench": "anchor"}},
			Spec: devv1.DevClusterSpec{Backend: devv1.DevClusterBackendSpec{InMemory: &devv1.InMemoryClusterBackendSpec{}}}},
		management.NewControlPlane(anchorNS, anchorCluster),
		&clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: anchorCluster, Namespace: anchorNS}, Spec: clusterv1.ClusterSpec{
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: devv1.GroupVersion.Group, Kind: "DevCluster", Name: anchorCluster},
			ControlPlaneRef:   management.ControlPlaneRef(anchorCluster),
		}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: anchorBootstrap, Namespace: anchorNS},
			Data: map[string][]byte{"value": []byte("#cloud-config\n"), "format": []byte("cloud-config")}},
	}
	for _, name := range anchorTemplates {
		objs = append(objs, &devv1.DevMachineTemplate{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: anchorNS},
			Spec: devv1.DevMachineTemplateSpec{Template: devv1.DevMachineTemplateResource{Spec: devv1.DevMachineSpec{
				Backend: devv1.DevMachineBackendSpec{InMemory: &devv1.InMemoryMachineBackendSpec{}}}}}})
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			return fmt.Errorf("create %T %s: %w", o, o.GetName(), err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	dc := &devv1.DevCluster{}
	if err := until(ctx, func() bool {
		return c.Get(ctx, key, dc) == nil && dc.Spec.ControlPlaneEndpoint.Port > 0
	}); err != nil {
		return fmt.Errorf("DevCluster endpoint: %w", err)
	}
	ep := net.JoinHostPort(dc.Spec.ControlPlaneEndpoint.Host, strconv.Itoa(int(dc.Spec.ControlPlaneEndpoint.Port)))
	if err := a.h.Management.SetControlPlaneEndpoint(ctx, key, ep); err != nil {
		return err
	}
	cl := &clusterv1.Cluster{}
	if err := until(ctx, func() bool { return c.Get(ctx, key, cl) == nil && cl.Spec.ControlPlaneEndpoint.IsValid() }); err != nil {
		return fmt.Errorf("the Cluster's endpoint: %w", err)
	}
	if err := a.serveAPI(ctx, cl); err != nil {
		return err
	}
	return until(ctx, func() bool {
		return c.Get(ctx, key, cl) == nil && ptr.Deref(cl.Status.Initialization.ControlPlaneInitialized, false) &&
			meta.IsStatusConditionTrue(cl.Status.Conditions, clusterv1.ClusterRemoteConnectionProbeCondition)
	})
}

// serveAPI writes the cluster CA and the admin kubeconfig (as KubeadmControlPlane would) and
// starts the in-memory API server behind the Cluster's endpoint with that CA.
func (a *anchor) serveAPI(ctx context.Context, cl *clusterv1.Cluster) error {
	c := a.c
	cs := secret.NewCertificatesForInitialControlPlane(&bootstrapv1.ClusterConfiguration{})
	if err := cs.Generate(); err != nil {
		return err
	}
	owner := metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: cl.Name, UID: cl.UID}
	if err := cs.SaveGenerated(ctx, c, client.ObjectKeyFromObject(cl), owner); err != nil {
		return err
	}
	if err := kubeconfig.CreateSecret(ctx, c, cl); err != nil {
		return err
	}
	ca := cs.GetByPurpose(secret.ClusterCA).KeyPair
	caCert, err := certs.DecodeCertPEM(ca.Cert)
	if err != nil {
		return err
	}
	signer, err := certs.DecodePrivateKeyPEM(ca.Key)
	if err != nil {
		return err
	}
	caKey, ok := signer.(*rsa.PrivateKey)
	if !ok {
		return fmt.Errorf("cluster CA key is a %T, not RSA", signer)
	}
	return a.mux.AddAPIServer(klog.KObj(cl).String(), "kube-apiserver-anchor", caCert, caKey)
}

// createWorkers creates the anchor's MachineDeployment as harness.CreateWorkers creates capwin's,
// with the bootstrap data given (no bootstrap provider) and the first machine template.
func (a *anchor) createWorkers(ctx context.Context, replicas, maxSurge int32) error {
	return a.h.Management.Client.Create(ctx, &clusterv1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: anchorCluster, Namespace: anchorNS},
		Spec: clusterv1.MachineDeploymentSpec{
			ClusterName: anchorCluster, Replicas: ptr.To(replicas),
			Rollout: clusterv1.MachineDeploymentRolloutSpec{Strategy: clusterv1.MachineDeploymentRolloutStrategy{
				Type: clusterv1.RollingUpdateMachineDeploymentStrategyType,
				RollingUpdate: clusterv1.MachineDeploymentRolloutStrategyRollingUpdate{
					MaxSurge: ptr.To(intstr.FromInt32(maxSurge)), MaxUnavailable: ptr.To(intstr.FromInt32(0)),
				},
			}},
			Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
				ClusterName: anchorCluster, Version: harness.KubernetesVersion,
				Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To(anchorBootstrap)},
				InfrastructureRef: devTemplate(anchorTemplates[0]),
			}},
		},
	})
}

// roll switches the MachineDeployment to the second machine template.
func (a *anchor) roll(ctx context.Context) error {
	c := a.h.Management.Client
	md := &clusterv1.MachineDeployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: anchorNS, Name: anchorCluster}, md); err != nil {
		return err
	}
	before := md.DeepCopy()
	md.Spec.Template.Spec.InfrastructureRef = devTemplate(anchorTemplates[1])
	return c.Patch(ctx, md, client.MergeFrom(before))
}

func devTemplate(name string) clusterv1.ContractVersionedObjectReference {
	return clusterv1.ContractVersionedObjectReference{APIGroup: devv1.GroupVersion.Group, Kind: "DevMachineTemplate", Name: name}
}

// until polls cond every 100ms until it holds or ctx ends.
func until(ctx context.Context, cond func() bool) error {
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}
