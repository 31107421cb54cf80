package wsman

import (
	"crypto/rand"
	"encoding/xml"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

const (
	nsSoap     = "http://www.w3.org/2003/05/soap-envelope"
	nsAddr     = "http://schemas.xmlsoap.org/ws/2004/08/addressing"
	nsTransfer = "http://schemas.xmlsoap.org/ws/2004/09/transfer"
	nsWsman    = "http://schemas.dmtf.org/wbem/wsman/1/wsman.xsd"
	nsMsft     = "http://schemas.microsoft.com/wbem/wsman/1/wsman.xsd"
	nsShell    = "http://schemas.microsoft.com/wbem/wsman/1/windows/shell"
	nsFault    = "http://schemas.microsoft.com/wbem/wsman/1/wsmanfault"

	actionCreate  = nsTransfer + "/Create"
	actionDelete  = nsTransfer + "/Delete"
	actionCommand = nsShell + "/Command"
	actionSend    = nsShell + "/Send"
	actionReceive = nsShell + "/Receive"
	actionSignal  = nsShell + "/Signal"
	actionFault   = "http://schemas.dmtf.org/wbem/wsman/1/wsman/fault"

	resourceCmd  = nsShell + "/cmd"
	stateDone    = nsShell + "/CommandState/Done"
	stateRunning = nsShell + "/CommandState/Running"
	anonymous    = nsAddr + "/role/anonymous"
)

// envelope is the part of a request envelope the server reads.
type envelope struct {
	XMLName xml.Name `xml:"http://www.w3.org/2003/05/soap-envelope Envelope"`
	Header  struct {
		Action      string `xml:"http://schemas.xmlsoap.org/ws/2004/08/addressing Action"`
		MessageID   string `xml:"http://schemas.xmlsoap.org/ws/2004/08/addressing MessageID"`
		ResourceURI string `xml:"http://schemas.dmtf.org/wbem/wsman/1/wsman.xsd ResourceURI"`
		Timeout     string `xml:"http://schemas.dmtf.org/wbem/wsman/1/wsman.xsd OperationTimeout"`
		SelectorSet struct {
			Selectors []struct {
				Name  string `xml:"Name,attr"`
				Value string `xml:",chardata"`
			} `xml:"http://schemas.dmtf.org/wbem/wsman/1/wsman.xsd Selector"`
		} `xml:"http://schemas.dmtf.org/wbem/wsman/1/wsman.xsd SelectorSet"`
	} `xml:"http://www.w3.org/2003/05/soap-envelope Header"`
	Body struct {
		CommandLine *struct {
			Command   string   `xml:"http://schemas.microsoft.com/wbem/wsman/1/windows/shell Command"`
			Arguments []string `xml:"http://schemas.microsoft.com/wbem/wsman/1/windows/shell Arguments"`
		} `xml:"http://schemas.microsoft.com/wbem/wsman/1/windows/shell CommandLine"`
		Send *struct {
			Streams []struct {
				Name      string `xml:"Name,attr"`
				CommandID string `xml:"CommandId,attr"`
				End       string `xml:"End,attr"`
				Data      string `xml:",chardata"`
			} `xml:"http://schemas.microsoft.com/wbem/wsman/1/windows/shell Stream"`
		} `xml:"http://schemas.microsoft.com/wbem/wsman/1/windows/shell Send"`
		Receive *struct {
			DesiredStream struct {
				CommandID string `xml:"CommandId,attr"`
			} `xml:"http://schemas.microsoft.com/wbem/wsman/1/windows/shell DesiredStream"`
		} `xml:"http://schemas.microsoft.com/wbem/wsman/1/windows/shell Receive"`
		Signal *struct {
			CommandID string `xml:"CommandId,attr"`
			Code      string `xml:"http://schemas.microsoft.com/wbem/wsman/1/windows/shell Code"`
		} `xml:"http://schemas.microsoft.com/wbem/wsman/1/windows/shell Signal"`
	} `xml:"http://www.w3.org/2003/05/soap-envelope Body"`
}

// shellID is the ShellId selector of the request.
func (e *envelope) shellID() string {
	for _, s := range e.Header.SelectorSet.Selectors {
		if s.Name == "ShellId" {
			return strings.TrimSpace(s.Value)
		}
	}
	return ""
}

// operationTimeout returns the w:OperationTimeout of the request, an
// xs:duration such as PT60S, or def if it is missing, invalid or longer.
func (e *envelope) operationTimeout(def time.Duration) time.Duration {
	rest, ok := strings.CutPrefix(strings.TrimSpace(e.Header.Timeout), "PT")
	if !ok || rest == "" {
		return def
	}
	var d time.Duration
	for rest != "" {
		i := strings.IndexAny(rest, "HMS")
		if i <= 0 {
			return def
		}
		n, err := strconv.ParseFloat(rest[:i], 64)
		if err != nil || n < 0 {
			return def
		}
		unit := time.Second
		switch rest[i] {
		case 'H':
			unit = time.Hour
		case 'M':
			unit = time.Minute
		}
		d += time.Duration(n * float64(unit))
		rest = rest[i+1:]
	}
	if d <= 0 || d > def {
		return def
	}
	return d
}

// fault is a WS-Management SOAP fault.
type fault struct {
	code    string // SOAP 1.2 code: s:Sender or s:Receiver
	subcode string // e.g. w:TimedOut
	wsman   uint32 // WSManFault Code, a Windows error number
	text    string
}

func (f *fault) Error() string { return f.subcode + ": " + f.text }

func errTimedOut() *fault {
	return &fault{"s:Receiver", "w:TimedOut", 2150858793,
		"The WS-Management service cannot complete the operation within the time specified in OperationTimeout."}
}

func errShellNotFound(id string) *fault {
	return &fault{"s:Sender", "w:InvalidSelectors", 2150858843,
		"The request for the Windows Remote Shell with ShellId " + id + " failed because the shell was not found on the server."}
}

func errCommandNotFound(id string) *fault {
	return &fault{"s:Sender", "w:InvalidParameter", 2150859085,
		"The command with CommandId " + id + " was not found in the shell."}
}

func errInvalid(text string) *fault {
	return &fault{"s:Sender", "w:InvalidParameter", 2150858810, text}
}

// writeReply writes a SOAP envelope with status 200.
func writeReply(w http.ResponseWriter, action, relatesTo, body string) {
	writeEnvelope(w, http.StatusOK, action, relatesTo, body)
}

// writeFault writes f as WinRM does: HTTP 500 with a SOAP fault body.
func writeFault(w http.ResponseWriter, relatesTo string, f *fault) {
	body := `<s:Fault><s:Code><s:Value>` + f.code + `</s:Value><s:Subcode><s:Value>` + f.subcode +
		`</s:Value></s:Subcode></s:Code><s:Reason><s:Text xml:lang="en-US">` + esc(f.text) +
		`</s:Text></s:Reason><s:Detail><f:WSManFault xmlns:f="` + nsFault + `" Code="` +
		strconv.FormatUint(uint64(f.wsman), 10) + `" Machine="127.0.0.1"><f:Message>` + esc(f.text) +
		`</f:Message></f:WSManFault></s:Detail></s:Fault>`
	writeEnvelope(w, http.StatusInternalServerError, actionFault, relatesTo, body)
}

func writeEnvelope(w http.ResponseWriter, status int, action, relatesTo, body string) {
	var b strings.Builder
	b.Grow(len(body) + 1024)
	b.WriteString(`<s:Envelope xml:lang="en-US" xmlns:s="` + nsSoap + `" xmlns:a="` + nsAddr +
		`" xmlns:x="` + nsTransfer + `" xmlns:w="` + nsWsman + `" xmlns:rsp="` + nsShell +
		`" xmlns:p="` + nsMsft + `"><s:Header><a:Action>` + action + `</a:Action><a:MessageID>` +
		newID("uuid:") + `</a:MessageID><a:To>` + anonymous + `</a:To>`)
	if relatesTo != "" {
		b.WriteString(`<a:RelatesTo>` + esc(relatesTo) + `</a:RelatesTo>`)
	}
	b.WriteString(`</s:Header><s:Body>` + body + `</s:Body></s:Envelope>`)
	w.Header().Set("Content-Type", "application/soap+xml;charset=UTF-8")
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

// esc escapes s for XML text and attribute values.
func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// newID returns prefix and a random upper-case UUID, as Windows uses.
func newID(prefix string) string {
	var u [16]byte
	_, _ = rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%s%X-%X-%X-%X-%X", prefix, u[0:4], u[4:6], u[6:8], u[8:10], u[10:])
}
