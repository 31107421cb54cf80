package session

import (
	"testing"

	"github.com/vmware/govmomi/vim25/methods"
)

func TestMethod(t *testing.T) {
	if got := Method(&methods.RetrievePropertiesExBody{}); got != "RetrievePropertiesEx" {
		t.Errorf("Method = %q, want RetrievePropertiesEx", got)
	}
}
