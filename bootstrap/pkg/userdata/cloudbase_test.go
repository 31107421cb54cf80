package userdata

import (
	"bytes"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"
)

// TestCloudConfigFormatBehavesAsDocumented: two cloud-config keys of cloudbase-init do not do
// what the API documents. set_timezone accepts only IANA names (it failed on
// "W. Europe Standard Time" with "The given timezone name is unrecognised"), and the users
// plugin writes every SSH key to <home>\.ssh\authorized_keys, which Windows OpenSSH ignores for
// members of Administrators. The script does both in this format as in the PowerShell one.
func TestCloudConfigFormatBehavesAsDocumented(t *testing.T) {
	g := NewWithT(t)
	in := fullInput(FormatCloudConfig)
	in.Timezone = "W. Europe Standard Time"
	in.Users = append(in.Users, User{Name: "ops", SSHAuthorizedKeys: []string{"ssh-ed25519 BBBB ops@example"}})
	u, doc := render(t, in)

	var cc map[string]any
	g.Expect(yaml.Unmarshal(bytes.TrimPrefix(u.CloudConfig, []byte("#cloud-config\n")), &cc)).To(Succeed())
	g.Expect(cc).NotTo(HaveKey("set_timezone"))
	g.Expect(cc).NotTo(HaveKey("timezone"))
	g.Expect(cc).To(HaveKey("users"))

	g.Expect(doc.Time).To(Equal(&DocTime{Timezone: "W. Europe Standard Time", NTPServers: []string{"time.windows.com"}}))
	// Only members of Administrators: the other user's key stays in its own home.
	g.Expect(doc.AdminKeys).To(Equal([]string{"ssh-ed25519 AAAA capi@example"}))
	g.Expect(doc.Users).To(BeNil(), "cloudbase-init creates the users in this format")
}
