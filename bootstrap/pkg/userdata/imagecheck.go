package userdata

import (
	_ "embed"
	"encoding/json"
	"fmt"
)

//go:embed ps/imagecheck.ps1
var imageCheckBody string

// KindImageCheck marks the data document of the image check's script.
const KindImageCheck = "image-check"

// ImageCheck is the data document of `render image-check`'s script: what the image is compared
// against. The script joins nothing; it reports one step, ImageCheckStep, through Status.
type ImageCheck struct {
	Kind   string `json:"kind"`
	Status Status `json:"status"`
	// KubernetesVersion is the kubelet.exe version the image must carry ("" compares nothing).
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
	BinariesDirectory string `json:"binariesDirectory"`
	MinimumBuild      int    `json:"minimumBuild"`
	// MinimumCloudbaseInit is the oldest cloudbase-init that applies capwin's network metadata.
	MinimumCloudbaseInit string `json:"minimumCloudbaseInit"`
	// MetadataService is the cloudbase-init service the hypervisor's delivery needs
	// (VMwareGuestInfoService, NoCloudConfigDriveService).
	MetadataService string   `json:"metadataService"`
	Features        []string `json:"features"`
	VMwareTools     bool     `json:"vmwareTools"`
	MinimumFreeGiB  int      `json:"minimumFreeGiB"`
}

// ImageCheckStep is the step the image check reports.
const ImageCheckStep = "image-check"

// Metadata services of the hypervisors' deliveries.
const (
	MetadataServiceVSphere = "VMwareGuestInfoService"
	MetadataServiceHyperV  = "NoCloudConfigDriveService"
)

// NewImageCheck is the image check for a node of kubernetesVersion on vSphere (vsphere true) or
// Hyper-V, with capwin's defaults: Windows Server 2022 or later, cloudbase-init 1.1.5 or later,
// the Containers feature, kubelet.exe and kubeadm.exe in C:\k, 20 GiB free.
func NewImageCheck(kubernetesVersion string, vsphere bool) ImageCheck {
	c := ImageCheck{
		Kind: KindImageCheck,
		Status: Status{GuestinfoKey: StatusGuestinfoKey, KVPKey: StatusKVPKey, KVPValue: StatusKVPValue,
			MaxBytes: StatusMaxBytes},
		KubernetesVersion: kubernetesVersion, BinariesDirectory: `C:\k`,
		MinimumBuild: MinimumBuild, MinimumCloudbaseInit: "1.1.5", MetadataService: MetadataServiceHyperV,
		Features: []string{"Containers"}, MinimumFreeGiB: 20,
	}
	if vsphere {
		c.MetadataService, c.VMwareTools = MetadataServiceVSphere, true
	}
	return c
}

// ImageCheckScript renders the image check as a #ps1_sysnative script: header, data line, the
// static imagecheck.ps1.
func ImageCheckScript(c ImageCheck) ([]byte, error) {
	out, err := dataScript(c, imageCheckBody)
	if err != nil {
		return nil, fmt.Errorf("marshal image check data: %w", err)
	}
	return out, nil
}

// DecodeImageCheck returns the image check of a data document, and false when the document is
// a node's bootstrap (or no image check).
func DecodeImageCheck(data []byte) (*ImageCheck, bool) {
	var c ImageCheck
	if err := json.Unmarshal(data, &c); err != nil || c.Kind != KindImageCheck {
		return nil, false
	}
	return &c, true
}
