package guest

import "fmt"

// Collect runs capwin's log collector (a rendered collect.ps1) as the guest would, from its disk
// and what it knows of itself (Journal.Collect).
func (g *Guest) Collect(script []byte) ([]byte, error) {
	return g.journal.Collect(script, g.cfg.Hostname, g.state())
}

// state is what the collector's Save-State records: the services, and HNS as hnsdiag lists it
// (the default nat network of the Containers feature; the CNI's own once the node joined).
func (g *Guest) state() map[string]string {
	g.mu.Lock()
	defer g.mu.Unlock()
	kubelet := "Stopped"
	if g.serving {
		kubelet = "Running"
	}
	hns := "Networks:\r\nName      Type\r\nnat       NAT\r\n"
	if g.nodeName != "" {
		hns += "vxlan0    Overlay\r\n"
	}
	return map[string]string{
		"services": fmt.Sprintf("Name        Status  StartType\r\ncontainerd  Running Automatic\r\nkubelet     %s Automatic\r\n", kubelet),
		"hnsdiag":  hns,
		"computer": fmt.Sprintf("Caption     : Microsoft Windows Server\r\nBuildNumber : %d\r\n", g.cfg.Build),
	}
}
