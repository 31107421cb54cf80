package userdata

import (
	"fmt"

	"github.com/distribution/reference"
)

// PrePull is the images pulled before the join, within TimeoutSeconds together.
type PrePull struct {
	Images         []string
	TimeoutSeconds int
}

// DocPrePull tells the prePull step what to pull and how: containerd's ctr in the namespace the
// kubelet's images live in (k8s.io), through the registry folders of the config (mirrors, CAs).
type DocPrePull struct {
	Ctr            string     `json:"ctr"`
	HostsDir       string     `json:"hostsDir"`
	TimeoutSeconds int        `json:"timeoutSeconds"`
	Images         []DocImage `json:"images"`
}

// DocImage is one image to pull; User is "username:password" for ctr's --user when the
// registry (or its first mirror with credentials) has credentials in containerd.registries.
type DocImage struct {
	Ref  string `json:"ref"`
	User string `json:"user,omitempty"`
}

// docPrePull maps the images to the step's document (nil for none); each reference is normalized
// as the kubelet does (docker.io/library/ for short names).
func docPrePull(p *PrePull, regs []Registry) (*DocPrePull, error) {
	if p == nil || len(p.Images) == 0 {
		return nil, nil
	}
	doc := &DocPrePull{Ctr: containerDir + `\ctr.exe`, HostsDir: CertsDir, TimeoutSeconds: p.TimeoutSeconds}
	for _, image := range p.Images {
		named, err := reference.ParseNormalizedNamed(image)
		if err != nil {
			return nil, fmt.Errorf("image %q: %w", image, err)
		}
		named = reference.TagNameOnly(named)
		doc.Images = append(doc.Images, DocImage{Ref: named.String(), User: pullUser(reference.Domain(named), regs)})
	}
	return doc, nil
}

// pullUser is the credentials ctr sends for an image of host: the registry's own, else those of
// its first mirror that has some, else those of the _default registry's mirrors (ctr sends one
// --user to every host it tries).
func pullUser(host string, regs []Registry) string {
	for _, want := range []string{host, "_default"} {
		for _, r := range regs {
			if r.Host != want {
				continue
			}
			if r.Access.Username != "" {
				return r.Access.Username + ":" + r.Access.Password
			}
			for _, m := range r.Mirrors {
				if m.Access.Username != "" {
					return m.Access.Username + ":" + m.Access.Password
				}
			}
		}
	}
	return ""
}
