package guest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
)

// Image is what a simulated image has, as the image check (render image-check) lists it. The
// zero value is an image as image-builder or capwin's Packer recipe makes it: cloudbase-init
// 1.1.8 with the metadata service the check asks for, the features it asks for, containerd
// 2.4.2, kubelet.exe and kubeadm.exe of the version it asks for, VMware Tools, 60 GiB free.
type Image struct {
	CloudbaseInit   string   // "none": not installed; "": 1.1.8
	MetadataService string   // "": the one the check asks for
	MissingFeatures []string // Windows features the image lacks
	Kubelet         string   // kubelet.exe's version ("": the one the check asks for; "none": absent)
	FreeGiB         int      // 0: 60
}

// imageCheck is imagecheck.ps1 running instead of a bootstrap: one report, no join.
func (g *Guest) imageCheck(ctx context.Context, c *userdata.ImageCheck) error {
	r := ImageCheckReport(int(g.cfg.Build), g.cfg.Image, c)
	r.At = time.Now()
	data, _ := json.Marshal(r)
	for len(data) > c.Status.MaxBytes && r.LogTail != "" {
		r.LogTail = r.LogTail[:max(0, len(r.LogTail)-64)]
		data, _ = json.Marshal(r)
	}
	g.mu.Lock()
	g.reports = append(g.reports, r)
	g.mu.Unlock()
	if g.cfg.Channel == nil {
		return nil
	}
	return g.cfg.Channel.Status(ctx, c.Status, data)
}

// ImageCheckReport is the report imagecheck.ps1 sends on an image of build with img's contents
// (the kind e2e's guest simulator answers with it too).
func ImageCheckReport(build int, img Image, c *userdata.ImageCheck) Report {
	found := [][2]string{{"windows", fmt.Sprint(build)}}
	var lacks []string
	if build < c.MinimumBuild {
		lacks = append(lacks, fmt.Sprintf("Windows build %d or later (has %d)", c.MinimumBuild, build))
	}
	cbi := defaulted(img.CloudbaseInit, "1.1.8")
	if cbi == "none" {
		cbi = ""
	}
	found = append(found, [2]string{"cloudbase-init", cbi})
	if cbi == "" || versionLess(cbi, c.MinimumCloudbaseInit) {
		lacks = append(lacks, "cloudbase-init "+c.MinimumCloudbaseInit+" or later")
	}
	service := defaulted(img.MetadataService, c.MetadataService)
	found = append(found, [2]string{"metadata-services", service})
	if service != c.MetadataService {
		lacks = append(lacks, "cloudbase-init's "+c.MetadataService+" in metadata_services")
	}
	for _, f := range c.Features {
		state := "Installed"
		if slices.Contains(img.MissingFeatures, f) {
			state, lacks = "Available", append(lacks, "the Windows feature "+f)
		}
		found = append(found, [2]string{"feature-" + strings.ToLower(f), state})
	}
	found = append(found, [2]string{"containerd", "2.4.2"})
	kubelet := defaulted(img.Kubelet, strings.TrimPrefix(c.KubernetesVersion, "v"))
	if kubelet == "none" {
		kubelet = ""
	}
	found = append(found, [2]string{"kubelet", kubelet}, [2]string{"kubeadm", "true"})
	if c.KubernetesVersion != "" && "v"+kubelet != c.KubernetesVersion {
		lacks = append(lacks, "kubelet.exe "+c.KubernetesVersion+" in "+c.BinariesDirectory)
	}
	if c.VMwareTools {
		found = append(found, [2]string{"vmware-tools", "running"})
	}
	free := img.FreeGiB
	if free == 0 {
		free = 60
	}
	found = append(found, [2]string{"free-gib", fmt.Sprint(free)}, [2]string{"time-service", "running"})
	if free < c.MinimumFreeGiB {
		lacks = append(lacks, fmt.Sprintf("%d GiB free on C: (has %d)", c.MinimumFreeGiB, free))
	}
	r := Report{Step: userdata.ImageCheckStep, State: StateSucceeded, Message: "the image has what a capwin node needs"}
	if len(lacks) > 0 {
		r.State, r.Message = StateFailed, headChars("lacks: "+strings.Join(lacks, "; "), 256)
	}
	lines := make([]string, 0, len(found))
	for _, kv := range found {
		lines = append(lines, kv[0]+"="+kv[1])
	}
	r.LogTail = strings.Join(lines, "\n")
	return r
}

func defaulted(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// versionLess compares dotted numeric versions.
func versionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := range max(len(pa), len(pb)) {
		var x, y int
		if i < len(pa) {
			_, _ = fmt.Sscan(pa[i], &x)
		}
		if i < len(pb) {
			_, _ = fmt.Sscan(pb[i], &y)
		}
		if x != y {
			return x < y
		}
	}
	return false
}
