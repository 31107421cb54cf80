package wsman

import (
	"context"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"net/http"
	"strconv"
)

// dispatch runs the WS-Man action of one authenticated request.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request, user string, data []byte) {
	var env envelope
	if err := xml.Unmarshal(data, &env); err != nil {
		writeFault(w, "", errInvalid("malformed SOAP envelope: "+err.Error()))
		return
	}
	action := env.Header.Action
	var body string
	var err error
	switch action {
	case actionCreate:
		body, err = s.createShell(&env, user)
	case actionDelete:
		err = s.deleteShell(&env, user)
	case actionCommand:
		body, err = s.runCommand(&env, user)
	case actionSend:
		body, err = s.send(&env, user)
	case actionReceive:
		body, err = s.receiveOutput(r.Context(), &env, user)
	case actionSignal:
		body, err = s.signal(&env, user)
	default:
		err = &fault{"s:Sender", "a:ActionNotSupported", 2150858753, "The action " + action + " is not supported."}
	}
	var f *fault
	switch {
	case err == nil:
		writeReply(w, action+"Response", env.Header.MessageID, body)
	case errors.As(err, &f):
		writeFault(w, env.Header.MessageID, f)
	default:
		// The client went away; nothing to answer.
	}
}

func (s *Server) createShell(env *envelope, user string) (string, error) {
	if env.Header.ResourceURI != resourceCmd {
		return "", &fault{"s:Sender", "w:DestinationUnreachable", 2150858811,
			"The resource URI " + env.Header.ResourceURI + " is not supported; only " + resourceCmd + "."}
	}
	sh := &shell{id: newID(""), owner: user, cmds: map[string]*command{}}
	s.mu.Lock()
	s.shells[sh.id] = sh
	s.mu.Unlock()
	s.shellCount.Add(1)
	return `<x:ResourceCreated><a:Address>` + s.URL.String() + `</a:Address><a:ReferenceParameters>` +
		`<w:ResourceURI>` + resourceCmd + `</w:ResourceURI><w:SelectorSet><w:Selector Name="ShellId">` +
		sh.id + `</w:Selector></w:SelectorSet></a:ReferenceParameters></x:ResourceCreated>` +
		`<rsp:Shell><rsp:ShellId>` + sh.id + `</rsp:ShellId><rsp:ResourceUri>` + resourceCmd +
		`</rsp:ResourceUri><rsp:Owner>` + esc(user) + `</rsp:Owner><rsp:InputStreams>stdin</rsp:InputStreams>` +
		`<rsp:OutputStreams>stdout stderr</rsp:OutputStreams></rsp:Shell>`, nil
}

func (s *Server) deleteShell(env *envelope, user string) error {
	id := env.shellID()
	s.mu.Lock()
	sh, ok := s.shells[id]
	if ok && sh.owner == user {
		delete(s.shells, id)
	}
	s.mu.Unlock()
	if !ok || sh.owner != user {
		return errShellNotFound(id)
	}
	for _, c := range sh.cmds {
		c.terminate()
	}
	return nil
}

func (s *Server) runCommand(env *envelope, user string) (string, error) {
	line := env.Body.CommandLine
	if line == nil {
		return "", errInvalid("the Command request has no CommandLine")
	}
	c := newCommand(Request{User: user, Command: line.Command, Arguments: line.Arguments})
	id := env.shellID()
	s.mu.Lock()
	sh, ok := s.shells[id]
	if ok && sh.owner == user {
		sh.cmds[c.id] = c
	}
	s.mu.Unlock()
	if !ok || sh.owner != user {
		return "", errShellNotFound(id)
	}
	return `<rsp:CommandResponse><rsp:CommandId>` + c.id + `</rsp:CommandId></rsp:CommandResponse>`, nil
}

// command finds a command of one of user's shells.
func (s *Server) command(env *envelope, user, id string) (*command, error) {
	shellID := env.shellID()
	s.mu.Lock()
	defer s.mu.Unlock()
	sh, ok := s.shells[shellID]
	if !ok || sh.owner != user {
		return nil, errShellNotFound(shellID)
	}
	c, ok := sh.cmds[id]
	if !ok {
		return nil, errCommandNotFound(id)
	}
	return c, nil
}

func (s *Server) send(env *envelope, user string) (string, error) {
	if env.Body.Send == nil {
		return "", errInvalid("the Send request has no Send element")
	}
	for _, st := range env.Body.Send.Streams {
		if st.Name != "stdin" {
			return "", errInvalid("unknown input stream " + st.Name)
		}
		c, err := s.command(env, user, st.CommandID)
		if err != nil {
			return "", err
		}
		data, err := base64.StdEncoding.DecodeString(st.Data)
		if err != nil {
			return "", errInvalid("stdin is not base64: " + err.Error())
		}
		end, err := c.addStdin(data, st.End == "true")
		if err != nil {
			return "", err
		}
		if end {
			s.start(c, false)
		}
	}
	return `<rsp:SendResponse/>`, nil
}

func (s *Server) receiveOutput(ctx context.Context, env *envelope, user string) (string, error) {
	if env.Body.Receive == nil {
		return "", errInvalid("the Receive request has no Receive element")
	}
	c, err := s.command(env, user, env.Body.Receive.DesiredStream.CommandID)
	if err != nil {
		return "", err
	}
	if err := s.receive(ctx, c, env.operationTimeout(s.opts.OperationTimeout)); err != nil {
		return "", err
	}
	stdout, stderr, last, exit := c.next()
	body := `<rsp:ReceiveResponse>` + stream("stdout", c.id, stdout, last) + stream("stderr", c.id, stderr, last)
	if last {
		body += `<rsp:CommandState CommandId="` + c.id + `" State="` + stateDone + `"><rsp:ExitCode>` +
			strconv.Itoa(exit) + `</rsp:ExitCode></rsp:CommandState>`
	} else {
		body += `<rsp:CommandState CommandId="` + c.id + `" State="` + stateRunning + `"/>`
	}
	return body + `</rsp:ReceiveResponse>`, nil
}

// stream renders one output stream element; empty ones are left out
// unless they carry End.
func stream(name, id string, data []byte, end bool) string {
	if len(data) == 0 && !end {
		return ""
	}
	attrs := `Name="` + name + `" CommandId="` + id + `"`
	if end {
		attrs += ` End="true"`
	}
	return `<rsp:Stream ` + attrs + `>` + base64.StdEncoding.EncodeToString(data) + `</rsp:Stream>`
}

func (s *Server) signal(env *envelope, user string) (string, error) {
	if env.Body.Signal == nil {
		return "", errInvalid("the Signal request has no Signal element")
	}
	c, err := s.command(env, user, env.Body.Signal.CommandID)
	if err != nil {
		return "", err
	}
	// terminate and ctrl_c both end the command.
	c.terminate()
	return `<rsp:SignalResponse/>`, nil
}
