package vcenter

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/vapi/rest"
	"github.com/vmware/govmomi/vapi/tags"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/soap"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// TestForbiddenAttach: an attach vCenter refuses with 403 names the tagging privileges.
func TestForbiddenAttach(t *testing.T) {
	g := NewWithT(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusForbidden) }))
	t.Cleanup(srv.Close)
	u, err := soap.ParseURL(srv.URL)
	g.Expect(err).NotTo(HaveOccurred())
	rc := rest.NewClient(&vim25.Client{Client: soap.NewClient(u, true)})
	err = tags.NewManager(rc).AttachMultipleTagsToObject(context.Background(), []string{"urn:vmomi:InventoryServiceTag:x:GLOBAL"}, vmRef("vm-1"))
	g.Expect(err).To(HaveOccurred())
	g.Expect(forbidden(err)).To(And(ContainSubstring("lacks InventoryService.Tagging.AttachTag on the tags or ObjectAttachable on the VM"),
		ContainSubstring("docs/vcenter/install.md")))
	g.Expect(forbidden(errors.New("500 Internal Server Error"))).To(BeEmpty())
}

// TestReported: status covers the spec only with every pair, its id, and nothing else.
func TestReported(t *testing.T) {
	g := NewWithT(t)
	a, b := infrav1.VCenterTag{Category: "c", Name: "a"}, infrav1.VCenterTag{Category: "c", Name: "b"}
	st := func(ids ...string) []infrav1.VCenterTagStatus {
		var out []infrav1.VCenterTagStatus
		for i, id := range ids {
			t := []infrav1.VCenterTag{a, b}[i]
			out = append(out, infrav1.VCenterTagStatus{Category: t.Category, Name: t.Name, ID: id})
		}
		return out
	}
	g.Expect(reported(nil, nil)).To(BeTrue())
	g.Expect(reported([]infrav1.VCenterTag{a, b}, st("1", "2"))).To(BeTrue())
	g.Expect(reported([]infrav1.VCenterTag{b, a}, st("1", "2"))).To(BeTrue(), "order does not matter")
	g.Expect(reported([]infrav1.VCenterTag{a, b}, st("1"))).To(BeFalse())
	g.Expect(reported([]infrav1.VCenterTag{a, b}, st("1", ""))).To(BeFalse())
	g.Expect(reported([]infrav1.VCenterTag{a}, st("1", "2"))).To(BeFalse())
}
