package session

import (
	"crypto/tls"
	"net/http"
)

// TransferClient is an HTTP client for guest file transfers to an ESX host: pinned to the
// thumbprint vCenter gave for that host, else trusting what the vCenter connection trusts.
func (sess *Session) TransferClient(host string) *http.Client {
	thumb := sess.Client.Client.Thumbprint(host)
	if thumb == "" {
		return &sess.Client.Client.Client
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{InsecureSkipVerify: true, VerifyConnection: pinned(thumb, "ESX host "+host)} //nolint:gosec // verified by pinned
	return &http.Client{Transport: t}
}
