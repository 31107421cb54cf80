// Package imagecheck is `render image-check`: it boots one machine of a cluster from a Windows
// image with capwin's normal path (a Cluster API Machine, its VCenterMachine or HyperVMachine made
// from one of the cluster's machine templates, the bootstrap data in a Secret), but the user data
// is the image check's script instead of a bootstrap: the guest lists what the image has for a
// node and reports it through the bootstrap's status channel. The check reads the report from the
// machine's status, then deletes the Machine (and so the VM) and its Secret.
package imagecheck

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// Label marks the image check's Machine, machine and Secret.
const Label = "capwin.io/image-check"

// Options says what to check and where.
type Options struct {
	Namespace, Cluster string
	// MachineTemplate names a VCenterMachineTemplate or HyperVMachineTemplate of the namespace
	// (the first found) whose spec the check's machine copies.
	MachineTemplate string
	// Image replaces the template's image: the vCenter template, or the Hyper-V parent disk path
	// ("": the machine template's own).
	Image string
	// KubernetesVersion is the kubelet the image must carry ("": not compared).
	KubernetesVersion string
	// Timeout bounds the wait for the report (default 30 minutes); Poll is the interval (5s).
	Timeout, Poll time.Duration
}

// Result is the guest's report.
type Result struct {
	// Machine is the Machine the check made (deleted again).
	Machine string
	Kind    string // VCenterMachine or HyperVMachine
	Image   string
	// Succeeded: the image has what a node needs; Message names what it lacks otherwise.
	Succeeded bool
	Message   string
	// Inventory is what the guest found, in its order (name, value).
	Inventory [][2]string
}

// Run makes the machine, waits for its report and deletes everything it made, also when the
// wait fails.
func Run(ctx context.Context, c client.Client, o Options) (res *Result, err error) {
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Minute
	}
	if o.Poll <= 0 {
		o.Poll = 5 * time.Second
	}
	if err = c.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: o.Cluster}, &clusterv1.Cluster{}); err != nil {
		return nil, fmt.Errorf("cluster %s/%s: %w", o.Namespace, o.Cluster, err)
	}
	name := fmt.Sprintf("%s-image-check-%s", o.Cluster, suffix())
	infra, image, err := machineFromTemplate(ctx, c, o, name)
	if err != nil {
		return nil, err
	}
	vsphere := infra.GetObjectKind().GroupVersionKind().Kind == "VCenterMachine"
	check := userdata.NewImageCheck(o.KubernetesVersion, vsphere)
	script, err := userdata.ImageCheckScript(check)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{clusterv1.ClusterNameLabel: o.Cluster, Label: ""}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: o.Namespace, Labels: labels},
		Type: clusterv1.ClusterSecretType, Data: map[string][]byte{"value": script, "format": []byte("powershell")}}
	machine := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: o.Namespace, Labels: labels},
		Spec: clusterv1.MachineSpec{ClusterName: o.Cluster, Version: o.KubernetesVersion,
			Bootstrap: clusterv1.Bootstrap{DataSecretName: &name},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group,
				Kind: infra.GetObjectKind().GroupVersionKind().Kind, Name: name}}}
	infra.SetLabels(labels)
	res = &Result{Machine: name, Kind: machine.Spec.InfrastructureRef.Kind, Image: image}
	created := []client.Object{}
	defer func() {
		// A new context: the caller's may have ended (Ctrl-C), and the VM must not be left.
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Minute)
		defer cancel()
		if rerr := remove(cleanup, c, o.Poll, created); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}()
	for _, obj := range []client.Object{secret, infra, machine} {
		if err = c.Create(ctx, obj); err != nil {
			return nil, fmt.Errorf("create %T %s: %w", obj, name, err)
		}
		created = append(created, obj)
	}
	st, err := waitReport(ctx, c, infra, o.Timeout, o.Poll)
	if err != nil {
		return nil, err
	}
	res.Succeeded, res.Message = st.State == "Succeeded", st.Message
	for _, line := range strings.Split(st.LogTail, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			res.Inventory = append(res.Inventory, [2]string{k, v})
		}
	}
	return res, nil
}

