package hyperv

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
)

func TestClaim(t *testing.T) {
	const uid, other = "11111111-2222-3333-4444-555555555555", "99999999-8888-7777-6666-555555555555"
	ownDisk := []wire.DiskView{{Path: `C:\ProgramData\capwin\disks\` + uid + ".vhdx", Controller: "SCSI"}}
	for _, tc := range []struct {
		name     string
		view     wire.View
		uids     []string
		owned    bool
		complete bool
	}{
		{"created for the object", wire.View{Notes: "capwin-uid:" + uid + "\ncapwin-owner:ns/m\ncapwin-complete:" + uid}, []string{uid}, true, true},
		{"guest run line after complete", wire.View{Notes: "capwin-uid:" + uid + "\ncapwin-owner:ns/m\ncapwin-complete:" + uid + "\ncapwin-guest-run:pid=4"}, []string{uid}, true, true},
		{"settings not all written", wire.View{Notes: "capwin-uid:" + uid + "\ncapwin-owner:ns/m"}, []string{uid}, true, false},
		{"complete line of another UID", wire.View{Notes: "capwin-uid:" + uid + "\ncapwin-owner:ns/m\ncapwin-complete:" + other}, []string{uid}, true, false},
		{"before the notes, found by disk", wire.View{Disks: ownDisk}, []string{uid}, true, false},
		{"older capwin, uid line only", wire.View{Notes: "capwin-uid:" + uid}, []string{uid}, true, true},
		{"moved: recorded UID", wire.View{Notes: "capwin-uid:" + other + "\ncapwin-owner:ns/x\ncapwin-complete:" + other}, []string{uid, other}, true, true},
		{"moved: namespace/name", wire.View{Notes: "capwin-uid:" + other + "\ncapwin-owner:ns/m\ncapwin-complete:" + other}, []string{uid}, true, true},
		{"no mark", wire.View{Notes: "SQL server", Disks: []wire.DiskView{{Path: `D:\sql.vhdx`}}}, []string{uid}, false, false},
		{"no notes, foreign disk named like the UID elsewhere", wire.View{Disks: []wire.DiskView{{Path: `D:\` + other + ".vhdx"}}}, []string{uid}, false, false},
		{"another object's", wire.View{Notes: "capwin-uid:" + other + "\ncapwin-owner:ns/x\ncapwin-complete:" + other}, []string{uid}, false, true},
		{"another object's, own disk attached", wire.View{Notes: "capwin-uid:" + other, Disks: ownDisk}, []string{uid}, false, true},
		{"another namespace, same name", wire.View{Notes: "capwin-uid:" + other + "\ncapwin-owner:ns2/m\ncapwin-complete:" + other}, []string{uid}, false, true},
		{"empty UIDs never match", wire.View{Notes: "capwin-owner:ns/x"}, []string{""}, false, false},
		{"Windows line breaks", wire.View{Notes: "capwin-uid:" + uid + "\r\ncapwin-owner:ns/m\r\ncapwin-complete:" + uid}, []string{uid}, true, true},
		{"a mark within a line is no mark", wire.View{Notes: "admin note capwin-uid:" + uid + "\n capwin-owner:ns/m"}, []string{uid}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			m, why := claim(&tc.view, tc.uids, "ns/m")
			g.Expect(why == "").To(Equal(tc.owned), why)
			g.Expect(m.complete).To(Equal(tc.complete))
		})
	}
}
