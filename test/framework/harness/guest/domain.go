package guest

import (
	"fmt"
	"strings"
	"sync"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
)

// DomainController stands for an Active Directory domain the guests can join: it knows one
// account allowed to join computers and the OUs that exist, and keeps the computer accounts the
// joins create (Add-Computer's effect on the domain). Deleting a VM leaves its account, as in AD.
type DomainController struct {
	Name               string // DNS name, e.g. corp.example.com
	Address            string // IP of its DNS service, which a node's DNS servers must include when set
	Username, Password string
	OUs                []string // distinguished names of the OUs (the default container always exists)

	mu       sync.Mutex
	accounts map[string]string // computer name (upper case) -> OU ("" = Computers)
}

// Accounts returns the computer accounts by name (upper case) with their OU.
func (dc *DomainController) Accounts() map[string]string {
	dc.mu.Lock()
	defer dc.mu.Unlock()
	out := make(map[string]string, len(dc.accounts))
	for k, v := range dc.accounts {
		out[k] = v
	}
	return out
}

// join is Add-Computer against this domain, with its error messages.
func (dc *DomainController) join(computer string, d *userdata.DocDomain) error {
	if !strings.EqualFold(d.Username, dc.Username) && !strings.EqualFold(d.Username, dc.Name+`\`+dc.Username) ||
		d.Password != dc.Password {
		return fmt.Errorf("Computer '%s' failed to join domain '%s' from its current workgroup 'WORKGROUP' with following error message: The user name or password is incorrect.", computer, d.Name) //nolint:revive,staticcheck // Add-Computer's own words
	}
	if d.OrganizationalUnit != "" && !containsFold(dc.OUs, d.OrganizationalUnit) {
		return fmt.Errorf("Computer '%s' failed to join domain '%s' from its current workgroup 'WORKGROUP' with following error message: The system cannot find the file specified.", computer, d.Name) //nolint:revive,staticcheck // Add-Computer's own words
	}
	dc.mu.Lock()
	defer dc.mu.Unlock()
	if dc.accounts == nil {
		dc.accounts = map[string]string{}
	}
	dc.accounts[strings.ToUpper(computer)] = d.OrganizationalUnit
	return nil
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// joinDomain is the script's domain step: nothing without a domain, nothing once a member; the
// domain must be reachable through the node's DNS servers; a join restarts the computer.
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
	if err := dc.join(computer, d); err != nil {
		return fmt.Errorf("joining domain %s was refused: %w", d.Name, err)
	}
	s.domain = d.Name
	return &rebootRequest{reason: "joined domain " + d.Name + " as " + computer}
}
