package e2e_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/bootstrap/pkg/imagecheck"
	"github.com/capwin/capwin/internal/diagnostics"
	"github.com/capwin/capwin/test/framework/harness"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// TestImageCheck runs render image-check (internal/imagecheck, as the command does) on both
// providers: one machine of the cluster made from a MachineDeployment's machine template with
// another image (the 2025 template or parent disk), booted by capwin with the check's script in
// place of a bootstrap; the simulated guest answers from its image; the report comes back through
// the provider's status; and afterwards no Machine, machine, Secret or VM of the check is left
// beside the cluster's node.
func TestImageCheck(t *testing.T) {
	for _, tc := range []struct {
		provider, image, service string
	}{
		{harness.VCenter, harness.Images["ltsc2025"].VSphereTemplate, "VMwareGuestInfoService"},
		{harness.HyperV, harness.Images["ltsc2025"].HyperVDisk, "NoCloudConfigDriveService"},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			h := start(t, tc.provider)
			ctx, g := t.Context(), NewWithT(t)
			g.Expect(h.CreateCluster(ctx)).To(Succeed())
			// A node of the 2022 image runs beside the check, as in a cluster before its upgrade.
			g.Expect(h.CreateWorkers(ctx, harness.Workers{Name: "chk", Image: "ltsc2022", Replicas: 1})).To(Succeed())
			before, err := h.WaitWorkers(ctx, "create 1", 1, "ltsc2022", stepTimeout, progress(t))
			g.Expect(err).NotTo(HaveOccurred())
			c, err := client.New(h.Management.Env.Config, client.Options{Scheme: diagnostics.Scheme()})
			g.Expect(err).NotTo(HaveOccurred())

			begin := time.Now()
			res, err := imagecheck.Run(ctx, c, imagecheck.Options{Namespace: harness.Namespace, Cluster: harness.ClusterName,
				MachineTemplate: "chk-ltsc2022", Image: tc.image, KubernetesVersion: harness.KubernetesVersion,
				Timeout: stepTimeout, Poll: time.Second})
			g.Expect(err).NotTo(HaveOccurred())
			t.Logf("image check of %s in %v: %+v", res.Image, time.Since(begin).Round(time.Second), res)
			g.Expect(res.Succeeded).To(BeTrue(), res.Message)
			g.Expect(res.Image).To(Equal(tc.image))
			g.Expect(res.Inventory).To(ContainElements(
				[2]string{"windows", "26100"}, [2]string{"metadata-services", tc.service},
				[2]string{"feature-containers", "Installed"}, [2]string{"kubelet", "1.36.3"}))

			// Nothing is left: the check's Machine, its machine and Secret are gone, and so is its VM.
			labelled := client.HasLabels{imagecheck.Label}
			g.Expect(listLen(ctx, g, c, &clusterv1.MachineList{}, labelled)).To(BeZero())
			g.Expect(listLen(ctx, g, c, &infrav1.VCenterMachineList{}, labelled)).To(BeZero())
			g.Expect(listLen(ctx, g, c, &infrav1.HyperVMachineList{}, labelled)).To(BeZero())
			g.Expect(listLen(ctx, g, c, &corev1.SecretList{}, labelled)).To(BeZero())
			after, err := h.Snapshot(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(after.VMs).To(Equal(before.VMs), "VMs on the hypervisor: the node's only")
			// (The node's config drive may go meanwhile: capwin removes it once the node has joined.)
			g.Expect(after.Files).To(BeNumerically("<=", before.Files), "disks and config drives on the Hyper-V hosts: the node's only")
			g.Expect(after.Machines).To(Equal(1))
			g.Expect(h.Guests.Failed()).To(BeEmpty())
		})
	}
}

func listLen(ctx context.Context, g Gomega, c client.Client, list client.ObjectList, opts ...client.ListOption) int {
	g.Expect(c.List(ctx, list, append(opts, client.InNamespace(harness.Namespace))...)).To(Succeed())
	return meta.LenList(list)
}
