// Package adsim is an Active Directory domain controller for tests: an in-memory directory of
// OUs, groups and computer accounts, served over LDAPS (or LDAP with StartTLS) with a private CA by
// github.com/jimlambrt/gldap. It keeps AD's rules that capwin relies on: a simple bind needs TLS
// and the right password; an account acts only where it was given the right (create computers in
// an OU, delete computer objects in an OU, write a group's members); a computer object with
// children is deleted only with the tree delete control; member and memberOf are linked, and a
// deleted account leaves its groups; the permissive modify control makes a present or missing
// member no error.
package adsim

import (
	"crypto/rand"
	"crypto/tls"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/jimlambrt/gldap"
)

// Control OIDs the directory honours.
const (
	treeDeleteOID       = "1.2.840.113556.1.4.805"
	permissiveModifyOID = "1.2.840.113556.1.4.1413"
)

// User is an account that can bind, with the rights delegated to it.
type User struct {
	// Name is the sAMAccountName; DOMAIN\Name and Name@domain both bind.
	Name, Password string
	// JoinOUs are the OUs it may create computer objects in (Add-Computer).
	JoinOUs []string
	// DeleteOUs are the OUs whose computer objects (and their subtrees) it may delete.
	DeleteOUs []string
	// WriteMembers are the groups whose members it may change.
	WriteMembers []string
}

// Entry is one object: its DN and attributes (names lower case).
type Entry struct {
	DN    string
	Attrs map[string][]string
}

// Directory is the running domain controller.
type Directory struct {
	Domain string // DNS name, e.g. corp.example.com
	BaseDN string // DC=corp,DC=example,DC=com
	URL    string // ldaps://127.0.0.1:PORT, or ldap://… with StartTLS
	CA     []byte // PEM of the CA that signs the server's certificate

	srv       *gldap.Server
	serverTLS *tls.Config

	mu      sync.Mutex
	entries map[string]*Entry // by lower-case DN
	users   map[string]*User  // by lower-case bind name (both forms)
	bound   map[int]*User     // by connection
	secure  map[int]bool      // connections that completed StartTLS
	netbios string
	now     func() time.Time
}

// Options change how the directory listens.
type Options struct {
	// StartTLS serves ldap:// and refuses a bind before StartTLS (ldaps:// otherwise).
	StartTLS bool
}

// Start serves a domain on 127.0.0.1 until Stop.
func Start(domain string, opts Options) (*Directory, error) {
	ca, serverTLS, err := newCA()
	if err != nil {
		return nil, err
	}
	d := &Directory{Domain: domain, BaseDN: "DC=" + strings.ReplaceAll(domain, ".", ",DC="), CA: ca, serverTLS: serverTLS,
		entries: map[string]*Entry{}, users: map[string]*User{}, bound: map[int]*User{}, secure: map[int]bool{},
		netbios: strings.ToUpper(strings.Split(domain, ".")[0]), now: time.Now}
	d.put(d.BaseDN, map[string][]string{"objectclass": {"domainDNS"}})
	d.put("CN=Computers,"+d.BaseDN, map[string][]string{"objectclass": {"container"}})
	mux, err := d.routes(opts.StartTLS)
	if err != nil {
		return nil, err
	}
	d.srv, err = gldap.NewServer(gldap.WithLogger(hclog.NewNullLogger()))
	if err != nil {
		return nil, err
	}
	if err := d.srv.Router(mux); err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	_ = l.Close()
	runOpts, scheme := []gldap.Option{gldap.WithTLSConfig(serverTLS)}, "ldaps"
	if opts.StartTLS {
		runOpts, scheme = nil, "ldap"
	}
	errc := make(chan error, 1)
	go func() { errc <- d.srv.Run(addr, runOpts...) }()
	for deadline := time.Now().Add(10 * time.Second); !d.srv.Ready(); time.Sleep(10 * time.Millisecond) {
		select {
		case err := <-errc:
			return nil, fmt.Errorf("adsim: %w", err)
		default:
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("adsim: not serving on %s after 10s", addr)
		}
	}
	d.URL = scheme + "://" + addr
	return d, nil
}

// Stop ends the server.
func (d *Directory) Stop() { _ = d.srv.Stop() }

