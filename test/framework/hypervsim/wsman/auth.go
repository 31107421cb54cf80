package wsman

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// connKey keys the per-connection state in request contexts.
type connKey struct{}

// connState is the state of one TCP connection. NTLM authenticates the
// connection, not single requests.
type connState struct {
	conn *conn // nil if not from the listener

	mu   sync.Mutex
	user string // user authenticated by NTLM on this connection
}

func (cs *connState) authenticated() string {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.user
}

func (cs *connState) setUser(user string) {
	cs.mu.Lock()
	cs.user = user
	cs.mu.Unlock()
}

// challenge is an NTLM server challenge waiting for its AUTHENTICATE.
type challenge struct {
	nonce  []byte
	conn   *connState // the connection the CHALLENGE was sent on
	issued time.Time
}

// challengeTTL is how long an unanswered challenge stays valid.
const challengeTTL = time.Minute

// authenticate returns the user of r, or answers 401 and returns false.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request, cs *connState) (string, bool) {
	if s.authFail.Load() {
		s.reject(w)
		return "", false
	}
	scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	switch strings.ToLower(scheme) {
	case "":
		if user := cs.authenticated(); user != "" {
			return user, true
		}
		unauthorized(w, "") // a first, anonymous try: not a failure
	case "basic":
		user, pass, ok := r.BasicAuth()
		if ok && s.checkPassword(user, pass) {
			return user, true
		}
		s.reject(w)
	case "negotiate", "ntlm":
		return s.ntlm(w, cs, scheme, strings.TrimSpace(token))
	default:
		s.reject(w)
	}
	return "", false
}

// ntlm runs one step of the NEGOTIATE, CHALLENGE, AUTHENTICATE exchange.
func (s *Server) ntlm(w http.ResponseWriter, cs *connState, scheme, token string) (string, bool) {
	msg, err := base64.StdEncoding.DecodeString(token)
	if err != nil {
		s.reject(w)
		return "", false
	}
	switch ntlmType(msg) {
	case ntlmNegotiate:
		nonce := make([]byte, 8)
		_, _ = rand.Read(nonce)
		cs.setUser("")
		if takeOne(&s.lose) {
			w.Header().Set("Connection", "close")
		} else {
			s.addChallenge(&challenge{nonce: nonce, conn: cs, issued: time.Now()})
		}
		unauthorized(w, scheme+" "+base64.StdEncoding.EncodeToString(challengeMessage(nonce, time.Now())))
		return "", false
	case ntlmAuthenticate:
		if user, ok := s.verify(cs, msg); ok {
			cs.setUser(user)
			return user, true
		}
	}
	s.reject(w)
	return "", false
}

// addChallenge records c. With StrictNTLM it replaces an earlier one of
// its connection; else that one stays valid, since its AUTHENTICATE may
// come on another connection.
func (s *Server) addChallenge(c *challenge) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.challenges = slices.DeleteFunc(s.challenges, func(o *challenge) bool {
		return (s.opts.StrictNTLM && o.conn == c.conn) || time.Since(o.issued) > challengeTTL
	})
	s.challenges = append(s.challenges, c)
}

// verify checks an AUTHENTICATE message against the challenge sent on
// cs and, unless StrictNTLM, against those sent on other connections:
// the masterzen client may send the legs of one exchange on different
// pooled connections. The matched challenge is used up.
func (s *Server) verify(cs *connState, msg []byte) (string, bool) {
	a, err := parseAuthenticate(msg)
	user := plainUser(a.user)
	pass, known := s.password(user)
	s.mu.Lock()
	defer s.mu.Unlock()
	var match *challenge
	if err == nil && known {
		for _, c := range s.candidates(cs) {
			if verifyNTLMv2(a, c.nonce, pass) {
				match = c
				break
			}
		}
	}
	s.challenges = slices.DeleteFunc(s.challenges, func(c *challenge) bool {
		return c == match || (s.opts.StrictNTLM && c.conn == cs) || time.Since(c.issued) > challengeTTL
	})
	return user, match != nil
}

// candidates lists the challenges an AUTHENTICATE on cs may answer, the
// one sent on cs first. s.mu is held.
func (s *Server) candidates(cs *connState) []*challenge {
	var own, other []*challenge
	for _, c := range s.challenges {
		switch {
		case time.Since(c.issued) > challengeTTL:
		case c.conn == cs:
			own = append(own, c)
		case !s.opts.StrictNTLM:
			other = append(other, c)
		}
	}
	return append(own, other...)
}

// handshaking reports whether a challenge sent on cs awaits its answer.
func (s *Server) handshaking(cs *connState) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.ContainsFunc(s.challenges, func(c *challenge) bool { return c.conn == cs })
}

// password finds user in Options.Users, exactly or else ignoring case as
// Windows does.
func (s *Server) password(user string) (string, bool) {
	if p, ok := s.opts.Users[user]; ok {
		return p, true
	}
	for n, p := range s.opts.Users {
		if strings.EqualFold(n, user) {
			return p, true
		}
	}
	return "", false
}

func (s *Server) checkPassword(user, pass string) bool {
	want, ok := s.password(user)
	return ok && subtle.ConstantTimeCompare([]byte(want), []byte(pass)) == 1
}

// reject answers 401 and counts an authentication failure.
func (s *Server) reject(w http.ResponseWriter) {
	s.authFailures.Add(1)
	unauthorized(w, "")
}

// unauthorized answers 401. With a challenge it offers only that, since
// the NTLM client reads the first Negotiate or Basic header it finds.
func unauthorized(w http.ResponseWriter, challenge string) {
	if challenge != "" {
		w.Header().Set("WWW-Authenticate", challenge)
	} else {
		w.Header().Add("WWW-Authenticate", "Negotiate")
		w.Header().Add("WWW-Authenticate", `Basic realm="WSMAN"`)
	}
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusUnauthorized)
}
