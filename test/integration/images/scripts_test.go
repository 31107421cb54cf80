package images_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/capwin/capwin/internal/test/pscheck"
)

// TestProvisioningScripts parses every script of the recipe with the PowerShell grammar, and
// checks how they treat data: no script evaluates text as code, each provisioning script reads
// its values through common.ps1 from settings.json, a download is kept only after its hash
// matched, and every settings field a script reads is one locals.pkr.hcl writes.
func TestProvisioningScripts(t *testing.T) {
	var scripts []string
	for _, sub := range []string{"scripts", "answer"} {
		found, err := filepath.Glob(filepath.Join(dir, sub, "*.ps1"))
		if err != nil {
			t.Fatal(err)
		}
		scripts = append(scripts, found...)
	}
	results, err := pscheck.Files(scripts...)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if len(r.Errors) > 0 {
			t.Errorf("%s does not parse:\n%s", r.File, r)
		}
	}
	fields := settingsFields(t)
	read := regexp.MustCompile(`\$settings\.([A-Za-z0-9]+(?:\.[A-Za-z0-9]+)?)`)
	for _, path := range scripts {
		calls, err := pscheck.Calls(path)
		if err != nil {
			t.Fatal(err)
		}
		base := filepath.Base(path)
		for _, c := range calls {
			if strings.EqualFold(c.Name, "Invoke-Expression") || strings.EqualFold(c.Name, "iex") {
				t.Errorf("%s evaluates text as code (%s)", base, c.Name)
			}
		}
		src, err := os.ReadFile(path) //nolint:gosec // G304: the recipe's scripts
		if err != nil {
			t.Fatal(err)
		}
		provisioning := filepath.Base(filepath.Dir(path)) == "scripts" && base != "common.ps1" && base != "seal.ps1"
		if provisioning && !strings.Contains(string(src), `. 'C:\Windows\Temp\capwin-image\common.ps1'`) {
			t.Errorf("%s does not dot-source common.ps1", base)
		}
		for _, m := range read.FindAllStringSubmatch(string(src), -1) {
			if !slices.Contains(fields, m[1]) {
				t.Errorf("%s reads $settings.%s, which locals.pkr.hcl does not write (it writes %v)", base, m[1], fields)
			}
		}
	}
	calls, err := pscheck.Calls(filepath.Join(dir, "scripts", "common.ps1"))
	if err != nil {
		t.Fatal(err)
	}
	_, hash := pscheck.Find(calls, func(c pscheck.Call) bool { return c.Name == "Get-FileHash" && c.Function == "Get-CapwinFile" })
	_, keep := pscheck.Find(calls, func(c pscheck.Call) bool { return c.Name == "Move-Item" && c.Function == "Get-CapwinFile" })
	if hash < 0 || keep < 0 || hash > keep {
		t.Errorf("Get-CapwinFile: Get-FileHash is call %d, Move-Item call %d: want the hash checked before the file is kept", hash, keep)
	}
}

// settingsFields are the fields of local.settings (and of its objects, as a.b).
func settingsFields(t *testing.T) []string {
	t.Helper()
	r := parseRecipe(t)
	for _, body := range r.files {
		for _, b := range body.Blocks {
			if b.Type != "locals" {
				continue
			}
			a, ok := b.Body.Attributes["settings"]
			if !ok {
				continue
			}
			var fields []string
			var walk func(prefix string, e hclsyntax.Expression)
			walk = func(prefix string, e hclsyntax.Expression) {
				obj, ok := e.(*hclsyntax.ObjectConsExpr)
				if !ok {
					return
				}
				for _, item := range obj.Items {
					key, ok := item.KeyExpr.(*hclsyntax.ObjectConsKeyExpr)
					if !ok {
						continue
					}
					name := hcl.ExprAsKeyword(key.Wrapped)
					fields = append(fields, prefix+name)
					if prefix == "" {
						walk(name+".", item.ValueExpr)
					}
				}
			}
			walk("", a.Expr)
			return fields
		}
	}
	t.Fatal("locals.pkr.hcl has no settings")
	return nil
}