// AddUser adds an account that can bind.
func (d *Directory) AddUser(u User) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.users[strings.ToLower(d.netbios+`\`+u.Name)] = &u
	d.users[strings.ToLower(u.Name+"@"+d.Domain)] = &u
}

// AddOU adds an organizational unit (its parent must exist).
func (d *Directory) AddOU(dn string) { d.add(dn, "organizationalUnit", nil) }

// AddGroup adds a security group.
func (d *Directory) AddGroup(dn string) { d.add(dn, "group", nil) }

// AddComputer adds a computer account as a join would, created at the given time (an account
// left by an earlier node, or another computer's), and returns its DN.
func (d *Directory) AddComputer(name, ou string, created time.Time) string {
	dn := "CN=" + strings.ToUpper(name) + "," + ou
	guid := make([]byte, 16)
	_, _ = rand.Read(guid)
	d.add(dn, "computer", map[string][]string{
		"samaccountname": {strings.ToUpper(name) + "$"}, "objectcategory": {"computer"},
		"objectguid": {string(guid)}, "whencreated": {created.UTC().Format("20060102150405.0Z")},
	})
	return dn
}

// AddChild adds an object under parent, e.g. a BitLocker recovery object
// (msFVE-RecoveryInformation) under a computer.
func (d *Directory) AddChild(parent, rdn, class string) string {
	dn := rdn + "," + parent
	d.add(dn, class, nil)
	return dn
}

// Join is Add-Computer's effect on the domain: with the join account's name and password, the
// computer's account is created in ou (the Computers container when empty), or an existing account
// of that name is reused. It returns the account's DN or Add-Computer's error text.
func (d *Directory) Join(name, ou, username, password string) (string, error) {
	if ou == "" {
		ou = "CN=Computers," + d.BaseDN
	}
	u := d.user(username)
	if u == nil || u.Password != password {
		return "", fmt.Errorf("The user name or password is incorrect.") //nolint:revive,staticcheck // Add-Computer's own words
	}
	if e := d.Computer(name); e != nil {
		return e.DN, nil
	}
	if d.Get(ou) == nil {
		return "", fmt.Errorf("The system cannot find the file specified.") //nolint:revive,staticcheck // Add-Computer's own words
	}
	if !under(ou, u.JoinOUs) {
		return "", fmt.Errorf("Access is denied.") //nolint:revive,staticcheck // Add-Computer's own words
	}
	return d.AddComputer(name, ou, d.now()), nil
}

// Get returns a copy of the object at dn, nil when there is none.
func (d *Directory) Get(dn string) *Entry {
	d.mu.Lock()
	defer d.mu.Unlock()
	if e := d.entries[strings.ToLower(dn)]; e != nil {
		return e.copy()
	}
	return nil
}

// Computer returns a copy of the computer account named name, nil when there is none.
func (d *Directory) Computer(name string) *Entry {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, e := range d.entries {
		if e.has("samaccountname", strings.ToUpper(name)+"$") {
			return e.copy()
		}
	}
	return nil
}

// Computers returns the computer accounts' DNs.
func (d *Directory) Computers() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for _, e := range d.entries {
		if e.has("objectcategory", "computer") {
			out = append(out, e.DN)
		}
	}
	return out
}

// Members returns a group's members.
func (d *Directory) Members(group string) []string {
	if e := d.Get(group); e != nil {
		return e.Attrs["member"]
	}
	return nil
}

func (d *Directory) user(name string) *User {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.users[strings.ToLower(name)]
}

func (d *Directory) add(dn, class string, attrs map[string][]string) {
	if attrs == nil {
		attrs = map[string][]string{}
	}
	attrs["objectclass"] = []string{class}
	attrs["distinguishedname"] = []string{dn}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.put(dn, attrs)
}

func (d *Directory) put(dn string, attrs map[string][]string) {
	d.entries[strings.ToLower(dn)] = &Entry{DN: dn, Attrs: attrs}
}

func (e *Entry) copy() *Entry {
	c := &Entry{DN: e.DN, Attrs: map[string][]string{}}
	for k, v := range e.Attrs {
		c.Attrs[k] = append([]string(nil), v...)
	}
	return c
}

func (e *Entry) has(attr, value string) bool {
	for _, v := range e.Attrs[attr] {
		if strings.EqualFold(v, value) {
			return true
		}
	}
	return false
}

// under reports whether dn is one of dns or inside one of them.
func under(dn string, dns []string) bool {
	for _, p := range dns {
		if strings.EqualFold(dn, p) || strings.HasSuffix(strings.ToLower(dn), ","+strings.ToLower(p)) {
			return true
		}
	}
	return false
}
