package userdata

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/capwin/capwin/internal/guestos"
)

// FuzzRender feeds arbitrary values into every field that reaches the guest and checks that
// (1) the code around the one data literal is byte-identical to the static script, (2) the
// literal holds only base64 characters, so no value can end it, and (3) every value comes back
// unchanged from the data document or the cloud-config part (the kubelet patch included), while
// the network step's source stays the infrastructure provider's, whatever the input.
func FuzzRender(f *testing.F) {
	f.Add(false, "win-a1", "app", "iis", "content\n", "Write-Output 1", "http://proxy:3128", "UTC", "capi", "60")
	f.Add(true, "x'; Remove-Item C:\\ -Recurse #", "k", "v'\"`$()", "'@\n\"@\n", "'; exit 1 #", "http://a'b", "W. Europe Standard Time", "u", "--x=\"")
	f.Add(true, "\u00e9\r\n", "", "", "\x00\xff", "\u202e", "", "", "", "")
	f.Fuzz(func(t *testing.T, cloudConfigFormat bool, nodeName, labelKey, labelValue, content, command, proxyURL, timezone, user, argValue string) {
		in := minimalInput(FormatPowerShell)
		if cloudConfigFormat {
			in.Format = FormatCloudConfig
		}
		in.NodeName = nodeName
		in.Labels = map[string]string{labelKey: labelValue}
		in.Files = []File{{Path: `C:\k\fuzz.txt`, Content: content}, {Path: `C:\k\fuzz-append.txt`, Content: content, Append: true}}
		in.PreJoinCommands = []string{command}
		in.Proxy.HTTPProxy = proxyURL
		in.Taints = []Taint{{Key: labelKey, Value: labelValue, Effect: "NoSchedule"}}
		in.Binaries.Kubelet = &Download{URL: proxyURL, SHA256: strings.Repeat("a", 64)}
		in.Timezone = timezone
		in.Users = []User{{Name: user, SSHAuthorizedKeys: []string{argValue}}}
		in.KubeletExtraArgs = []Arg{{Name: "max-pods", Value: argValue}}
		in.Disks = []Disk{{LUN: 1, Label: labelValue, MountPath: `C:\data`}}
		in.Domain = &Domain{Name: "corp.example.com", OrganizationalUnit: labelValue, Username: user, Password: argValue,
			Groups: []string{labelValue, argValue}, AccountNotBefore: time.Unix(1764900000, 0)}
		in.KubeletConfiguration, _ = json.Marshal(map[string]any{"providerID": argValue, "featureGates": map[string]bool{labelKey: true}})
		in.Registries = []Registry{{Host: "registry.corp.example", Access: Access{Username: "robot", Password: argValue}}}
		in.PrePull = &PrePull{Images: []string{"registry.corp.example/iis/app:1.4"}, TimeoutSeconds: 600}
		out, err := Render(in)
		if err != nil {
			if strings.TrimSpace(command) == "" || strings.Contains(err.Error(), "not valid UTF-8") ||
				strings.Contains(err.Error(), "non-printable character") {
				return // rejected with a clear error, as it must be
			}
			t.Fatalf("Render: %v", err)
		}
		u, err := Unpack(out)
		if err != nil {
			t.Fatalf("Unpack: %v", err)
		}
		literal := base64.StdEncoding.EncodeToString(u.Data)
		if want := scriptHeader + dataPrefix + literal + dataSuffix + bootstrapScript; string(u.Script) != want {
			t.Fatalf("the script differs from header + data line + static body")
		}
		doc, err := DecodeDocument(u.Data)
		if err != nil {
			t.Fatal(err)
		}
		checkRoundTrip(t, doc, &in, content, command)
		if p := doc.PrePull; p == nil || len(p.Images) != 1 || p.Images[0].User != "robot:"+argValue {
			t.Fatalf("the pre-pull's credentials came back as %+v", doc.PrePull)
		}
		checkKubeletPatch(t, in.KubeletConfiguration, nodeFiles(t, u, doc)[KubeletPatchPath])
		if (timezone != "") != (doc.Time != nil) || doc.Time != nil && doc.Time.Timezone != timezone {
			t.Fatalf("time zone %q came back as %+v", timezone, doc.Time)
		}
		if cloudConfigFormat {
			checkCloudConfig(t, u.CloudConfig, content, user)
		}
	})
}

