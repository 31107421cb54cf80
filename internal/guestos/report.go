// Package guestos is what a capwin guest (Windows or Linux) and its managers agree on: the
// bootstrap status report the guest's script writes to guestinfo / Hyper-V KVP, its steps, and
// the node name the guest registers with. The bootstrap provider writes it (bootstrap.ps1), the
// infrastructure provider and the diagnostics command read it; neither reaches into the other.
package guestos

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// MaxReportBytes bounds what is read from the guest's status value; the bootstrap script writes
// at most 1024 bytes (the Hyper-V KVP item limit).
const MaxReportBytes = 4096

// Report states the bootstrap script writes.
const (
	ReportRunning   = "Running"
	ReportRebooting = "Rebooting"
	ReportFailed    = "Failed"
	ReportSucceeded = "Succeeded"
)

// BootstrapSteps are bootstrap.ps1's steps in the order it runs them (its $Steps table).
var BootstrapSteps = []string{
	"preflight", "network", "proxy", "time", "domain", "domainGroups", "users", "features", "downloads", "disks", "containerd",
	"firewall", "defender", "prePull", "files", "preJoin", "kubelet", "join", "postJoin", "finish",
}

// StepIndex is the position of a step in BootstrapSteps, -1 for a name the script does not have.
func StepIndex(step string) int {
	for i, s := range BootstrapSteps {
		if s == step {
			return i
		}
	}
	return -1
}

// ParseReport decodes the JSON status the bootstrap script writes to guestinfo / KVP. The guest is
// not trusted: size, encoding and the state value are checked.
func ParseReport(raw string) (infrav1.BootstrapStatus, error) {
	var r struct {
		Step    string `json:"step"`
		State   string `json:"state"`
		Message string `json:"message"`
		LogTail string `json:"logTail"`
	}
	if len(raw) > MaxReportBytes || !utf8.ValidString(raw) {
		return infrav1.BootstrapStatus{}, fmt.Errorf("guest status report is larger than %d bytes or not UTF-8", MaxReportBytes)
	}
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		return infrav1.BootstrapStatus{}, fmt.Errorf("guest status report is not JSON: %w", err)
	}
	switch r.State {
	case ReportRunning, ReportRebooting, ReportFailed, ReportSucceeded:
	default:
		return infrav1.BootstrapStatus{}, fmt.Errorf("guest status report has unknown state %q", r.State)
	}
	return infrav1.BootstrapStatus{
		Step: clip(r.Step, 64), State: r.State, Message: clip(r.Message, 1024), LogTail: clip(r.LogTail, 1024),
	}, nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// NodeName is the Kubernetes node name a machine's guest registers with: kubeadm on Windows
// uses the lowercased computer name; Linux guests use their hostname.
func NodeName(computerName string) string { return strings.ToLower(computerName) }
