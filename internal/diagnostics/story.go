// Package diagnostics tells one Machine's whole story for an operator whose Windows node never
// joined: the Machine, its VCenterMachine or HyperVMachine (VM, host, addresses, provisioning
// state), its WindowsConfig, the guest's bootstrap report with its log tail, recent events and
// the Node in the workload cluster, or the likely reason there is none.
package diagnostics

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// InfraMachine is a VCenterMachine or a HyperVMachine.
type InfraMachine interface {
	client.Object
	GetConditions() []metav1.Condition
	GetMachineStatus() *infrav1.MachineStatus
	GetProviderID() *string
}

// Story is what Collect found about one Machine.
type Story struct {
	Machine *clusterv1.Machine
	// Infra is nil when the Machine's infrastructure is not a capwin kind or is missing;
	// InfraKind and InfraName are the Machine's reference in any case.
	Infra                InfraMachine
	InfraKind, InfraName string
	// Config is nil when the bootstrap is not a WindowsConfig or it is missing.
	Config *bootstrapv1.WindowsConfig
	Events []Event
	// Workload is the workload cluster's story: its Node, or why it could not be read.
	Workload Workload
}

// Scheme has every kind Collect reads.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1.AddToScheme, bootstrapv1.AddToScheme, infrav1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

// Collect reads the story of the Machine named name, or of the Machine that owns the
// VCenterMachine or HyperVMachine named name, from the management cluster c.
func Collect(ctx context.Context, c client.Client, namespace, name string) (*Story, error) {
	m, err := findMachine(ctx, c, namespace, name)
	if err != nil {
		return nil, err
	}
	s := &Story{Machine: m, InfraKind: m.Spec.InfrastructureRef.Kind, InfraName: m.Spec.InfrastructureRef.Name}
	if s.Infra, err = getInfra(ctx, c, namespace, s.InfraKind, s.InfraName); err != nil {
		return nil, err
	}
	if ref := m.Spec.Bootstrap.ConfigRef; ref.Kind == "WindowsConfig" {
		cfg := &bootstrapv1.WindowsConfig{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, cfg); err == nil {
			s.Config = cfg
		} else if !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
	objs := []client.Object{m}
	if s.Infra != nil {
		objs = append(objs, s.Infra)
	}
	if s.Config != nil {
		objs = append(objs, s.Config)
	}
	if s.Events, err = events(ctx, c, objs...); err != nil {
		return nil, err
	}
	s.Workload = readWorkload(ctx, c, s)
	return s, nil
}

// findMachine gets a Machine by name, or the owner Machine of an infrastructure machine.
func findMachine(ctx context.Context, c client.Client, namespace, name string) (*clusterv1.Machine, error) {
	m := &clusterv1.Machine{}
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, m)
	if err == nil || !apierrors.IsNotFound(err) {
		return m, err
	}
	for _, kind := range []string{"VCenterMachine", "HyperVMachine"} {
		infra, err := getInfra(ctx, c, namespace, kind, name)
		if err != nil {
			return nil, err
		}
		if infra == nil {
			continue
		}
		for _, ref := range infra.GetOwnerReferences() {
			if ref.Kind == "Machine" {
				return m, c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, m)
			}
		}
		return nil, fmt.Errorf("%s %s/%s has no owner Machine yet", kind, namespace, name)
	}
	return nil, fmt.Errorf("no Machine, VCenterMachine or HyperVMachine named %q in namespace %q", name, namespace)
}

// getInfra gets a capwin infrastructure machine; nil when the kind is not capwin's or it is gone.
func getInfra(ctx context.Context, c client.Client, namespace, kind, name string) (InfraMachine, error) {
	var obj InfraMachine
	switch kind {
	case "VCenterMachine":
		obj = &infrav1.VCenterMachine{}
	case "HyperVMachine":
		obj = &infrav1.HyperVMachine{}
	default:
		return nil, nil
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, obj); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return obj, nil
}
