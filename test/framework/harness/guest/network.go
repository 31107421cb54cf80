package guest

import (
	"encoding/json"
	"fmt"
	"slices"

	infraguest "github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/test/framework/guestnet"
)

// applyNetwork is the network step: Set-Network with the network document the hypervisor
// delivered, or nothing without one (cloudbase-init's configuration stays).
func (s *script) applyNetwork() error {
	raw := s.g.cfg.Network
	if raw == nil {
		s.log("no capwin network document: the network stays as cloudbase-init left it")
		return nil
	}
	var doc infraguest.NetworkDocument
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("capwin network document: %w", err) // ConvertFrom-Json fails the step too
	}
	var hasMAC func(string) bool
	if s.g.cfg.MACs != nil {
		hasMAC = func(mac string) bool {
			return slices.ContainsFunc(s.g.cfg.MACs, func(m string) bool { return infraguest.NormalizeMAC(m) == mac })
		}
	}
	s.g.mu.Lock()
	defer s.g.mu.Unlock()
	return s.g.network.Apply(doc.NetworkSettings, hasMAC)
}

// Network is the guest's network configuration as its network step left it.
func (g *Guest) Network() guestnet.Network {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.network
}
