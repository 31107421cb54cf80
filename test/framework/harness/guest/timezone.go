package guest

import (
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // cloudbase-init knows the IANA names wherever this simulation runs
)

// setTimezone is Set-TimeZone -Id: Windows knows its own ids only ("W. Europe Standard Time"),
// none of which contains a '/', unlike every IANA name but "UTC".
func (g *Guest) setTimezone(id string) error {
	if strings.Contains(id, "/") {
		return fmt.Errorf("Set-TimeZone: Time zone ID '%s' was not found on the local computer", id)
	}
	g.storeTimezone(id)
	return nil
}

// setTimezoneFromIANA is cloudbase-init's set_timezone: it takes an IANA name only and maps it
// to the Windows id itself.
func (g *Guest) setTimezoneFromIANA(name string) error {
	if name == "" {
		return nil
	}
	if _, err := time.LoadLocation(name); err != nil {
		return fmt.Errorf("set_timezone: The given timezone name is unrecognised: %q", name)
	}
	g.storeTimezone("(the Windows id of " + name + ")") // the mapping itself is not simulated
	return nil
}

func (g *Guest) storeTimezone(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.timezone = id
}

// Timezone is the Windows time zone id the guest was set to ("" when nothing set it).
func (g *Guest) Timezone() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.timezone
}
