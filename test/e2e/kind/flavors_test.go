//go:build e2e

package kind

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
)

// capwinProvider is the name of capwin's infrastructure provider in the e2e config.
const capwinProvider = "capwin"

// templateFile is a flavor's file name in a clusterctl repository.
func templateFile(flavor string) string { return "cluster-template-" + flavor + ".yaml" }

// capwinVersion is one version of capwin in the local clusterctl repository: its folder there
// ({repository}/infrastructure-capwin/{version}, as clusterctl.CreateRepository lays it out) and
// the folder of the release it was made from (make release-manifests: out/).
type capwinVersion struct {
	repositoryDir, releaseDir string
}

func capwinVersions(config *clusterctl.E2EConfig, clusterctlConfig string) []capwinVersion {
	var out []capwinVersion
	for _, p := range config.Providers {
		if p.Name != capwinProvider || p.Type != string(clusterctlv1.InfrastructureProviderType) {
			continue
		}
		label := clusterctlv1.ManifestLabel(p.Name, clusterctlv1.ProviderType(p.Type))
		for _, v := range p.Versions {
			out = append(out, capwinVersion{
				repositoryDir: filepath.Join(filepath.Dir(clusterctlConfig), label, v.Name),
				releaseDir:    filepath.Dir(v.Value), // made absolute by clusterctl.LoadE2EConfig
			})
		}
	}
	Expect(out).ToNot(BeEmpty(), "no %s infrastructure provider in the e2e config", capwinProvider)
	return out
}

// ensureReleaseFlavor puts a flavor capwin's release ships (written by make release-manifests
// beside the components) into the local repository, where the e2e config does not list it among
// capwin's files.
func ensureReleaseFlavor(config *clusterctl.E2EConfig, clusterctlConfig, flavor string) {
	for _, v := range capwinVersions(config, clusterctlConfig) {
		dst := filepath.Join(v.repositoryDir, templateFile(flavor))
		if _, err := os.Stat(dst); err == nil {
			continue
		}
		src := filepath.Join(v.releaseDir, templateFile(flavor))
		data, err := os.ReadFile(src) //nolint:gosec // the release folder the e2e config names
		Expect(err).ToNot(HaveOccurred(), "flavor %s: run `make release-manifests` first", flavor)
		writeFileAtomically(dst, data)
	}
}

// writeFileAtomically writes a file that other ginkgo processes may read or write at the same
// time (they write the same content).
func writeFileAtomically(path string, data []byte) {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-")
	Expect(err).ToNot(HaveOccurred())
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	Expect(err).ToNot(HaveOccurred(), "write %s", f.Name())
	Expect(os.Rename(f.Name(), path)).To(Succeed())
}

// Cluster API's MachineDeploymentRemediationSpec marks a Node unhealthy with this condition and
// expects the flavor's MachineHealthCheck to act on it, with a short timeout.
const remediationNodeCondition corev1.NodeConditionType = "e2e.remediation.condition"

const remediationTimeout = 10 // seconds

// windowsMDRemediationFlavor is the windows flavor with the MachineHealthCheck that Cluster API's
// MachineDeploymentRemediationSpec expects. It is made by the suite in the local repository from
// the windows flavor (writeWindowsMDRemediationFlavor), never shipped.
const windowsMDRemediationFlavor = "windows-md-remediation"

// writeWindowsMDRemediationFlavor writes the windows-md-remediation flavor beside the windows
// flavor, in every version of capwin in the local repository.
func writeWindowsMDRemediationFlavor(config *clusterctl.E2EConfig, clusterctlConfig string) {
	for _, v := range capwinVersions(config, clusterctlConfig) {
		windows, err := os.ReadFile(filepath.Join(v.repositoryDir, templateFile("windows")))
		Expect(err).ToNot(HaveOccurred(), "the windows flavor in the local repository")
		data, err := windowsMDRemediationTemplate(windows)
		Expect(err).ToNot(HaveOccurred())
		writeFileAtomically(filepath.Join(v.repositoryDir, templateFile(windowsMDRemediationFlavor)), data)
	}
}

var machineHealthCheckKind = regexp.MustCompile(`(?m)^kind: MachineHealthCheck$`)

// windowsMDRemediationTemplate is the windows flavor with its MachineHealthCheck changed as
// MachineDeploymentRemediationSpec needs it: the spec lists the machines a MachineHealthCheck
// selects by its matchLabels only (the flavor selects by a matchExpression, which would list the
// control plane machine too), so it selects the Windows MachineDeployment's machines by label;
// the spec's Node condition comes first, with a short timeout; and remediation is not limited
// (the flavor's 40% would forbid remediating the single Windows machine the spec creates).
// Everything else is the windows flavor's, byte for byte.
func windowsMDRemediationTemplate(windows []byte) ([]byte, error) {
	docs := strings.Split(string(windows), "\n---\n")
	found := 0
	for i, doc := range docs {
		if !machineHealthCheckKind.MatchString(doc) {
			continue
		}
		mhc := &clusterv1.MachineHealthCheck{}
		if err := yaml.UnmarshalStrict([]byte(doc), mhc); err != nil {
			return nil, err
		}
		mhc.Spec.Selector = metav1.LabelSelector{MatchLabels: map[string]string{
			clusterv1.MachineDeploymentNameLabel: mhc.Spec.ClusterName + windowsMachineDeploymentSuffix,
		}}
		mhc.Spec.Checks.UnhealthyNodeConditions = append([]clusterv1.UnhealthyNodeCondition{{
			Type: remediationNodeCondition, Status: corev1.ConditionFalse, TimeoutSeconds: ptr.To[int32](remediationTimeout),
		}}, mhc.Spec.Checks.UnhealthyNodeConditions...)
		mhc.Spec.Remediation.TriggerIf = clusterv1.MachineHealthCheckRemediationTriggerIf{}
		data, err := yaml.Marshal(mhc)
		if err != nil {
			return nil, err
		}
		docs[i] = "# The windows flavor's MachineHealthCheck, changed for Cluster API's MachineDeploymentRemediationSpec.\n" + string(data)
		found++
	}
	if found != 1 {
		return nil, fmt.Errorf("the windows flavor has %d MachineHealthChecks, want one", found)
	}
	return []byte("# windows-md-remediation: the windows flavor for Cluster API's MachineDeploymentRemediationSpec,\n" +
		"# written by capwin's kind e2e into its local clusterctl repository. Not a published flavor.\n" +
		strings.Join(docs, "\n---\n")), nil
}
