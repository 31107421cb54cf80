package pscheck

import "testing"

func TestParserAcceptsValidAndRejectsBrokenScript(t *testing.T) {
	cases := []struct {
		name, src string
		ok        bool
	}{
		{"hashtable and if", "$x = @{ a = 1 }\nif ($x.a -eq 1) { Write-Host \"ok $($x.a)\" }\n", true},
		{"function with param", "function Get-A {\n  param([string]$Name)\n  return $Name.ToUpper()\n}\n", true},
		{"try catch", "try { throw 'x' } catch { $_.Exception.Message } finally { }\n", true},
		{"unclosed brace", "if ($true) {\n  Write-Host 'x'\n", false},
		{"unclosed paren", "if ($x { }\n", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Source(tc.name+".ps1", tc.src)
			if err != nil {
				t.Fatal(err)
			}
			if ok := len(res.Errors) == 0; ok != tc.ok {
				t.Fatalf("parsed ok=%v, want %v\n%s", ok, tc.ok, res)
			}
		})
	}
}