func checkRoundTrip(t *testing.T, doc *Document, in *Input, content, command string) {
	t.Helper()
	if want := (NetworkSource{GuestinfoKey: guestos.NetworkGuestinfoKey, VolumeLabel: guestos.ConfigDriveLabel, File: guestos.NetworkFile}); doc.NetworkSource != want {
		t.Fatalf("network source %+v, want the infrastructure provider's %+v whatever the input", doc.NetworkSource, want)
	}
	if doc.NodeName != in.NodeName {
		t.Fatalf("node name %q came back as %q", in.NodeName, doc.NodeName)
	}
	appended := doc.Files[0]
	for _, f := range doc.Files {
		if f.Append {
			appended = f
		}
	}
	if got, _ := base64.StdEncoding.DecodeString(appended.Content); !bytes.Equal(got, []byte(content)) {
		t.Fatalf("file content changed: %q -> %q", content, got)
	}
	if got, _ := base64.StdEncoding.DecodeString(doc.PreJoin[0].Content); string(got) != "\uFEFF"+command {
		t.Fatalf("command changed: %q -> %q", command, got)
	}
	if in.Proxy.HTTPProxy != "" && doc.Proxy.HTTPProxy != in.Proxy.HTTPProxy {
		t.Fatalf("proxy changed: %q -> %q", in.Proxy.HTTPProxy, doc.Proxy.HTTPProxy)
	}
	if d := doc.Downloads[0]; d.URL != in.Binaries.Kubelet.URL {
		t.Fatalf("download URL changed: %q -> %q", in.Binaries.Kubelet.URL, d.URL)
	}
	if len(doc.Disks) != 1 || doc.Disks[0].Label != in.Disks[0].Label {
		t.Fatalf("disk label changed: %q -> %+v", in.Disks[0].Label, doc.Disks)
	}
	if d := doc.Domain; d == nil || d.Username != in.Domain.Username || d.Password != in.Domain.Password || d.OrganizationalUnit != in.Domain.OrganizationalUnit ||
		!slices.Equal(d.Groups, in.Domain.Groups) || d.AccountNotBefore != "2025-12-05T02:00:00Z" {
		t.Fatalf("domain join changed: %+v -> %+v", in.Domain, doc.Domain)
	}
	if !strings.Contains(doc.Join.Config, "effect: NoSchedule") {
		t.Fatalf("taint missing from the JoinConfiguration")
	}
	if want := "--max-pods=" + in.KubeletExtraArgs[0].Value; doc.Kubelet.Args[len(doc.Kubelet.Args)-1] != want {
		t.Fatalf("kubelet arg changed: want %q, got %q", want, doc.Kubelet.Args[len(doc.Kubelet.Args)-1])
	}
}

func checkCloudConfig(t *testing.T, part []byte, content, user string) {
	t.Helper()
	var cc cloudConfigDoc
	if err := yaml.Unmarshal(bytes.TrimPrefix(part, []byte("#cloud-config\n")), &cc); err != nil {
		t.Fatalf("cloud-config does not parse: %v", err)
	}
	if got, _ := base64.StdEncoding.DecodeString(cc.WriteFiles[0].Content); !bytes.Equal(got, []byte(content)) {
		t.Fatalf("write_files content changed")
	}
	if cc.Users[0].Name != user {
		t.Fatalf("cloud-config user changed: %q -> %q", user, cc.Users[0].Name)
	}
}

// checkKubeletPatch: every field of the user's patch reaches the node's patch file unchanged.
func checkKubeletPatch(t *testing.T, user []byte, file string) {
	t.Helper()
	var want, got map[string]json.RawMessage
	if err := json.Unmarshal(user, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(file), &got); err != nil {
		t.Fatalf("kubelet patch %q: %v", file, err)
	}
	for k, v := range want {
		if string(got[k]) != string(v) {
			t.Fatalf("kubelet patch field %s changed: %s -> %s", k, v, got[k])
		}
	}
}
