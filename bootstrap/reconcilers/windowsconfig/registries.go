package windowsconfig

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	"github.com/capwin/capwin/bootstrap/webhooks"
	"github.com/capwin/capwin/internal/loginsecret"
)

// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get

// RegistryRefs are the resolved contents of the references in spec.containerd.registries.
type RegistryRefs struct {
	// CAs by caRefKey.
	CAs map[string]string
	// Credentials by Secret name.
	Credentials map[string]userdata.Access
}

// caRefKey names a CA reference: "secret/<name>/<key>" or "configMap/<name>/<key>".
func caRefKey(ca *bootstrapv1.CABundle) string {
	switch {
	case ca.Secret != nil:
		return "secret/" + ca.Secret.Name + "/" + ca.Secret.Key
	case ca.ConfigMap != nil:
		return "configMap/" + ca.ConfigMap.Name + "/" + ca.ConfigMap.Key
	}
	return ""
}

// caRefName names a CA reference for people: "Secret <name> key <key>".
func caRefName(ca *bootstrapv1.CABundle) string {
	if ca.Secret != nil {
		return "Secret " + ca.Secret.Name + " key " + ca.Secret.Key
	}
	return "ConfigMap " + ca.ConfigMap.Name + " key " + ca.ConfigMap.Key
}

// accesses lists every endpoint's access settings with a name for messages.
func accesses(regs []bootstrapv1.Registry) (names []string, out []bootstrapv1.RegistryAccess) {
	for _, r := range regs {
		names, out = append(names, "registry "+r.Host), append(out, r.RegistryAccess)
		for _, m := range r.Mirrors {
			names, out = append(names, "registry "+r.Host+" mirror "+m.URL), append(out, m.RegistryAccess)
		}
	}
	return names, out
}

// resolveRegistries reads the CA bundles and credentials the registries reference, from the
// config's namespace only. Nothing read here goes into status, conditions or events.
func (r *Reconciler) resolveRegistries(ctx context.Context, cfg *bootstrapv1.WindowsConfig) (RegistryRefs, error) {
	refs := RegistryRefs{CAs: map[string]string{}, Credentials: map[string]userdata.Access{}}
	names, list := accesses(cfg.Spec.Containerd.Registries)
	for i, a := range list {
		if a.CA != nil && a.CA.Content == "" {
			data, err := r.caData(ctx, cfg.Namespace, a.CA)
			if err != nil {
				return refs, fmt.Errorf("%s: ca: %w", names[i], err)
			}
			refs.CAs[caRefKey(a.CA)] = data
		}
		if a.Credentials != nil {
			c, err := r.credentials(ctx, cfg.Namespace, a.Credentials.Name)
			if err != nil {
				return refs, fmt.Errorf("%s: credentials: %w", names[i], err)
			}
			refs.Credentials[a.Credentials.Name] = c
		}
	}
	return refs, nil
}

func (r *Reconciler) caData(ctx context.Context, ns string, ca *bootstrapv1.CABundle) (string, error) {
	var data string
	if ca.Content != "" {
		return ca.Content, nil // checked at admission
	}
	if ca.Secret != nil {
		v, err := r.secretKey(ctx, ns, ca.Secret.Name, ca.Secret.Key)
		if err != nil {
			return "", err
		}
		data = string(v)
	} else {
		cm := &corev1.ConfigMap{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: ca.ConfigMap.Name}, cm); err != nil {
			return "", fmt.Errorf("the ConfigMap %s/%s: %w", ns, ca.ConfigMap.Name, err)
		}
		v, ok := cm.Data[ca.ConfigMap.Key]
		if !ok {
			return "", fmt.Errorf("the ConfigMap %s/%s has no key %q", ns, ca.ConfigMap.Name, ca.ConfigMap.Key)
		}
		data = v
	}
	if problem := webhooks.PEMCertificatesProblem(data); problem != "" {
		return "", fmt.Errorf("%s: %s", caRefKey(ca), problem)
	}
	return data, nil
}

