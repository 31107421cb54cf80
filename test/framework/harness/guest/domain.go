package guest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	"github.com/capwin/capwin/internal/test/adsim"
)

// DomainController stands for an Active Directory domain the guests can join: it knows one
// account allowed to join computers and the OUs that exist, and keeps the computer accounts the
// joins create (Add-Computer's effect on the domain). Deleting a VM leaves its account, as in AD.
// Once Serve has run, the accounts live in an LDAPS directory the bootstrap manager can reach.
type DomainController struct {
	Name               string // DNS name, e.g. corp.example.com
	Address            string // IP of its DNS service, which a node's DNS servers must include when set
	Username, Password string
	OUs                []string // distinguished names of the OUs (the default container always exists)

	mu       sync.Mutex
	accounts map[string]account // by computer name (upper case)
	dir      *adsim.Directory
}

type account struct {
	ou      string
	created time.Time
}

// Serve starts an LDAPS directory of this domain with its OUs and join account (adsim); from
// then on joins create their accounts there. The caller adds the groups and the manager's
// account, and stops it.
func (dc *DomainController) Serve() (*adsim.Directory, error) {
	d, err := adsim.Start(dc.Name, adsim.Options{})
	if err != nil {
		return nil, err
	}
	for _, ou := range dc.OUs {
		parts := strings.Split(strings.TrimSuffix(ou, ","+d.BaseDN), ",")
		for i := len(parts) - 1; i >= 0; i-- { // parents first
			d.AddOU(strings.Join(parts[i:], ",") + "," + d.BaseDN)
		}
	}
	_, user, _ := strings.Cut(dc.Username, `\`)
	d.AddUser(adsim.User{Name: user, Password: dc.Password, JoinOUs: dc.OUs})
	dc.mu.Lock()
	dc.dir = d
	dc.mu.Unlock()
	return d, nil
}

// Accounts returns the computer accounts by name (upper case) with their OU.
func (dc *DomainController) Accounts() map[string]string {
	dc.mu.Lock()
	defer dc.mu.Unlock()
	out := make(map[string]string, len(dc.accounts))
	for k, v := range dc.accounts {
		out[k] = v.ou
	}
	return out
}

func (dc *DomainController) directory() *adsim.Directory {
	dc.mu.Lock()
	defer dc.mu.Unlock()
	return dc.dir
}

// lookup is Find-ComputerAccount: the DN and creation time of the account of a computer name.
func (dc *DomainController) lookup(computer string) (string, time.Time, bool) {
	if d := dc.directory(); d != nil {
		e := d.Computer(computer)
		if e == nil {
			return "", time.Time{}, false
		}
		created, err := time.Parse("20060102150405.0Z", e.Attrs["whencreated"][0])
		return e.DN, created, err == nil
	}
	dc.mu.Lock()
	defer dc.mu.Unlock()
	a, ok := dc.accounts[strings.ToUpper(computer)]
	return "CN=" + strings.ToUpper(computer) + "," + a.ou, a.created, ok
}

// memberOf is the account's groups, as the computer reads them after its join.
func (dc *DomainController) memberOf(computer string) []string {
	if d := dc.directory(); d != nil {
		if e := d.Computer(computer); e != nil {
			return e.Attrs["memberof"]
		}
	}
	return nil
}

// join is Add-Computer against this domain, with its error messages.
func (dc *DomainController) join(computer string, d *userdata.DocDomain) error {
	const failed = "Computer '%s' failed to join domain '%s' from its current workgroup 'WORKGROUP' with following error message: %s"
	if !strings.EqualFold(d.Username, dc.Username) && !strings.EqualFold(d.Username, dc.Name+`\`+dc.Username) ||
		d.Password != dc.Password {
		return fmt.Errorf(failed, computer, d.Name, "The user name or password is incorrect.") //nolint:staticcheck // Add-Computer's own words
	}
	if d.OrganizationalUnit != "" && !containsFold(dc.OUs, d.OrganizationalUnit) {
		return fmt.Errorf(failed, computer, d.Name, "The system cannot find the file specified.") //nolint:staticcheck // Add-Computer's own words
	}
	if dir := dc.directory(); dir != nil {
		if _, err := dir.Join(computer, d.OrganizationalUnit, d.Username, d.Password); err != nil {
			return fmt.Errorf(failed, computer, d.Name, err.Error()) //nolint:staticcheck // Add-Computer's own words
		}
	}
	dc.mu.Lock()
	defer dc.mu.Unlock()
	if dc.accounts == nil {
		dc.accounts = map[string]account{}
	}
	if _, ok := dc.accounts[strings.ToUpper(computer)]; !ok {
		dc.accounts[strings.ToUpper(computer)] = account{ou: d.OrganizationalUnit, created: time.Now().UTC().Truncate(time.Second)}
	}
	return nil
}

func containsFold(list []string, s string) bool {
	return slices.ContainsFunc(list, func(x string) bool { return strings.EqualFold(x, s) })
}

// joinDomain is the script's domain step: nothing without a domain, nothing once a member; the
// domain must be reachable through the node's DNS servers; an account of the computer's name older
// than the Machine stops it unless reuse is allowed; a join restarts the computer.
func (s *script) joinDomain() error {
	d := s.doc.Domain
	if d == nil {
		return nil
	}
	if s.domain != "" && strings.EqualFold(s.domain, d.Name) {
		s.log("the computer is a member of " + d.Name)
		return nil
	}
	dc := s.g.cfg.Domain
	reachable := dc != nil && strings.EqualFold(dc.Name, d.Name) && (len(d.DNSServers) == 0 || containsFold(d.DNSServers, dc.Address))
	computer := strings.ToUpper(s.g.cfg.Hostname)
	if !reachable {
		return fmt.Errorf("joining domain %s was refused: Computer '%s' failed to join domain '%s' from its current workgroup 'WORKGROUP' with following error message: The specified domain either does not exist or could not be contacted.", d.Name, computer, d.Name) //nolint:revive,staticcheck // Add-Computer's own words
	}
	if dn, created, ok := dc.lookup(computer); ok {
		if notBefore, err := time.Parse(time.RFC3339, d.AccountNotBefore); err == nil && !d.ReuseAccount && created.Before(notBefore) {
			return fmt.Errorf("the domain already has a computer account named %s (%s, created %s), older than this Machine: a stale account of an earlier node, or another computer's. The join does not reuse it: delete the account, or set activeDirectory.computerAccounts.reuse: Allow",
				computer, dn, created.UTC().Format("2006-01-02 15:04:05Z"))
		}
		s.log("joining with the existing computer account " + dn)
	}
	if err := dc.join(computer, d); err != nil {
		return fmt.Errorf("joining domain %s was refused: %w", d.Name, err)
	}
	s.domain = d.Name
	return &rebootRequest{reason: "joined domain " + d.Name + " as " + computer}
}

// groupPoll is how often the script reads its account's groups.
const groupPoll = 200 * time.Millisecond

// waitGroups is the script's domainGroups step: it waits, up to groupWaitSeconds, until the
// bootstrap manager has put the computer's account in every group, then purges its tickets.
func (s *script) waitGroups(ctx context.Context) error {
	d := s.doc.Domain
	if d == nil || len(d.Groups) == 0 {
		return nil
	}
	computer := strings.ToUpper(s.g.cfg.Hostname)
	deadline := time.Now().Add(time.Duration(d.GroupWaitSeconds) * time.Second)
	for said := false; ; said = true {
		memberOf := s.g.cfg.Domain.memberOf(computer)
		missing := slices.DeleteFunc(slices.Clone(d.Groups), func(g string) bool { return containsFold(memberOf, g) })
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			s.log(fmt.Sprintf("not a member of %s after %d s: going on", strings.Join(missing, "; "), d.GroupWaitSeconds))
			return nil
		}
		if !said {
			msg := fmt.Sprintf("waiting for the bootstrap manager to add %s to %s", computer, strings.Join(missing, "; "))
			s.log(msg)
			s.send(ctx, "domainGroups", "Running", msg)
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), errors.New("stopped while waiting for the groups"))
		case <-time.After(groupPoll):
		}
	}
	s.log(fmt.Sprintf("member of %s; the computer's Kerberos tickets were purged", strings.Join(d.Groups, "; ")))
	return nil
}