func suffix() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// infraMachine is a VCenterMachine or HyperVMachine.
type infraMachine interface {
	client.Object
	GetMachineStatus() *infrav1.MachineStatus
}

// machineFromTemplate is the check's machine: the spec of the named machine template, with Image.
func machineFromTemplate(ctx context.Context, c client.Client, o Options, name string) (infraMachine, string, error) {
	key := client.ObjectKey{Namespace: o.Namespace, Name: o.MachineTemplate}
	meta := metav1.ObjectMeta{Name: name, Namespace: o.Namespace}
	var vt infrav1.VCenterMachineTemplate
	err := c.Get(ctx, key, &vt)
	if err == nil {
		m := &infrav1.VCenterMachine{ObjectMeta: meta, Spec: vt.Spec.Template.Spec}
		m.SetGroupVersionKind(infrav1.GroupVersion.WithKind("VCenterMachine"))
		m.Spec.ProviderID = ""
		if o.Image != "" {
			m.Spec.Template = o.Image
		}
		return m, m.Spec.Template, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, "", err
	}
	var ht infrav1.HyperVMachineTemplate
	if err := c.Get(ctx, key, &ht); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, "", fmt.Errorf("no VCenterMachineTemplate or HyperVMachineTemplate %s in namespace %s", o.MachineTemplate, o.Namespace)
		}
		return nil, "", err
	}
	m := &infrav1.HyperVMachine{ObjectMeta: meta, Spec: ht.Spec.Template.Spec}
	m.SetGroupVersionKind(infrav1.GroupVersion.WithKind("HyperVMachine"))
	m.Spec.ProviderID = ""
	image := m.Spec.ParentDisk
	if o.Image != "" {
		m.Spec.ParentDisk, m.Spec.ParentDiskSource, image = o.Image, nil, o.Image
	}
	if m.Spec.ParentDiskSource != nil {
		image = m.Spec.ParentDiskSource.URL
	}
	return m, image, nil
}

// waitReport waits for the guest's image-check report on the machine's status.
func waitReport(ctx context.Context, c client.Client, m infraMachine, timeout, poll time.Duration) (*infrav1.BootstrapStatus, error) {
	var st *infrav1.BootstrapStatus
	err := wait.PollUntilContextTimeout(ctx, poll, timeout, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(m), m); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		b := m.GetMachineStatus().Bootstrap
		if b.Step == userdata.ImageCheckStep && (b.State == "Succeeded" || b.State == "Failed") {
			st = &b
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("no report from the image's guest within %v (the machine's conditions: %s): %w", timeout, conditions(m), err)
	}
	return st, nil
}

// conditions summarizes the machine's conditions that are not True.
func conditions(m infraMachine) string {
	var out []string
	for _, cond := range m.GetMachineStatus().Conditions {
		if cond.Status != metav1.ConditionTrue && cond.Type != "Paused" {
			out = append(out, fmt.Sprintf("%s=%s %s: %s", cond.Type, cond.Status, cond.Reason, cond.Message))
		}
	}
	if len(out) == 0 {
		return "none false"
	}
	return strings.Join(out, "; ")
}

// remove deletes what the check made, the Machine first (Cluster API then deletes the machine
// and capwin its VM), and waits until each is gone.
func remove(ctx context.Context, c client.Client, poll time.Duration, created []client.Object) error {
	var errs []error
	for i := len(created) - 1; i >= 0; i-- {
		obj := created[i]
		if err := client.IgnoreNotFound(c.Delete(ctx, obj)); err != nil {
			errs = append(errs, err)
			continue
		}
		err := wait.PollUntilContextCancel(ctx, poll, true, func(ctx context.Context) (bool, error) {
			err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("%T %s is not gone: %w", obj, obj.GetName(), err))
		}
	}
	return errors.Join(errs...)
}
