package windowsconfig_test

import (
	. "github.com/onsi/gomega"

	"github.com/capwin/capwin/internal/test/metrics"
)

// tokenOps reads capwin_bootstrap_tokens_total of one operation (issue, refresh, revoke).
func tokenOps(g Gomega, op string) float64 {
	v, err := metrics.Value("capwin_bootstrap_tokens_total", map[string]string{"operation": op})
	g.Expect(err).NotTo(HaveOccurred())
	return v
}
