package userdata

import (
	"testing"

	. "github.com/onsi/gomega"
)

// The document names each image as the kubelet would (docker.io/library/, :latest), and gives
// ctr the credentials of the image's registry, of its mirror, or of the _default mirrors.
func TestDocPrePull(t *testing.T) {
	g := NewWithT(t)
	regs := []Registry{
		{Host: "registry.corp.example", Access: Access{Username: "corp", Password: "p1"}},
		{Host: "mcr.microsoft.com", Mirrors: []Mirror{{URL: "https://mirror.corp.example", Access: Access{Username: "mirror", Password: "p2"}}}},
		{Host: "_default", Mirrors: []Mirror{{URL: "https://all.corp.example", Access: Access{Username: "all", Password: "p3"}}}},
	}
	doc, err := docPrePull(&PrePull{Images: []string{"registry.corp.example/iis/app:1.4", "mcr.microsoft.com/windows/servercore:ltsc2022", "busybox"},
		TimeoutSeconds: 900}, regs)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(doc).To(Equal(&DocPrePull{Ctr: `C:\Program Files\containerd\ctr.exe`, HostsDir: CertsDir, TimeoutSeconds: 900, Images: []DocImage{
		{Ref: "registry.corp.example/iis/app:1.4", User: "corp:p1"},
		{Ref: "mcr.microsoft.com/windows/servercore:ltsc2022", User: "mirror:p2"},
		{Ref: "docker.io/library/busybox:latest", User: "all:p3"},
	}}))
	doc, err = docPrePull(&PrePull{Images: []string{"busybox"}}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(doc.Images).To(Equal([]DocImage{{Ref: "docker.io/library/busybox:latest"}}))
	g.Expect(docPrePull(&PrePull{}, regs)).To(BeNil())
	_, err = docPrePull(&PrePull{Images: []string{"Not A Reference"}}, nil)
	g.Expect(err).To(MatchError(ContainSubstring(`image "Not A Reference"`)))
}
