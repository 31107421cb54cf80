//go:build e2e

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/types/upstreamv1beta4"
	"sigs.k8s.io/yaml"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	"github.com/capwin/capwin/test/framework/guestjoin"
	simguest "github.com/capwin/capwin/test/framework/harness/guest"
)

// errRetry asks the poll loop to call the boot again (a step is still waiting).
var errRetry = errors.New("waiting")

// bootWindows is cloudbase-init handing capwin's user data to bootstrap.ps1 on a Windows guest,
// reduced to what can be observed from outside the VM: the user data must unpack as
// cloudbase-init unpacks it and hold capwin's data document; the join must succeed against the
// workload cluster as kubeadm's would (the endpoint answers, cluster-info is signed for the
// bootstrap token, the CA matches a pin); progress goes to the provider in bootstrap.ps1's
// format (guestinfo on vSphere, a KVP item on Hyper-V), and the kubelet registers the Node with
// the labels and taints the data asks for.
// Nothing is installed or run: the harness (test/framework/harness/guest) simulates the steps themselves.
// What the guest does is also kept in its journal (cloudbase-init's and the bootstrap's logs, the
// services' logs once joined, event-log entries) for capwin's log collector; a broken image
// (BrokenImageAnnotation) stops after cloudbase-init failed to run the user data.
func (s *sim) bootWindows(ctx context.Context, w *workload, g *guest, data []byte, broken bool) error {
	if !g.cloudbaseInitRan && g.journal != nil {
		g.cloudbaseInitRan = true
		g.journal.CloudbaseInit(broken)
	}
	if broken {
		s.log.Info("broken image: cloudbase-init cannot run the user data; nothing runs", "vm", g.vmName)
		return nil
	}
	u, err := userdata.Unpack(data)
	if err != nil {
		s.log.Info("cloudbase-init cannot unpack the user data; nothing runs", "vm", g.vmName, "err", err.Error())
		return nil // a real guest would sit there too; the MachineHealthCheck replaces it
	}
	if c, ok := userdata.DecodeImageCheck(u.Data); ok {
		// render image-check's script instead of a bootstrap: one report of what the image has.
		s.log.Info("image check", "vm", g.vmName, "build", g.build)
		return g.ch.report(ctx, c.Status, simguest.ImageCheckReport(g.build, simguest.Image{}, c))
	}
	doc, err := userdata.DecodeDocument(u.Data)
	if err != nil {
		s.log.Info("bootstrap.ps1 cannot read its data document; nothing is reported", "vm", g.vmName, "err", err.Error())
		return nil
	}
	report := func(step, state, msg string) error {
		r := simguest.Report{Step: step, State: state, Message: msg}
		g.journal.step(doc, r)
		return g.ch.report(ctx, doc.Status, r)
	}
	fail := func(step string, err error) error {
		s.log.Info("bootstrap failed", "vm", g.vmName, "step", step, "err", err.Error())
		return report(step, simguest.StateFailed, err.Error())
	}

	build := g.build
	if build == 0 {
		return fail("preflight", fmt.Errorf("%s is not a Windows build this simulator knows (%s)", g.image, g.imageFlag))
	}
	if build < doc.MinimumBuild {
		return fail("preflight", fmt.Errorf("Windows build %d is older than the oldest supported build %d (Windows Server 2022)", build, doc.MinimumBuild))
	}
	jc := &upstreamv1beta4.JoinConfiguration{}
	if err := yaml.UnmarshalStrict([]byte(doc.Join.Config), jc); err != nil {
		return fail("join", fmt.Errorf("kubeadm join: reading the JoinConfiguration: %w", err))
	}
	bt := jc.Discovery.BootstrapToken
	if bt == nil {
		return fail("join", errors.New("kubeadm join: only bootstrap token discovery is simulated"))
	}
	if want := net.JoinHostPort(s.o.endpointHost, strconv.Itoa(int(w.port))); bt.APIServerEndpoint != want {
		return fail("join", fmt.Errorf("kubeadm join: apiServerEndpoint is %q, the cluster's control plane endpoint is %q", bt.APIServerEndpoint, want))
	}
	if err := report("join", simguest.StateRunning, ""); err != nil {
		return err
	}
	if err := s.signClusterInfo(ctx, w); err != nil {
		return err
	}
	cs, err := s.discover(ctx, bt)
	if err != nil {
		if time.Since(g.since) < s.o.joinTimeout {
			s.log.V(1).Info("discovery failed; retrying", "vm", g.vmName, "err", err.Error())
			return errRetry
		}
		return fail("join", fmt.Errorf("kubeadm join: couldn't validate the identity of the API Server: %w", err))
	}
	flags, err := kubeletFlags(doc.Kubelet.Args, jc.NodeRegistration.KubeletExtraArgs)
	if err != nil {
		return fail("kubelet", err)
	}
	name := strings.ToLower(g.node)
	for _, n := range []string{jc.NodeRegistration.Name, flags.HostnameOverride} {
		if n != "" {
			name = n
		}
	}
	g.node = name
	labels := map[string]string{
		corev1.LabelHostname: name, corev1.LabelOSStable: "windows", corev1.LabelArchStable: "amd64",
		corev1.LabelWindowsBuild: "10.0." + strconv.Itoa(build),
	}
	for k, v := range flags.NodeLabels {
		labels[k] = v
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       corev1.NodeSpec{Taints: guestjoin.MergeTaints(flags.Taints, jc.NodeRegistration.Taints)},
		Status:     nodeStatus(g, "windows", fmt.Sprintf("Windows Server Datacenter (build %d)", build), doc.KubernetesVersion),
	}
	if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		if time.Since(g.since) < s.o.joinTimeout {
			return errRetry
		}
		return fail("join", fmt.Errorf("kubelet: unable to register node %q with the API server: %w", name, err))
	}
	s.log.Info("Windows node joined", "vm", g.vmName, "node", name, "build", build)
	g.journal.joinedAs(doc, name)
	return report("finish", simguest.StateSucceeded, "the node has joined the cluster")
}

// discover is kubeadm's bootstrap-token discovery over the network, against the endpoint the
// user data names (guestjoin.Discovery.ClusterInfoCA). It returns a client authenticated with
// the bootstrap token.
func (s *sim) discover(ctx context.Context, bt *upstreamv1beta4.BootstrapTokenDiscovery) (kubernetes.Interface, error) {
	d, err := guestjoin.ParseDiscovery(bt)
	if err != nil {
		return nil, err
	}
	ca, err := d.ClusterInfoCA(ctx, clusterInfo)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(&rest.Config{Host: d.Endpoint, BearerToken: bt.Token, TLSClientConfig: rest.TLSClientConfig{CAData: ca}})
}

func clusterInfo(ctx context.Context, cfg *rest.Config) (string, map[string]string, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", nil, err
	}
	return guestjoin.ReadClusterInfo(ctx, cs)
}

// kubeletFlags reads the kubelet service's "--name=value" flags and kubeadm's kubeletExtraArgs
// (which kubeadm join appends to them).
func kubeletFlags(args []string, extra []upstreamv1beta4.Arg) (guestjoin.KubeletFlags, error) {
	all := append([]string(nil), args...)
	for _, a := range extra {
		all = append(all, "--"+a.Name+"="+a.Value)
	}
	return guestjoin.ParseKubeletFlags(all)
}
