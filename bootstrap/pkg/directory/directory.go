// Package directory is the bootstrap manager's LDAP client for Active Directory: it finds a node's
// computer account, deletes it, and adds it to or removes it from groups. Every connection is
// encrypted (ldaps, or ldap upgraded with StartTLS) before the bind; every request is bounded by a
// timeout.
package directory

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	ber "github.com/go-asn1-ber/asn1-ber"
	"github.com/go-ldap/ldap/v3"
)

// Config is where and as whom to connect.
type Config struct {
	// URL is ldaps://HOST[:PORT] or ldap://HOST[:PORT] (StartTLS).
	URL string
	// CA is a PEM bundle that verifies the server (empty: the system roots).
	CA []byte
	// Username and Password are the simple bind's (DOMAIN\user or user@domain).
	Username, Password string
	// Timeout bounds the dial and every request (DefaultTimeout when zero).
	Timeout time.Duration
}

// DefaultTimeout bounds a dial and each request.
const DefaultTimeout = 15 * time.Second

// Account is a computer account.
type Account struct {
	DN       string
	GUID     string // objectGUID in its usual text form
	Created  time.Time
	MemberOf []string
}

// Conn is a bound connection.
type Conn struct{ c *ldap.Conn }

// Dial connects, encrypts the connection and binds.
func Dial(cfg Config) (*Conn, error) {
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "ldaps" && u.Scheme != "ldap") || u.Hostname() == "" {
		return nil, fmt.Errorf("directory url %q: want ldaps://HOST[:PORT] or ldap://HOST[:PORT]", cfg.URL)
	}
	if cfg.Username == "" || cfg.Password == "" {
		return nil, errors.New("directory credentials: username and password are required")
	}
	tlsConfig := &tls.Config{ServerName: u.Hostname(), MinVersion: tls.VersionTLS12}
	if len(cfg.CA) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(cfg.CA) {
			return nil, errors.New("directory ca: no PEM certificate in it")
		}
		tlsConfig.RootCAs = pool
	}
	c, err := ldap.DialURL(cfg.URL, ldap.DialWithDialer(&net.Dialer{Timeout: timeout}), ldap.DialWithTLSConfig(tlsConfig))
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", cfg.URL, unwrap(err))
	}
	c.SetTimeout(timeout)
	if u.Scheme == "ldap" {
		if err := c.StartTLS(tlsConfig); err != nil {
			_ = c.Close()
			return nil, fmt.Errorf("StartTLS with %s (no bind is sent without TLS): %w", cfg.URL, unwrap(err))
		}
	}
	if err := c.Bind(cfg.Username, cfg.Password); err != nil {
		_ = c.Close()
		if ldap.IsErrorWithCode(err, ldap.LDAPResultInvalidCredentials) {
			return nil, fmt.Errorf("bind as %s: the user name or password is wrong (LDAP 49)", cfg.Username)
		}
		return nil, fmt.Errorf("bind as %s: %w", cfg.Username, unwrap(err))
	}
	return &Conn{c: c}, nil
}

// Close ends the connection.
func (c *Conn) Close() { _ = c.c.Close() }

var accountAttributes = []string{"distinguishedName", "objectGUID", "whenCreated", "memberOf"}

// FindComputer returns the computer account named name (sAMAccountName name$) under base, nil
// when there is none. A missing base is an error naming it.
func (c *Conn) FindComputer(base, name string) (*Account, error) {
	return c.findOne(base, fmt.Sprintf("(&(objectCategory=computer)(sAMAccountName=%s))", ldap.EscapeFilter(strings.ToUpper(name)+"$")))
}

// ComputerByGUID returns the computer account with this objectGUID under base, nil when there is
// none (deleted, or moved out of base).
func (c *Conn) ComputerByGUID(base, guid string) (*Account, error) {
	raw, err := guidBytes(guid)
	if err != nil {
		return nil, err
	}
	return c.findOne(base, "(&(objectCategory=computer)(objectGUID="+escapeBytes(raw)+"))")
}

func (c *Conn) findOne(base, filter string) (*Account, error) {
	res, err := c.c.Search(ldap.NewSearchRequest(base, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 2, 0, false,
		filter, accountAttributes, nil))
	switch {
	case ldap.IsErrorWithCode(err, ldap.LDAPResultNoSuchObject):
		return nil, fmt.Errorf("searching %s: it does not exist (LDAP 32)", base)
	case err != nil:
		return nil, fmt.Errorf("searching %s: %w", base, unwrap(err))
	case len(res.Entries) == 0:
		return nil, nil
	case len(res.Entries) > 1:
		return nil, fmt.Errorf("searching %s for %s: %d accounts match", base, filter, len(res.Entries))
	}
	e := res.Entries[0]
	a := &Account{DN: e.DN, MemberOf: e.GetAttributeValues("memberOf")}
	if g := e.GetRawAttributeValue("objectGUID"); len(g) == 16 {
		a.GUID = guidString(g)
	} else {
		return nil, fmt.Errorf("account %s has no objectGUID", e.DN)
	}
	if t, err := ber.ParseGeneralizedTime([]byte(e.GetAttributeValue("whenCreated"))); err == nil {
		a.Created = t
	} else {
		return nil, fmt.Errorf("account %s: whenCreated %q: %w", e.DN, e.GetAttributeValue("whenCreated"), err)
	}
	return a, nil
}

