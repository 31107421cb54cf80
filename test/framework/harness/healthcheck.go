package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/capwin/capwin/internal/test/envtest"
)

// flavorHealthConditions are the unhealthy node conditions of the flavors' Windows
// MachineHealthCheck (templates/base/windows.yaml) besides Ready's: those of capwin's node health
// checker. The harness's health checks use them with its own, shorter, timeouts.
func flavorHealthConditions() ([]corev1.NodeConditionType, error) {
	path := filepath.Join(envtest.RepoRoot(), "templates", "base", "windows.yaml")
	data, err := os.ReadFile(path) //nolint:gosec // G304: a file of this repository
	if err != nil {
		return nil, err
	}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		if !strings.Contains(doc, "\nkind: MachineHealthCheck\n") {
			continue
		}
		var mhc clusterv1.MachineHealthCheck
		if err := yaml.Unmarshal([]byte(doc), &mhc); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		var out []corev1.NodeConditionType
		for _, c := range mhc.Spec.Checks.UnhealthyNodeConditions {
			if c.Type != corev1.NodeReady {
				out = append(out, c.Type)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s has no MachineHealthCheck", path)
}