func (r *Reconciler) credentials(ctx context.Context, ns, name string) (userdata.Access, error) {
	user, err := r.secretKey(ctx, ns, name, corev1.BasicAuthUsernameKey)
	if err != nil {
		return userdata.Access{}, err
	}
	password, err := r.secretKey(ctx, ns, name, corev1.BasicAuthPasswordKey)
	if err != nil {
		return userdata.Access{}, err
	}
	if len(user) == 0 || strings.ContainsAny(string(user), "\r\n") || strings.ContainsAny(string(password), "\r\n") {
		return userdata.Access{}, fmt.Errorf("the Secret %s/%s: username must be set and neither key may hold a line break", ns, name)
	}
	return userdata.Access{Username: string(user), Password: string(password)}, nil
}

// secretKey reads a key of a Secret the config names; a Secret capwin holds as a hypervisor login
// is refused, so its password never reaches a node.
func (r *Reconciler) secretKey(ctx context.Context, ns, name, key string) ([]byte, error) {
	sec := &corev1.Secret{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, sec); err != nil {
		return nil, fmt.Errorf("the Secret %s/%s: %w", ns, name, err)
	}
	if err := loginsecret.ForOtherUse(sec, "node data (files, registry or domain credentials)"); err != nil {
		return nil, err
	}
	v, ok := sec.Data[key]
	if !ok {
		return nil, fmt.Errorf("the Secret %s/%s has no key %q", ns, name, key)
	}
	return v, nil
}

// registries maps the spec's registries to the renderer's model with the resolved references.
func registries(regs []bootstrapv1.Registry, refs RegistryRefs) []userdata.Registry {
	var out []userdata.Registry
	for _, r := range regs {
		reg := userdata.Registry{Host: r.Host, Access: access(r.RegistryAccess, refs)}
		for _, m := range r.Mirrors {
			caps := make([]string, 0, len(m.Capabilities))
			for _, c := range m.Capabilities {
				caps = append(caps, string(c))
			}
			reg.Mirrors = append(reg.Mirrors, userdata.Mirror{URL: m.URL, Capabilities: caps, OverridePath: m.OverridePath, Access: access(m.RegistryAccess, refs)})
		}
		out = append(out, reg)
	}
	return out
}

func access(a bootstrapv1.RegistryAccess, refs RegistryRefs) userdata.Access {
	out := userdata.Access{InsecureSkipVerify: a.InsecureSkipVerify}
	if a.CA != nil {
		out.CA = a.CA.Content
		if out.CA == "" {
			out.CA = refs.CAs[caRefKey(a.CA)]
		}
	}
	if a.Credentials != nil {
		c := refs.Credentials[a.Credentials.Name]
		out.Username, out.Password = c.Username, c.Password
	}
	return out
}

// insecureEndpoints names the endpoints whose certificates are not verified.
func insecureEndpoints(regs []bootstrapv1.Registry) []string {
	var out []string
	names, list := accesses(regs)
	for i, a := range list {
		if a.InsecureSkipVerify {
			out = append(out, names[i])
		}
	}
	return out
}

// PlaceholderRefs stands for the references of spec.containerd.registries when there is no
// cluster to read them from (render's offline preview): each CA file and each credential gets a
// text that names where the node's value comes from, in the place the value goes.
func PlaceholderRefs(regs []bootstrapv1.Registry) RegistryRefs {
	return RefsWith(regs,
		func(ca *bootstrapv1.CABundle) string { return "<content of " + caRefName(ca) + ">\n" },
		func(secret string) userdata.Access {
			return userdata.Access{Username: "<username of Secret " + secret + ">", Password: "<password of Secret " + secret + ">"}
		})
}

// RefsWith fills every reference of regs without a cluster: each CA bundle that is a reference
// gets caOf's text and each credentials Secret accessOf's values.
func RefsWith(regs []bootstrapv1.Registry, caOf func(*bootstrapv1.CABundle) string, accessOf func(secret string) userdata.Access) RegistryRefs {
	refs := RegistryRefs{CAs: map[string]string{}, Credentials: map[string]userdata.Access{}}
	_, list := accesses(regs)
	for _, a := range list {
		if a.CA != nil && a.CA.Content == "" {
			refs.CAs[caRefKey(a.CA)] = caOf(a.CA)
		}
		if c := a.Credentials; c != nil {
			refs.Credentials[c.Name] = accessOf(c.Name)
		}
	}
	return refs
}