// Delete deletes dn with its child objects (the tree delete control); an object already gone is
// no error.
func (c *Conn) Delete(dn string) error {
	err := c.c.Del(ldap.NewDelRequest(dn, []ldap.Control{ldap.NewControlSubtreeDelete()}))
	switch {
	case err == nil, ldap.IsErrorWithCode(err, ldap.LDAPResultNoSuchObject):
		return nil
	case ldap.IsErrorWithCode(err, ldap.LDAPResultInsufficientAccessRights):
		return fmt.Errorf("deleting %s: access denied (LDAP 50): the account needs Delete and Delete subtree on computer objects in the OU", dn)
	case ldap.IsErrorWithCode(err, ldap.LDAPResultNotAllowedOnNonLeaf):
		return fmt.Errorf("deleting %s: it has child objects and the server refused the tree delete (LDAP 66)", dn)
	}
	return fmt.Errorf("deleting %s: %w", dn, unwrap(err))
}

// AddMember adds member to group; already a member is no error.
func (c *Conn) AddMember(group, member string) error { return c.member(group, member, true) }

// RemoveMember removes member from group; not a member (or the group gone) is no error.
func (c *Conn) RemoveMember(group, member string) error { return c.member(group, member, false) }

func (c *Conn) member(group, member string, add bool) error {
	// Permissive modify: adding a present value or deleting a missing one succeeds.
	m := ldap.NewModifyRequest(group, []ldap.Control{ldap.NewControlString(ldap.ControlTypeMicrosoftPermissiveModify, false, "")})
	verb := "adding %s to %s"
	if add {
		m.Add("member", []string{member})
	} else {
		verb = "removing %s from %s"
		m.Delete("member", []string{member})
	}
	err := c.c.Modify(m)
	switch {
	case err == nil, !add && ldap.IsErrorWithCode(err, ldap.LDAPResultNoSuchObject):
		return nil
	case ldap.IsErrorWithCode(err, ldap.LDAPResultInsufficientAccessRights):
		return fmt.Errorf(verb+": access denied (LDAP 50): the account needs Write Members on the group", member, group)
	case ldap.IsErrorWithCode(err, ldap.LDAPResultNoSuchObject):
		return fmt.Errorf(verb+": the group does not exist (LDAP 32)", member, group)
	}
	return fmt.Errorf(verb+": %w", member, group, unwrap(err))
}

// unwrap keeps an LDAP error's code and message, not go-ldap's packet dump.
func unwrap(err error) error {
	var le *ldap.Error
	if errors.As(err, &le) && le.Err != nil {
		return fmt.Errorf("%w (LDAP %d)", le.Err, le.ResultCode)
	}
	return err
}

// guidString formats an objectGUID: its first three fields are little-endian.
func guidString(b []byte) string {
	return fmt.Sprintf("%08x-%04x-%04x-%x-%x", binary.LittleEndian.Uint32(b[0:4]), binary.LittleEndian.Uint16(b[4:6]),
		binary.LittleEndian.Uint16(b[6:8]), b[8:10], b[10:16])
}

// guidBytes is guidString's inverse.
func guidBytes(s string) ([]byte, error) {
	var a uint32
	var b, c uint16
	var d, e []byte
	if len(s) != 36 {
		return nil, fmt.Errorf("objectGUID %q: not a GUID", s)
	}
	if _, err := fmt.Sscanf(s, "%08x-%04x-%04x-%4x-%12x", &a, &b, &c, &d, &e); err != nil || len(d) != 2 || len(e) != 6 {
		return nil, fmt.Errorf("objectGUID %q: not a GUID", s)
	}
	out := make([]byte, 16)
	binary.LittleEndian.PutUint32(out[0:4], a)
	binary.LittleEndian.PutUint16(out[4:6], b)
	binary.LittleEndian.PutUint16(out[6:8], c)
	copy(out[8:10], d)
	copy(out[10:16], e)
	return out, nil
}

// escapeBytes writes every byte as \xx, for a filter on a binary attribute.
func escapeBytes(b []byte) string {
	var s strings.Builder
	for _, x := range b {
		fmt.Fprintf(&s, `\%02x`, x)
	}
	return s.String()
}
