package userdata

import (
	"testing"
)

// BenchmarkRender measures one node's user data in both formats and reports its gzip size (what
// capwin stores in guestinfo.userdata; the budget is 16 KiB of the 64 KiB per-key limit).
func BenchmarkRender(b *testing.B) {
	for _, format := range []Format{FormatCloudConfig, FormatPowerShell} {
		for name, in := range map[string]Input{"minimal": minimalInput(format), "full": fullInput(format)} {
			b.Run(string(format)+"/"+name, func(b *testing.B) {
				var out []byte
				for b.Loop() {
					var err error
					if out, err = Render(in); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(out)), "bytes")
				b.ReportMetric(float64(len(gzipBytes(b, out))), "gzip-bytes")
			})
		}
	}
}
