package clusterctl_test

import (
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// expectCertManagerRefs checks the names that tie a provider's webhook serving certificate
// together, which a dry run cannot: each Certificate's issuer is an Issuer of the components
// (kustomize's namePrefix renames the Issuer, and only a nameReference rule renames the
// Certificate's issuerRef with it), each inject-ca-from annotation names a Certificate of the
// components, and each Secret the Deployment mounts is a Certificate's secretName. Found by the
// kind e2e: the Certificate named "selfsigned-issuer" while the Issuer was
// "capwin-infrastructure-selfsigned-issuer", so no certificate was issued and the managers
// never started.
func expectCertManagerRefs(g Gomega, objs []unstructured.Unstructured) {
	issuers, certs, secrets := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, o := range objs {
		switch o.GetKind() {
		case "Issuer":
			issuers[o.GetNamespace()+"/"+o.GetName()] = true
		case "Certificate":
			certs[o.GetNamespace()+"/"+o.GetName()] = true
			name, _, _ := unstructured.NestedString(o.Object, "spec", "secretName")
			secrets[o.GetNamespace()+"/"+name] = true
		}
	}
	g.Expect(certs).NotTo(BeEmpty())
	for _, o := range objs {
		switch o.GetKind() {
		case "Certificate":
			kind, _, _ := unstructured.NestedString(o.Object, "spec", "issuerRef", "kind")
			name, _, _ := unstructured.NestedString(o.Object, "spec", "issuerRef", "name")
			g.Expect(kind).To(Equal("Issuer"), "Certificate %s", o.GetName())
			g.Expect(issuers).To(HaveKey(o.GetNamespace()+"/"+name), "Certificate %s names issuer %s", o.GetName(), name)
		case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "CustomResourceDefinition":
			if ref, ok := o.GetAnnotations()["cert-manager.io/inject-ca-from"]; ok {
				g.Expect(certs).To(HaveKey(ref), "%s %s injects the CA of %s", o.GetKind(), o.GetName(), ref)
			}
		case "Deployment":
			volumes, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "volumes")
			for _, v := range volumes {
				name, found, _ := unstructured.NestedString(v.(map[string]any), "secret", "secretName")
				if found {
					g.Expect(secrets).To(HaveKey(o.GetNamespace()+"/"+name), "Deployment %s mounts Secret %s", o.GetName(), name)
				}
			}
		}
	}
}
