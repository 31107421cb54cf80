package guest

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"strings"
	"sync"
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

// Journal is what a guest leaves for capwin's log collector: its disk and its event logs. The
// harness's Guest keeps one; a simulator that runs guests its own way (the kind e2e's) keeps one
// per Windows guest and answers the collector with Collect.
type Journal struct {
	fs     *fileSystem
	mu     sync.Mutex
	events map[string][]Event // by event log (System, Application)
}

// NewJournal is the journal of a guest that has not booted yet.
func NewJournal() *Journal { return &Journal{fs: newFileSystem()} }

// Append adds data at the end of a file of the guest's disk (creating it).
func (j *Journal) Append(path string, data []byte) { j.fs.appendTo(path, data) }

// Line appends one line, stamped as Windows services stamp theirs, to a log file of the guest.
func (j *Journal) Line(path, text string) {
	j.Append(path, []byte(time.Now().UTC().Format("2006-01-02 15:04:05.000")+" "+text+"\r\n"))
}

// Event adds an entry to one of the guest's event logs (System, Application).
func (j *Journal) Event(log, provider string, id int, level, message string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.events == nil {
		j.events = map[string][]Event{}
	}
	j.events[log] = append(j.events[log], Event{TimeCreated: time.Now().UTC(), ID: id, LevelDisplayName: level, ProviderName: provider, Message: message})
}

// CloudbaseInit is what the image's cloudbase-init leaves at boot: its log, and an event when the
// user data did not run (userDataFails: a broken image).
func (j *Journal) CloudbaseInit(userDataFails bool) {
	j.Event("System", "EventLog", 6005, "Information", "The Event log service was started.")
	j.Line(CloudbaseInitLog, "1840 INFO cloudbaseinit.init [-] Executing plugin 'UserDataPlugin'")
	if userDataFails {
		msg := "cloudbaseinit.plugins.common.userdata [-] Executing user data failed: the user data script could not be run"
		j.Line(CloudbaseInitLog, "1840 ERROR "+msg)
		j.Event("Application", "cloudbase-init", 1, "Error", msg)
		return
	}
	j.Line(CloudbaseInitLog, "1840 INFO cloudbaseinit.plugins.common.userdata [-] Executing user data script")
}

// Collect runs capwin's log collector (a rendered collect.ps1) as the guest named hostname would,
// from the journal and state (Save-State's listings by name), and returns the zip the script
// leaves at its document's output: files/<path> (the end of each file), events/<log>.json,
// state/<name>.txt and collect.log.
func (j *Journal) Collect(script []byte, hostname string, state map[string]string) ([]byte, error) {
	doc, err := guestmeta.ParseCollect(script)
	if err != nil {
		return nil, err
	}
	for keep := doc.MaxFileBytes; ; keep /= 2 {
		out, err := j.collectOnce(doc, keep, hostname, state)
		if err != nil || int64(len(out)) <= doc.MaxArchiveBytes || keep <= 4096 {
			return out, err
		}
	}
}

func (j *Journal) collectOnce(doc guestmeta.Collect, keep int64, hostname string, state map[string]string) ([]byte, error) {
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	notes := []string{"collecting on " + strings.ToUpper(hostname)}
	add := func(name string, data []byte) error {
		w, err := z.Create(name)
		if err == nil {
			_, err = w.Write(data)
		}
		return err
	}
	var paths []string
	for _, dir := range doc.Directories {
		found := j.fs.walk(dir)
		if len(found) == 0 {
			notes = append(notes, "no folder "+dir)
		}
		paths = append(paths, found...)
	}
	for _, f := range doc.Files {
		if !j.fs.exists(f) {
			notes = append(notes, "no file "+f)
			continue
		}
		paths = append(paths, f)
	}
	for _, p := range paths {
		data, _ := j.fs.read(p)
		if int64(len(data)) > keep {
			data = data[int64(len(data))-keep:]
		}
		if err := add(guestmeta.ArchiveName(j.fs.original(p)), data); err != nil {
			return nil, err
		}
	}
	for name, text := range state {
		if err := add("state/"+name+".txt", []byte(text)); err != nil {
			return nil, err
		}
	}
	for log, list := range j.lastEvents(doc.EventLogs, doc.MaxEvents) {
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

// lastEvents are the newest n entries of each of the event logs.
func (j *Journal) lastEvents(logs []string, n int) map[string][]Event {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := map[string][]Event{}
	for _, log := range logs {
		list := j.events[log]
		out[log] = append([]Event{}, list[max(len(list)-n, 0):]...)
	}
	return out
}
