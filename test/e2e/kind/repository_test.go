//go:build e2e

package kind

import (
	"os"
	"path/filepath"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"

	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
)

// Names of e2e config variables the suite reads itself.
const (
	kubernetesVersion           = "KUBERNETES_VERSION"
	kubernetesVersionManagement = "KUBERNETES_VERSION_MANAGEMENT"
	kindNodeImage               = "KIND_NODE_IMAGE"
	ipFamily                    = "IP_FAMILY"
	certManagerManifest         = "CERT_MANAGER_MANIFEST" // relative to the e2e config
	certManagerVersion          = "CERT_MANAGER_VERSION"
)

// additionalProviders is the part of the e2e config Cluster API's E2EConfig has no room for:
// its validation allows exactly one BootstrapProvider, named kubeadm, and the windows flavor
// needs two (kubeadm for the Linux control plane, windows for the Windows workers). The entries
// have E2EConfig's provider shape and go into the same local repository.
type additionalProviders struct {
	AdditionalProviders []clusterctl.ProviderConfig `json:"additionalProviders"`
}

func readAdditionalProviders(path string) []clusterctl.ProviderConfig {
	data, err := os.ReadFile(path) //nolint:gosec // the e2e config named on the command line
	Expect(err).ToNot(HaveOccurred())
	var extra additionalProviders
	Expect(yaml.Unmarshal(data, &extra)).To(Succeed(), "additionalProviders in %s", path)
	base := filepath.Dir(path)
	for i := range extra.AdditionalProviders {
		p := &extra.AdditionalProviders[i]
		Expect(p.Name).ToNot(BeEmpty(), "additionalProviders[%d].name", i)
		Expect(p.Versions).ToNot(BeEmpty(), "additionalProviders[%d].versions", i)
		for j := range p.Versions {
			v := &p.Versions[j]
			if v.Type == "" {
				v.Type = clusterctl.URLSource
			}
			if !filepath.IsAbs(v.Value) {
				v.Value = filepath.Join(base, v.Value)
			}
			Expect(v.Value).To(BeAnExistingFile(), "additionalProviders %s %s: run `make release-manifests` first", p.Name, v.Name)
			for k := range v.Files {
				f := &v.Files[k]
				if !filepath.IsAbs(f.SourcePath) {
					f.SourcePath = filepath.Join(base, f.SourcePath)
				}
				if f.TargetName == "" {
					f.TargetName = filepath.Base(f.SourcePath)
				}
				Expect(f.SourcePath).To(BeAnExistingFile(), "additionalProviders %s %s", p.Name, v.Name)
			}
		}
	}
	return extra.AdditionalProviders
}

// additionalProviderNames are the names of the additional providers of one type.
func additionalProviderNames(path, providerType string) []string {
	var names []string
	for _, p := range readAdditionalProviders(path) {
		if p.Type == providerType {
			names = append(names, p.Name)
		}
	}
	return names
}

// createClusterctlLocalRepository is clusterctl.CreateRepository plus the additional providers,
// laid out the same way ({repository}/{provider label}/{version}/) and added to the providers
// of the clusterctl config it writes.
func createClusterctlLocalRepository(config *clusterctl.E2EConfig, configFile, repositoryFolder string) string {
	clusterctlConfig := clusterctl.CreateRepository(ctx, clusterctl.CreateRepositoryInput{
		E2EConfig:        config,
		RepositoryFolder: repositoryFolder,
	})
	Expect(clusterctlConfig).To(BeAnExistingFile(), "no clusterctl config in the local repository %s", repositoryFolder)

	data, err := os.ReadFile(clusterctlConfig) //nolint:gosec // written by CreateRepository just now
	Expect(err).ToNot(HaveOccurred())
	values := map[string]any{}
	Expect(yaml.Unmarshal(data, &values)).To(Succeed())
	providers, _ := values["providers"].([]any)

	for _, p := range readAdditionalProviders(configFile) {
		label := clusterctlv1.ManifestLabel(p.Name, clusterctlv1.ProviderType(p.Type))
		for _, v := range p.Versions {
			manifest, err := clusterctl.YAMLForComponentSource(ctx, v)
			Expect(err).ToNot(HaveOccurred(), "components of %s %s", p.Name, v.Name)
			dir := filepath.Join(repositoryFolder, label, v.Name)
			Expect(os.MkdirAll(dir, 0o750)).To(Succeed())
			Expect(os.WriteFile(filepath.Join(dir, "components.yaml"), manifest, 0o600)).To(Succeed())
			for _, f := range append(append([]clusterctl.Files(nil), p.Files...), v.Files...) {
				content, err := os.ReadFile(f.SourcePath)
				Expect(err).ToNot(HaveOccurred())
				Expect(os.WriteFile(filepath.Join(dir, f.TargetName), content, 0o600)).To(Succeed()) //nolint:gosec // paths from the e2e config
			}
		}
		providers = append(providers, map[string]any{
			"name": p.Name,
			"type": p.Type,
			"url":  filepath.Join(repositoryFolder, label, "latest", "components.yaml"),
		})
	}
	values["providers"] = providers
	if url := localCertManager(config, configFile, repositoryFolder); url != "" {
		values["cert-manager"] = map[string]any{"url": url, "version": config.MustGetVariable(certManagerVersion)}
	}
	out, err := yaml.Marshal(values)
	Expect(err).ToNot(HaveOccurred())
	Expect(os.WriteFile(clusterctlConfig, out, 0o600)).To(Succeed())
	return clusterctlConfig
}

// localCertManager puts the cert-manager manifest the e2e config names (CERT_MANAGER_MANIFEST,
// built by make e2e-images) into the local repository, laid out as clusterctl reads a
// cert-manager repository ({repository}/cert-manager/{version}/cert-manager.yaml), and returns
// its path for the clusterctl config; "" where the config names none (clusterctl's default).
func localCertManager(config *clusterctl.E2EConfig, configFile, repositoryFolder string) string {
	if !config.HasVariable(certManagerManifest) || config.MustGetVariable(certManagerManifest) == "" {
		return ""
	}
	src := config.MustGetVariable(certManagerManifest)
	if !filepath.IsAbs(src) {
		src = filepath.Join(filepath.Dir(configFile), src)
	}
	content, err := os.ReadFile(src) //nolint:gosec // named by the e2e config
	Expect(err).ToNot(HaveOccurred(), "%s: run `make e2e-images` first", certManagerManifest)
	dir := filepath.Join(repositoryFolder, "cert-manager", config.MustGetVariable(certManagerVersion))
	Expect(os.MkdirAll(dir, 0o750)).To(Succeed())
	dst := filepath.Join(dir, "cert-manager.yaml")
	Expect(os.WriteFile(dst, content, 0o600)).To(Succeed())
	return dst
}
