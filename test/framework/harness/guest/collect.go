package guest

import "fmt"

// Collect runs capwin's log collector (a rendered collect.ps1) as the guest would, from its disk
// and what it knows of itself (Journal.Collect).
func (g *Guest) Collect(script []byte) ([]byte, error) {
	g.mu.Lock()
	state := SavedState(int(g.cfg.Build), g.serving, g.nodeName != "")
	g.mu.Unlock()
	return g.journal.Collect(script, g.cfg.Hostname, state)
}

// SavedState is what the collector's Save-State records of a simulated guest of that Windows
// build: the services (the kubelet running or stopped), and HNS as hnsdiag lists it (the default
// nat network of the Containers feature; the CNI's overlay network once the node joined).
func SavedState(build int, kubeletRunning, joined bool) map[string]string {
	kubelet := "Stopped"
	if kubeletRunning {
		kubelet = "Running"
	}
	hns := "Networks:\r\nName      Type\r\nnat       NAT\r\n"
	if joined {
		hns += "vxlan0    Overlay\r\n"
	}
	return map[string]string{
		"services": fmt.Sprintf("Name        Status  StartType\r\ncontainerd  Running Automatic\r\nkubelet     %s Automatic\r\n", kubelet),
		"hnsdiag":  hns,
		"computer": fmt.Sprintf("Caption     : Microsoft Windows Server\r\nBuildNumber : %d\r\n", build),
	}
}
