package userdata

import (
	"bytes"
	"compress/gzip"
	"reflect"
	"testing"
)

// FuzzUnpack: any user data (a rendered one, a user-provided data Secret's, a damaged one) is
// taken apart as cloudbase-init does or rejected with an error; gzip changes nothing.
func FuzzUnpack(f *testing.F) {
	for _, format := range []Format{FormatPowerShell, FormatCloudConfig} {
		out, err := Render(minimalInput(format))
		if err != nil {
			f.Fatal(err)
		}
		// The static script body is the same every time; a short one keeps the inputs small.
		f.Add(bytes.Replace(out, []byte(bootstrapScript), []byte("Write-Output 1\r\n"), 1))
	}
	f.Add([]byte("#ps1_sysnative\n$CapwinData = 'e30='\nWrite-Output 1\n"))
	f.Add([]byte("Content-Type: multipart/mixed; boundary=\"x\"\n\n--x\nContent-Type: text/x-shellscript\n\n--x--\n"))
	f.Add([]byte{0x1f, 0x8b, 0x08})
	f.Fuzz(func(t *testing.T, userData []byte) {
		u, err := Unpack(userData)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("error without a message")
			}
			return
		}
		if data, err := ExtractData(u.Script); err != nil || !bytes.Equal(data, u.Data) {
			t.Fatalf("data %q does not come from the script: %q, %v", u.Data, data, err)
		}
		_, _ = DecodeDocument(u.Data) // any bytes: a document or an error, never a panic
		if bytes.HasPrefix(userData, []byte{0x1f, 0x8b}) {
			return
		}
		var gz bytes.Buffer
		w := gzip.NewWriter(&gz)
		_, _ = w.Write(userData)
		_ = w.Close()
		if again, err := Unpack(gz.Bytes()); err != nil || !reflect.DeepEqual(again, u) {
			t.Fatalf("gzipped, it unpacks as %+v, %v", again, err)
		}
	})
}
