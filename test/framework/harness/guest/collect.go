package guest

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	guestmeta "github.com/capwin/capwin/infrastructure/pkg/guest"
)

// CloudbaseInitLog is where cloudbase-init logs; the simulated image's cloudbase-init writes it at
// boot.
const CloudbaseInitLog = `C:\Program Files\Cloudbase Solutions\Cloudbase-Init\log\cloudbase-init.log`

// Event is one entry of a Windows event log, as collect.ps1 writes it (Get-WinEvent's fields).
type Event struct {
	TimeCreated      time.Time
	ID               int `json:"Id"`
	LevelDisplayName string
	ProviderName     string
	Message          string
}

// event adds an entry to one of the guest's event logs (System, Application).
func (g *Guest) event(log, provider string, id int, level, message string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.events == nil {
		g.events = map[string][]Event{}
	}
	g.events[log] = append(g.events[log], Event{TimeCreated: time.Now().UTC(), ID: id, LevelDisplayName: level, ProviderName: provider, Message: message})
}

// cloudbaseInit is what the image's cloudbase-init leaves at boot: its log, and an event when the
// user data did not run (a broken image: Faults.NeverJoin).
func (g *Guest) cloudbaseInit() {
	g.event("System", "EventLog", 6005, "Information", "The Event log service was started.")
	line := func(level, text string) []byte {
		return []byte(time.Now().UTC().Format("2006-01-02 15:04:05.000") + " 1840 " + level + " " + text + "\r\n")
	}
	g.fs.appendTo(CloudbaseInitLog, line("INFO", "cloudbaseinit.init [-] Executing plugin 'UserDataPlugin'"))
	if g.cfg.Faults.NeverJoin {
		msg := "cloudbaseinit.plugins.common.userdata [-] Executing user data failed: the user data script could not be run"
		g.fs.appendTo(CloudbaseInitLog, line("ERROR", msg))
		g.event("Application", "cloudbase-init", 1, "Error", msg)
		return
	}
	g.fs.appendTo(CloudbaseInitLog, line("INFO", "cloudbaseinit.plugins.common.userdata [-] Executing user data script"))
}

// Collect runs capwin's log collector (a rendered collect.ps1) as the guest would, from its disk
// and what it knows of itself, and returns the zip the script leaves at its document's output:
// files/<path> (the end of each file), events/<log>.json, state/*.txt and collect.log.
func (g *Guest) Collect(script []byte) ([]byte, error) {
	doc, err := guestmeta.ParseCollect(script)
	if err != nil {
		return nil, err
	}
	for keep := doc.MaxFileBytes; ; keep /= 2 {
		out, err := g.collectOnce(doc, keep)
		if err != nil || int64(len(out)) <= doc.MaxArchiveBytes || keep <= 4096 {
			return out, err
		}
	}
}

func (g *Guest) collectOnce(doc guestmeta.Collect, keep int64) ([]byte, error) {
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	notes := []string{"collecting on " + strings.ToUpper(g.cfg.Hostname)}
	add := func(name string, data []byte) error {
		w, err := z.Create(name)
		if err == nil {
			_, err = w.Write(data)
		}
		return err
	}
	var paths []string
	for _, dir := range doc.Directories {
		found := g.fs.walk(dir)
		if len(found) == 0 {
			notes = append(notes, "no folder "+dir)
		}
		paths = append(paths, found...)
	}
	for _, f := range doc.Files {
		if !g.fs.exists(f) {
			notes = append(notes, "no file "+f)
			continue
		}
		paths = append(paths, f)
	}
	for _, p := range paths {
		data, _ := g.fs.read(p)
		if int64(len(data)) > keep {
			data = data[int64(len(data))-keep:]
		}
		if err := add(guestmeta.ArchiveName(g.fs.original(p)), data); err != nil {
			return nil, err
		}
	}
	for name, text := range g.state() {
		if err := add("state/"+name+".txt", []byte(text)); err != nil {
			return nil, err
		}
	}
	g.mu.Lock()
	events := map[string][]Event{}
	for _, log := range doc.EventLogs {
		list := g.events[log]
		events[log] = append([]Event{}, list[max0(len(list)-doc.MaxEvents):]...)
	}
	g.mu.Unlock()
	for log, list := range events {
		data, err := json.MarshalIndent(list, "", "  ")
		if err != nil {
			return nil, err
		}
		if err := add("events/"+log+".json", data); err != nil {
			return nil, err
		}
	}
	if err := add("collect.log", []byte(strings.Join(notes, "\r\n"))); err != nil {
		return nil, err
	}
	if err := z.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func max0(n int) int { return max(n, 0) }

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
